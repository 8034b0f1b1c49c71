// Package sqlite opens checkoutd's store on an embedded SQLite file, through
// modernc.org/sqlite (pure Go, no cgo).
//
// The file runs in WAL mode with synchronous=FULL: what was acknowledged to a
// buyer or merchant survives a power loss. Writes go through one connection
// whose transactions begin IMMEDIATE, so writers queue in Go instead of
// failing with SQLITE_BUSY; reads use a pool of read-only connections that
// WAL lets run beside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

//go:embed requestlogs/*.sql
var requestLogMigrations embed.FS

// Open opens (creating it when missing) the SQLite database at path and
// applies pending migrations. The request logs are kept in a file of their
// own beside it, RequestLogsPath(path) (store.DB.SetRequestLogs says why).
// Every file, with its WAL and shared-memory files, is made readable by
// its owner alone (0600).
func Open(ctx context.Context, path string) (*store.DB, error) {
	if err := makeDir(path); err != nil {
		return nil, err
	}
	db, err := openFile(ctx, path, Dialect)
	if err != nil {
		return nil, err
	}
	logsPath := RequestLogsPath(path)
	logs, err := openFile(ctx, logsPath, RequestLogsDialect)
	if err != nil {
		db.Close()
		return nil, err
	}
	db.SetRequestLogs(logs)
	// Logs written by a build that kept them in the main file move to
	// the logs file once.
	if _, err := db.MoveRequestLogs(ctx, uri(logsPath)); err != nil {
		db.Close()
		return nil, fmt.Errorf("move request logs to %s: %w", logsPath, err)
	}
	return db, nil
}

// makeDir makes the directory of the database file at path (0700) when it
// is missing.
func makeDir(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
	}
	return nil
}

// RequestLogsPath is the file of the request logs of the database at path:
// checkoutd.db's are in checkoutd-requests.db, beside it.
func RequestLogsPath(path string) string {
	return strings.TrimSuffix(path, ".db") + "-requests.db"
}

// uri is the URI of the file at path, for the driver and for ATTACH.
func uri(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// openFile opens the database at path with d, migrated, and starts its
// checkpointer.
func openFile(ctx context.Context, path string, d store.Dialect) (*store.DB, error) {
	if err := private(path); err != nil {
		return nil, err
	}
	pragmas := url.Values{}
	// The writer checkpoints only when the log passes 10,000 pages (40
	// MB), a safety net: the checkpointer below does it in the background.
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "wal_autocheckpoint(10000)", "busy_timeout(10000)", "foreign_keys(1)"} {
		pragmas.Add("_pragma", p)
	}
	file := uri(path)
	// The savepoints of group commit (store.InTx) copy each page they
	// change to a sub-journal, a temporary file: in memory, not written
	// to disk and thrown away (it was most of an insert's time).
	writeDSN := file + "?" + pragmas.Encode() + "&_pragma=temp_store(MEMORY)&_txlock=immediate"
	write, err := sql.Open("sqlite", writeDSN)
	if err != nil {
		return nil, err
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)

	pragmas.Add("_pragma", "query_only(1)")
	read, err := sql.Open("sqlite", file+"?"+pragmas.Encode())
	if err != nil {
		write.Close()
		return nil, err
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	read.SetConnMaxIdleTime(0)

	db := store.New(d, write, read)
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	stop, err := startCheckpointer(file + "?" + url.Values{"_pragma": {"busy_timeout(10000)", "synchronous(FULL)"}}.Encode())
	if err != nil {
		db.Close()
		return nil, err
	}
	db.OnClose(stop)
	return db, nil
}

// CheckpointInterval is how often the checkpointer folds the write-ahead
// log into the database file.
const CheckpointInterval = 500 * time.Millisecond

// startCheckpointer folds the write-ahead log into the database file every
// CheckpointInterval on a connection of its own (PRAGMA
// wal_checkpoint(PASSIVE), which waits for no reader or writer), so that
// the writer's commits do not: a commit that crossed SQLite's threshold
// did the checkpoint itself, writing and syncing the database file while
// every write queued behind it. The log stays small, and readers read
// less of it. It returns what stops it.
func startCheckpointer(dsn string) (stop func() error, err error) {
	conn, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(CheckpointInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				// An error (the database busy or closing) is tried again
				// at the next tick; the writer's own threshold backs it.
				conn.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
			}
		}
	}()
	var once sync.Once
	return func() error {
		once.Do(func() {
			close(done)
			<-stopped
			err = conn.Close()
		})
		return err
	}, nil
}

// private makes the database file, creating it when missing, and the WAL
// and shared-memory files that exist readable and writable by the owner
// alone: they hold webhook signing secrets and buyers' data. SQLite creates
// the WAL and shared-memory files with the database file's mode, so once
// the database is 0600 they are too, whatever the umask.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	err = f.Chmod(0o600) // an existing file, or a umask-proof mode
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("make database file private: %w", err)
	}
	for _, name := range []string{path + "-wal", path + "-shm"} {
		if err := os.Chmod(name, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("make database file private: %w", err)
		}
	}
	return nil
}

// Dialect is SQLite's.
var Dialect = store.Dialect{
	Name:       "sqlite",
	SkipLocked: "",
	ForUpdate:  "",
	ForShare:   "",
	Param:      func(int) string { return "?" },
	// modernc.org/sqlite parses a query's text at every call.
	CacheStatements: true,
	IndexedBy:       func(index string) string { return " INDEXED BY " + index },
	Translate:       translate,
	Migrations:      store.SubFS(migrations, "migrations"),
	Committers:      1,
}

// RequestLogsDialect is SQLite's for the file of the request logs (Open):
// the same, with the migrations of that file.
var RequestLogsDialect = func() store.Dialect {
	d := Dialect
	d.Migrations = store.SubFS(requestLogMigrations, "requestlogs")
	return d
}()

func translate(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return &checkout.Error{Code: checkout.EConflict, Message: "The record exists already.", Err: err}
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		return &checkout.Error{Code: checkout.EUnavailable, Message: "The database is unavailable; try again shortly.", Err: err}
	}
	switch se.Code() & 0xff { // primary result code of an extended one
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
		return &checkout.Error{Code: checkout.EUnavailable, Message: "The database is unavailable; try again shortly.", Err: err}
	}
	return err
}
