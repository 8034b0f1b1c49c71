package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/checkoutd/checkoutd/checkout"
)

// Dialect is what differs between the databases.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// ForUpdate is appended to a SELECT that locks the rows it reads:
	// " FOR UPDATE" on PostgreSQL; "" on SQLite, whose write transactions
	// (BEGIN IMMEDIATE) already exclude every other writer.
	ForUpdate string
	// ForShare is appended to a SELECT that must keep the rows it reads
	// from changing until the transaction ends, while letting other readers
	// do the same: " FOR SHARE" on PostgreSQL; "" on SQLite, for the reason
	// above.
	ForShare string
	// SkipLocked is appended to the SELECT that locks the deliveries to
	// claim, aliased d, beside their endpoints and events:
	// " FOR UPDATE OF d SKIP LOCKED" on PostgreSQL, so nodes claiming at once
	// take different rows instead of queueing on each other's (and lock no
	// endpoint or event); "" on SQLite.
	SkipLocked string
	// IndexedBy returns the clause that makes a SELECT read the named
	// index, placed after its table: " INDEXED BY name" on SQLite, whose
	// planner has no statistics (no ANALYZE) and can take an index that
	// filters but does not order, then sort every row; "" on PostgreSQL,
	// whose planner has them. On SQLite a query the index cannot serve
	// fails instead of scanning, which the tests see.
	IndexedBy func(index string) string
	// ClaimLock, when set, runs first in a claim (of the webhook queue): a
	// lock held until the claim's transaction ends, so that claims take
	// turns and each counts the leases of those before it (the per-endpoint
	// cap holds across claims that run at once, on one node or several).
	// PostgreSQL's is a transaction-level advisory lock of the schema;
	// SQLite needs none, its write transactions already taking turns.
	ClaimLock string
	// MigrationLock, when set, runs first in the migration transaction so
	// that nodes starting together migrate one at a time.
	MigrationLock string
	// Param is the placeholder of the i-th parameter (from 1) of a
	// statement built at run time with many parameters: "$i" on PostgreSQL,
	// "?" on SQLite, which treats $i as a name and looks every one up in a
	// list, quadratic in the thousand parameters of such a statement. The
	// statements written out in the code use $i on both.
	Param func(i int) string
	// Translate maps a driver error to a *checkout.Error where it has a
	// meaning (a unique key taken, the database unreachable) and returns
	// other errors unchanged.
	Translate func(error) error
	// Migrations holds the numbered migrations, NNNN_name.sql.
	Migrations fs.FS
	// CacheStatements keeps the package's queries prepared (see
	// stmtCache); for drivers that do not do it themselves.
	CacheStatements bool
	// PlanEach, when set, goes before the arguments of the lists' queries
	// (RequestLogList, EventList) to have the database plan each run with
	// its values: on PostgreSQL pgx.QueryExecModeExec, an unnamed
	// statement. A statement prepared once is planned generically after a
	// few runs, blind to how rare a filter's value is: a 5xx filter among a
	// million mostly-2xx logs then walked the time index, 20 ms to 0.9 s a
	// page instead of under 1 ms (bench -lists).
	PlanEach []any
	// Committers is how many transactions of batched writes run at once
	// (group commit, groupcommit.go): 1 on SQLite, whose one write
	// connection takes one at a time anyway; several on PostgreSQL. 0
	// turns group commit off: each InTx is a transaction of its own.
	Committers int
	// Readers is how many batched reads of sessions run at once
	// (readbatch.go); 0 turns batching off: each SessionGet is a
	// statement of its own. The SQLite store caches sessions instead.
	Readers int
	// Copy, when set, writes rows into table in one statement of its own
	// (PostgreSQL's COPY), atomic, on conn: far cheaper for the database
	// than the INSERT of many rows it replaces (no statement to parse and
	// plan, thousands of parameters). Nil: the INSERT.
	Copy func(ctx context.Context, conn *sql.Conn, table string, columns []string, rows [][]any) error
	// Pipeline, when set, runs stmts in order on conn in one round trip,
	// each only if those before it succeeded, calling a statement's Scan
	// for each of its rows. It returns each statement's rows affected and
	// the index of the one that failed (len(stmts) when none did). Write
	// transactions then send their BEGIN and COMMIT with other statements
	// (pipetx.go). Nil: a round trip a statement.
	Pipeline func(ctx context.Context, conn *sql.Conn, stmts []PipeStmt) (affected []int64, failed int, err error)
	// Retryable reports whether a write failed only because it lost a
	// race with another transaction (a deadlock, a serialization failure):
	// run again alone, it succeeds. Nil: none does.
	Retryable func(error) bool
	// Lost reports an error of a lost connection, or of a node that no
	// longer takes writes: a failover (failover.go), after which the same
	// write succeeds on a new connection. Nil: a database on this machine
	// (SQLite), which fails over to nothing.
	Lost func(error) bool
}

// DB is a checkout.Store on a SQL database. Writes go through write and
// reads through read; on PostgreSQL they are one pool, on SQLite the writer
// is a single connection so writers queue in Go rather than on a lock.
type DB struct {
	dialect Dialect
	write   *sql.DB
	read    *sql.DB
	stmts   stmtCache
	errs    struct{ unavailable, canceled, other atomic.Int64 }
	skipped atomic.Int64 // unreadable rows skipped (collectSkipping)
	log     atomic.Pointer[slog.Logger]
	closed  atomic.Bool

	// failover is what the DB needs to survive a failover (failover.go).
	failover failover

	// sessionReadHook, when set (by tests), runs in SessionGet between
	// the read of a session it did not have cached and its caching.
	sessionReadHook func(*checkout.Session)
	// commitHook, when set (by tests), runs when a write transaction has
	// committed, before what its end does (Tx.end) and its callers hear.
	commitHook func()
	// roundTripHook, when set (by tests), is given the statements of each
	// round trip of a pipelined transaction (pipetx.go).
	roundTripHook func(queries []string)
	// roundTripFault, when set (by tests), fails a round trip of a
	// pipelined transaction before it is sent when it returns an error.
	roundTripFault func(queries []string) error
	// roundTripLoss, when set (by tests), replaces the error of a round
	// trip of a pipelined transaction, once it was sent and answered, when
	// it returns an error: an answer lost on the way back (failover.go).
	roundTripLoss func(queries []string, err error) error
	// copyFault, when set (by tests), runs a COPY of request logs
	// (Dialect.Copy) in place of the store: it may run it or not, and
	// answer what it likes.
	copyFault func(run func() error) error
	// claimHook, when set (by tests), runs in DeliveryClaim between
	// reading the candidates and leasing them.
	claimHook func()
	// readHook, when set (by tests), runs as a reader starts a batched
	// read, with the number of reads it holds (readbatch.go).
	readHook func(reads int)
	// handoverHook, when set (by tests), fails a claim in create
	// (handover.go) with its error.
	handoverHook func() error
	// purgeBatch, when set (by tests), replaces the constant purgeBatch;
	// purgeHook, when set, runs after each batch a purge deletes, with no
	// transaction open.
	purgeBatch int
	purgeHook  func(table string, deleted int64)

	// group runs InTx's functions in shared transactions (groupcommit.go);
	// batches and batched count the batches of more than one write and
	// the writes they held.
	group            *committers
	batches, batched atomic.Int64
	// savepointed counts the batches run with savepoints, failing tells
	// whether the last batch had a write fail (groupcommit.go).
	savepointed atomic.Int64
	failing     atomic.Bool

	onClose    []func() error // OnClose
	afterClose []func() error // AfterClose

	// sessions, when set (CacheSessions), keeps the sessions SessionGet
	// read (sessioncache.go).
	sessions *sessionCache

	// logs, when set (SetRequestLogs), keeps the request logs instead of
	// db: on SQLite, a file of their own (requestlog.go).
	logs *DB
	// keysUsed holds, by API key id, the last use this process wrote
	// (keysUsedApart).
	keysUsed keyUses

	// inserts keeps the texts of the combined inserts and the batched
	// reads; combined counts the combined inserts' statements
	// (deferred.go).
	inserts  insertQueries
	combined atomic.Int64

	// reads runs SessionGet's reads in shared statements (readbatch.go);
	// readBatches and readBatched count the reads of more than one
	// session and the sessions they read (their texts are kept in
	// inserts).
	reads                    *readers
	readBatches, readBatched atomic.Int64

	// claimer, when set, is claimed for by the transactions that insert
	// deliveries (handover.go).
	claimer atomic.Pointer[claimerHolder]
}

// OnClose has Close call fn first: what a dialect started beside the
// pools (SQLite's checkpointer) stops with them.
func (db *DB) OnClose(fn func() error) { db.onClose = append(db.onClose, fn) }

// AfterClose has Close call fn last, once the pools have closed: what a
// dialect holds for as long as the database is open (SQLite's lock of a
// served file) is let go then.
func (db *DB) AfterClose(fn func() error) { db.afterClose = append(db.afterClose, fn) }

var _ checkout.Store = (*DB)(nil)

// New returns a store over the pools, which it closes on Close.
func New(d Dialect, write, read *sql.DB) *DB {
	db := &DB{dialect: d, write: write, read: read, stmts: stmtCache{off: !d.CacheStatements}}
	db.failover.closing, db.failover.stopWaiting = context.WithCancel(context.Background())
	if d.Committers > 0 {
		db.startCommitters(d.Committers)
	}
	if d.Readers > 0 {
		db.startReaders(d.Readers)
	}
	return db
}

// SetLogger sets the logger of the problems the store works around (a row
// it cannot read and skips); slog.Default() until it is set.
func (db *DB) SetLogger(l *slog.Logger) { db.log.Store(l) }

func (db *DB) logger() *slog.Logger {
	if l := db.log.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Dialect returns the name of the database: "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect.Name }

// Close closes both pools. Work asked of the store afterwards fails with
// service_unavailable.
func (db *DB) Close() error {
	db.closed.Store(true)
	db.failover.stopWaiting() // failover.go
	db.stopCommitters()
	db.stopReaders()
	var err error
	for _, fn := range db.onClose {
		err = errors.Join(err, fn())
	}
	db.stmts.close()
	err = errors.Join(err, db.write.Close())
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	for _, fn := range db.afterClose {
		err = errors.Join(err, fn())
	}
	return err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return db.translate(db.write.PingContext(ctx))
}

// translate maps err through the dialect, wrapping what it does not know as
// an internal error. It counts the errors it translates (Stats).
func (db *DB) translate(err error) error {
	if err == nil {
		return nil
	}
	var ce *checkout.Error
	if errors.As(err, &ce) {
		return err // translated already, and counted then
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		db.errs.canceled.Add(1)
		return checkout.Internal(err)
	}
	if db.lost(err) {
		db.dropIdle() // failover.go
	}
	err = db.dialect.Translate(err)
	if errors.As(err, &ce) {
		if ce.Code == checkout.EUnavailable {
			db.errs.unavailable.Add(1)
		}
		return err
	}
	if db.closed.Load() {
		// database/sql reports a closed pool with an error of its own that
		// no dialect sees; to a client it is a database that does not
		// answer (a request that races a node's shutdown), worth a retry.
		db.errs.unavailable.Add(1)
		return &checkout.Error{Code: checkout.EUnavailable, Message: "The database is unavailable; try again shortly.", Err: err}
	}
	db.errs.other.Add(1)
	return checkout.Internal(err)
}

// Stats are what a DB counted since it was opened, for metrics.
type Stats struct {
	// Errors of the database, by kind: the database unreachable or
	// overloaded (service_unavailable), a query given up because its
	// context ended (a client gone, a timeout), and any other failure (an
	// internal error). A conflict or a row not found is an answer, not an
	// error, and is not counted.
	Unavailable, Canceled, Other int64
	// RowsSkipped counts the rows that lists read by background jobs
	// skipped because they could not be decoded (each is logged with its
	// id): a background job carries on with the other rows.
	RowsSkipped int64
	// Pools are the connection pools: "write" and "read" on SQLite, one
	// "main" pool on PostgreSQL.
	Pools []PoolStats
	// Batches counts the transactions that held more than one write
	// (group commit), Batched the writes they held.
	Batches, Batched int64
	// Savepointed counts the batches run with a savepoint per write:
	// again after a write failed in a batch run without, or from the start
	// after such a batch (groupcommit.go).
	Savepointed int64
	// ReadBatches counts the batched reads of sessions that read more
	// than one (readbatch.go), ReadBatched the sessions they read.
	ReadBatches, ReadBatched int64
	// SessionCache is the session cache's (sessioncache.go), nil when the
	// store has none (PostgreSQL, a SQLite file not served).
	SessionCache *SessionCacheStats
	// Failover counts the writes run again after a lost connection and
	// the lost COMMITs resolved (failover.go).
	Failover FailoverStats
}

// SessionCacheStats are the session cache's counts: SessionGet's lookups
// that found the session in it and those that read the database, and the
// sessions it holds, with about the memory they take.
type SessionCacheStats struct {
	Hits, Misses, Sessions, Bytes int64
}

// PoolStats describe one connection pool.
type PoolStats struct {
	Name string
	sql.DBStats
}

// Stats returns the DB's counts and its pools' state.
func (db *DB) Stats() Stats {
	s := Stats{
		Unavailable: db.errs.unavailable.Load(),
		Canceled:    db.errs.canceled.Load(),
		Other:       db.errs.other.Load(),
		RowsSkipped: db.skipped.Load(),
		Batches:     db.batches.Load(),
		Savepointed: db.savepointed.Load(),
		Batched:     db.batched.Load(),
		ReadBatches: db.readBatches.Load(),
		ReadBatched: db.readBatched.Load(),
		Failover: FailoverStats{
			Retries: db.failover.retries.Load(), Committed: db.failover.committed.Load(),
			RolledBack: db.failover.rolledBack.Load(), Unresolved: db.failover.unresolved.Load(),
		},
	}
	if c := db.sessions; c != nil {
		c.mu.Lock()
		n, bytes := len(c.m), c.bytes
		c.mu.Unlock()
		s.SessionCache = &SessionCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Sessions: int64(n), Bytes: int64(bytes)}
	}
	if db.read == db.write {
		s.Pools = []PoolStats{{"main", db.write.Stats()}}
	} else {
		s.Pools = []PoolStats{{"write", db.write.Stats()}, {"read", db.read.Stats()}}
	}
	if db.logs != nil {
		// The logs' errors are the service's errors all the same; their
		// pools are the "logs_write" and "logs_read" pools.
		l := db.logs.Stats()
		s.Unavailable += l.Unavailable
		s.Canceled += l.Canceled
		s.Other += l.Other
		s.RowsSkipped += l.RowsSkipped
		s.Batches += l.Batches
		s.Savepointed += l.Savepointed
		s.Batched += l.Batched
		for _, p := range l.Pools {
			s.Pools = append(s.Pools, PoolStats{"logs_" + p.Name, p.DBStats})
		}
	}
	return s
}

// Tx is a write transaction of a DB.
type Tx struct {
	db     *DB
	tx     *wtx
	ctx    context.Context // in a batch, the committer's (Tx.context)
	missed []string        // queries run unprepared, to prepare after the transaction
	// enabled holds EndpointListEnabled's lists, by store and mode, until
	// a statement writes to the endpoints (exec).
	enabled map[string][]*checkout.Endpoint
	// deferred, in a batch without savepoints, holds the inserts to
	// combine (deferred.go).
	deferred *deferredInserts
	// inserted counts the deliveries the transaction inserted: it claims
	// for the dispatcher of this process when there are some (handover.go).
	inserted int
	// sessionsWritten are the sessions the transaction wrote, to drop
	// from the session cache again when it ends (sessioncache.go).
	sessionsWritten []string
}

var _ checkout.Tx = (*Tx)(nil)

// Migrate applies the migrations not applied yet, in order, in one
// transaction, and returns how many it applied. It refuses, applying
// nothing, when a migration is missing below the last one applied (applied
// 1, 2 and 4, and 3 not): that database was migrated by another build.
func (db *DB) Migrate(ctx context.Context) (int, error) {
	names, err := fs.Glob(db.dialect.Migrations, "*.sql")
	if err != nil {
		return 0, err
	}
	slices.Sort(names)
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, db.translate(err)
	}
	defer tx.Rollback()
	if db.dialect.MigrationLock != "" {
		if _, err := tx.ExecContext(ctx, db.dialect.MigrationLock); err != nil {
			return 0, fmt.Errorf("lock migrations: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL)`); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	done, current, err := appliedMigrations(ctx, tx)
	if err != nil {
		return 0, err
	}
	applied := 0
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		version, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil {
			return 0, fmt.Errorf("migration %s: name must be NNNN_name.sql", name)
		}
		if done[version] {
			continue
		}
		if version < current {
			// Applying it now would run it after migrations written to
			// follow it; skipping it would leave the schema without it.
			return 0, fmt.Errorf("migration %s is not applied, but migration %d, which follows it, is: "+
				"the database was migrated by a build without it; refusing to start (apply it by hand or restore a backup)", name, current)
		}
		body, err := fs.ReadFile(db.dialect.Migrations, name)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return 0, fmt.Errorf("migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, version, name); err != nil {
			return 0, fmt.Errorf("record migration %s: %w", name, err)
		}
		applied++
	}
	if err := tx.Commit(); err != nil {
		return 0, db.translate(err)
	}
	return applied, nil
}

// appliedMigrations returns the versions recorded in schema_migrations and
// the highest of them (0 when none).
func appliedMigrations(ctx context.Context, tx *sql.Tx) (map[int64]bool, int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, 0, fmt.Errorf("read schema versions: %w", err)
	}
	defer rows.Close()
	done := map[int64]bool{}
	var current int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, 0, fmt.Errorf("read schema versions: %w", err)
		}
		done[v], current = true, max(current, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("read schema versions: %w", err)
	}
	return done, current, nil
}
