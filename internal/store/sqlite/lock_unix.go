//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// lockToServe takes an exclusive flock on the database file at path
// without waiting, and returns what releases it. flock's locks are not
// the fcntl locks SQLite takes on the same file, and neither sees the
// other. The descriptor stays open until the store has closed: closing any
// descriptor of a file drops every fcntl lock the process holds on it,
// SQLite's included.
func lockToServe(path string) (unlock func() error, locked bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, false, lockError(path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, ErrServed
		}
		return nil, false, lockError(path, err)
	}
	return f.Close, true, nil // closing the file releases the lock
}
