package store

import (
	"context"
	"database/sql"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Batched reads of sessions: on PostgreSQL, the SessionGet calls that
// arrive while a read of sessions is under way share the next one, a
// SELECT of every id they asked for, instead of a statement and a round
// trip each. This is group commit (groupcommit.go) for the merchant's
// retrieve: a statement's fixed cost (the round trip's system calls on
// both sides, the server's parse of its message, its executor's start and
// end) is most of a one-row read by primary key, and a batch pays it once.
//
// Nothing waits to fill a batch: a read waits only for the read ahead of
// it on its reader (and the reader lets the goroutines ready to run go
// first, readLoop), so a lone read costs what it did, and under load the
// batch grows with the queue (up to MaxReadBatch).
//
// A batched read sees what a read of its own would have. Its statement
// starts after every read in it was queued, and each was queued after its
// caller called SessionGet: a session committed before a call began is in
// the answer, as it was with a statement per call. Each caller gets a
// session of its own, even when two asked for the same id.
//
// A row that cannot be read (its items or metadata not JSON) must not fail
// the others: when any row fails, each read of the batch runs again alone,
// and only the one asking for the bad row hears of it. A failure of the
// statement (the database unreachable) is every caller's.
//
// The caller's context bounds its wait: a caller whose context ends is
// answered with that at once. A read whose caller has left before its
// reader takes it is not run. The statement runs with a context of its
// own, bounded by ReadBatchTimeout, so that one caller leaving does not
// cancel the others' read, and canceled when every caller of the batch has
// left: a statement stuck on a broken connection holds its reader no
// longer than its callers wait.
//
// The SQLite store keeps a session cache instead (sessioncache.go), and
// its reads are in the process: it does not batch.

// MaxReadBatch bounds the ids of one batched read: 64 parameters, a
// statement text per number of ids (prepared and cached, as the combined
// inserts' are; deferred.go).
const MaxReadBatch = 64

// ReadBatchTimeout bounds a batched read's statement.
const ReadBatchTimeout = 30 * time.Second

// readReq is one SessionGet waiting for a reader.
type readReq struct {
	ctx  context.Context // the caller's
	id   string
	done chan readResult
}

// readResult answers a readReq.
type readResult struct {
	s   *checkout.Session
	err error
}

// readers are the goroutines that run batched reads.
type readers struct {
	n     int
	queue chan *readReq
	*loops
}

// startReaders starts n readers on db's read pool.
func (db *DB) startReaders(n int) {
	r := &readers{n: n, queue: make(chan *readReq, 4*MaxReadBatch), loops: newLoops()}
	r.start(n, func() { db.readLoop(r) })
	db.reads = r
}

// stopReaders stops the readers once their reads are answered.
func (db *DB) stopReaders() {
	if db.reads != nil {
		db.reads.close()
	}
}

// sessionGetBatched is SessionGet through the readers.
func (db *DB) sessionGetBatched(ctx context.Context, id string) (*checkout.Session, error) {
	r := db.reads
	if err := ctx.Err(); err != nil {
		return nil, db.translate(err)
	}
	req := &readReq{ctx: ctx, id: id, done: make(chan readResult, 1)}
	select {
	case r.queue <- req:
	case <-ctx.Done():
		return nil, db.translate(ctx.Err())
	case <-r.exited:
		return nil, db.translate(errClosed)
	}
	select {
	case res := <-req.done:
		return res.s, res.err
	case <-ctx.Done():
		return nil, db.translate(ctx.Err())
	case <-r.exited:
		select {
		case res := <-req.done: // answered before the readers stopped
			return res.s, res.err
		default:
			return nil, db.translate(errClosed) // never taken
		}
	}
}

// readLoop runs batched reads until the store closes.
func (db *DB) readLoop(r *readers) {
	batch := make([]*readReq, 0, MaxReadBatch)
	for {
		batch = batch[:0]
		select {
		case req := <-r.queue:
			batch = append(batch, req)
		case <-r.stop:
			return
		}
		// Let the goroutines ready to run (requests on their way to a
		// read) go first, so that they join this batch rather than make
		// the next: a pass of the scheduler, not a wait; it costs a lone
		// read nothing on an idle machine. Retrieves went from about
		// 19,100 a second to 20,500–21,300 (bench, alternating builds);
		// the same in the committers' loop did not speed creates.
		runtime.Gosched()
		batch = fillFrom(batch, r.queue, MaxReadBatch)
		db.readBatch(batch)
		clear(batch)
	}
}

// readBatch reads the sessions of batch in one statement and answers each
// caller.
func (db *DB) readBatch(batch []*readReq) {
	if db.readHook != nil {
		db.readHook(len(batch))
	}
	// Reads whose callers have left are not run; the statement runs as
	// long as one caller still waits for it, so that it never outlives
	// them all (a read of its own ran with its caller's context).
	batch = slices.DeleteFunc(batch, func(req *readReq) bool { return req.ctx.Err() != nil })
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ReadBatchTimeout)
	defer cancel()
	var waiting atomic.Int64
	waiting.Store(int64(len(batch)))
	for _, req := range batch {
		stop := context.AfterFunc(req.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	if len(batch) == 1 {
		s, err := db.sessionRead(ctx, batch[0].id)
		batch[0].done <- readResult{s, err}
		return
	}
	db.readBatches.Add(1)
	db.readBatched.Add(int64(len(batch)))
	ids := make([]any, 0, len(batch))
	seen := make(map[string]bool, len(batch))
	for _, req := range batch {
		if !seen[req.id] {
			seen[req.id] = true
			ids = append(ids, req.id)
		}
	}
	found, err := db.sessionsRead(ctx, ids)
	if errors.Is(err, errRowUnreadable) { // each alone: only the bad row's read fails
		for _, req := range batch {
			s, err := db.sessionRead(ctx, req.id)
			req.done <- readResult{s, err}
		}
		return
	}
	for _, req := range batch {
		switch s, ok := found[req.id]; {
		case err != nil:
			req.done <- readResult{err: err}
		case !ok:
			req.done <- readResult{err: sessionNotFound(req.id)}
		default:
			if seen[req.id] {
				seen[req.id] = false // the first caller takes the one read
			} else {
				s = cloneSession(s)
			}
			req.done <- readResult{s: s}
		}
	}
}

// sessionRead reads one session by id.
func (db *DB) sessionRead(ctx context.Context, id string) (*checkout.Session, error) {
	s, err := scanSession(db.readRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, sessionNotFound(id)
	}
	if err != nil {
		return nil, db.translate(err)
	}
	return s, nil
}

// errRowUnreadable marks a batched read that failed on one of its rows.
var errRowUnreadable = errors.New("store: a row of the batch cannot be read")

// sessionsRead reads the sessions of ids (distinct, at most MaxReadBatch)
// in one statement, by id. A row that cannot be scanned fails it with
// errRowUnreadable.
func (db *DB) sessionsRead(ctx context.Context, ids []any) (map[string]*checkout.Session, error) {
	rows, err := db.readRows(ctx, db.sessionsReadQuery(len(ids)), ids...)
	if err != nil {
		return nil, db.translate(err)
	}
	defer rows.Close()
	found := make(map[string]*checkout.Session, len(ids))
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, errRowUnreadable
		}
		found[s.ID] = s
	}
	if err := rows.Err(); err != nil {
		return nil, db.translate(err)
	}
	return found, nil
}

// sessionsReadQuery returns the SELECT of n sessions by id.
func (db *DB) sessionsReadQuery(n int) string {
	head := `SELECT ` + sessionColumns + ` FROM sessions WHERE id IN (`
	return db.inserts.get(insertKey{head, n}, func() string {
		var b strings.Builder
		b.WriteString(head)
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(db.dialect.Param(i + 1))
		}
		b.WriteByte(')')
		return b.String()
	})
}
