// Package webhook delivers events to merchants' HTTPS endpoints: the rules
// for which URLs and addresses may be reached (guard.go), the HTTP client
// that enforces them at every connection, and the dispatcher that claims due
// deliveries from the database, signs and sends them, and records every
// attempt.
//
// Delivery is at least once. The deliveries table is the queue: a worker
// leases a due delivery before its attempt, so several checkoutd processes
// share the work and each attempt runs once; a process that dies mid-attempt
// loses nothing, since its lease runs out and the delivery is claimed again.
package webhook
