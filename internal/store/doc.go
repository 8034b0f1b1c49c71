// Package store implements checkout.Store on SQL databases. One
// implementation serves SQLite (internal/store/sqlite) and PostgreSQL
// (internal/store/postgres): the queries are written once in the SQL both
// understand, and a Dialect carries what differs (row locks, error codes,
// migrations). The conformance suite in internal/store/storetest holds both
// to the same behaviour.
package store
