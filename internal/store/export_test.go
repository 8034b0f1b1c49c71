package store

// SetClaimHook makes DeliveryClaim call fn between reading its candidates
// and leasing them, so that a test can change the rows in between, as
// another node would.
func SetClaimHook(db *DB, fn func()) { db.claimHook = fn }

// SetPurgeBatch makes the purges of db delete at most n rows per batch and
// call hook after each batch, with no transaction open.
func SetPurgeBatch(db *DB, n int, hook func(table string, deleted int64)) {
	db.purgeBatch, db.purgeHook = n, hook
}
