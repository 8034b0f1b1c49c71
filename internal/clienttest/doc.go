// Package clienttest holds the Go client's tests against a real checkoutd
// (internal/app behind httptest, on SQLite and PostgreSQL). They live here,
// in the server's module, because the client's module
// (github.com/checkoutd/checkoutd/client, in client/) depends on nothing:
// its tests cannot start a checkoutd, and what starting one needs must not
// reach a merchant's go.sum. The client's own tests, which need the standard
// library alone, stay in client/.
//
// The package has no code: its tests are external tests of the client,
// which use its exported API as a merchant does.
package clienttest
