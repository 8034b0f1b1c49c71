// Package checkout is the domain of checkoutd: merchants (stores), API keys,
// checkout sessions, their validation and state machine, and the events that
// report state changes.
//
// The package does no I/O. Validation and transitions are pure functions of
// their inputs and of the time they are given, so they are unit-tested without
// a database, a network or a clock. Storage is described by the Store
// interface, implemented in internal/store.
package checkout
