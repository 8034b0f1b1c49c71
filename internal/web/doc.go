// Package web is the HTTP plumbing that every part of checkoutd's HTTP
// surface shares: the JSON envelope and the one table from error codes to
// statuses, request ids, the request's logger, and the log handler that
// redacts secrets. The merchant API (internal/api), the payment page
// (internal/page) and the server's middleware (internal/server) build on it.
package web
