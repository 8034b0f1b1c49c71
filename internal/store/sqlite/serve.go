package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/checkoutd/checkoutd/internal/store"
)

// ErrServed is the error of OpenToServe when another process serves the
// file already.
var ErrServed = errors.New("another checkoutd serve has this SQLite database open; " +
	"a SQLite database is served by one process (stop the other, or use PostgreSQL to run several)")

// OpenToServe opens the database at path, as Open does, for the one
// process that serves it (`checkoutd serve`), and fails with ErrServed
// when another holds it: it keeps an exclusive lock on the file (flock,
// beside SQLite's own locks, which it does not touch) until the store is
// closed. Owning the file, the process is the only one that writes
// sessions (the other commands never do), so the store keeps the sessions
// it reads in memory (store.DB.CacheSessions). Where the system has no
// such lock, it opens the file as Open does, without the cache.
func OpenToServe(ctx context.Context, path string) (*store.DB, error) {
	// The lock before the store: a second serve must not even migrate.
	if err := makeDir(path); err != nil {
		return nil, err
	}
	if err := private(path); err != nil { // the file to lock, made as Open makes it
		return nil, err
	}
	unlock, locked, err := lockToServe(path)
	if err != nil {
		return nil, err
	}
	db, err := Open(ctx, path)
	if err != nil {
		unlock()
		return nil, err
	}
	db.AfterClose(unlock) // once SQLite's connections have closed: see lockToServe
	if locked {
		db.CacheSessions(store.SessionCacheBytes)
	}
	return db, nil
}

// lockError wraps the lock's failure.
func lockError(path string, err error) error {
	return fmt.Errorf("lock %s: %w", path, err)
}
