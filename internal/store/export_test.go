package store

// SetClaimHook makes DeliveryClaim call fn between reading its candidates
// and leasing them, so that a test can change the rows in between, as
// another node would.
func SetClaimHook(db *DB, fn func()) { db.claimHook = fn }
