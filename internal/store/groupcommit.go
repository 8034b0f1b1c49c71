package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Group commit: the writes that arrive while a transaction commits share
// the next one, and its one commit (one fsync on SQLite, one WAL flush on
// PostgreSQL), instead of one each. The cost of a write that must survive a
// power loss is the disk's flush; shared by a batch, it is paid once.
//
// InTx hands its function to a committer goroutine and waits for its
// answer. A committer takes what is queued, at most MaxBatch functions, and
// runs them one after the other in one transaction. The batch then commits,
// and only then is each caller answered, with nil or its own error:
// durability is what it was (synchronous=FULL on SQLite), and no caller
// hears of a write the database could still lose.
//
// A function that fails must not take the others down with it. A batch
// first runs without savepoints, as nearly every batch succeeds whole; if a
// function fails (an error or a panic), the transaction is rolled back,
// nothing of it written, and the batch runs again, this time with each
// function inside a savepoint: one that fails is rolled back to its
// savepoint and answered with its error, and the others are not affected.
// A savepoint per write cost more than the write on both databases (on
// PostgreSQL a subtransaction each; on SQLite a copy of every page changed):
// creates ran at about half their rate on PostgreSQL and three quarters on
// SQLite with them (bench, same run). After a batch needed them, the next
// starts with savepoints (on any committer), until one has no failure: a
// run of failing writes costs one pass per batch, not two. A write alone
// runs in a plain transaction either way. A function runs twice when its
// batch fell back; functions are written to be run again (the batch's
// transaction is new, and they keep no state outside it).
//
// In a batch without savepoints, the inserts of sessions, events and
// deliveries of all its functions are combined, a statement per table
// (deferred.go): on PostgreSQL, creates went from about 4,000 a second to
// 4,800 (bench, same machine, alternating builds).
//
// Nothing waits to fill a batch: a write waits only for the batch ahead of
// it to commit, so a lone write costs what it did, and under load the batch
// grows with the queue (up to MaxBatch). A write alone in its batch runs in
// a plain transaction, without savepoints.
//
// The functions of a batch run in the same transaction, one at a time, so
// each sees what those before it wrote, as it would had they committed
// first; a lock one takes is held until the batch commits.
//
// A function failing because it lost a race with another transaction
// (PostgreSQL's deadlock and serialization failures, Dialect.Retryable),
// which batching makes a little likelier (a batch holds its locks longer),
// runs again alone once the batch has committed, as if it had come after
// it.
//
// A function runs with the committer's context, not its caller's: a
// canceled statement would roll back the whole transaction on SQLite
// (sqlite3_interrupt) and may close the connection on PostgreSQL. A caller
// whose context ended before its function started is answered with that at
// once; one whose function started waits for the batch.

// MaxBatch bounds the writes one transaction holds. A batch commits
// in about the time of its slowest writes plus one flush; 64 creates take
// a few milliseconds on SQLite, so a write never waits long behind a batch,
// and PostgreSQL keeps the savepoints of a transaction (subtransactions) in
// a cache of 64 before it spills them to disk.
const MaxBatch = 64

// BatchTimeout bounds a batch's time, as a caller's deadline bounded its
// own transaction before: a batch stuck behind a lock that is never freed
// (a PostgreSQL session of an operator left open) fails after it, and
// everyone in it hears an error, rather than wait for ever.
const BatchTimeout = 30 * time.Second

// writeReq is one InTx call waiting for a committer.
type writeReq struct {
	ctx  context.Context
	fn   func(checkout.Tx) error
	done chan writeResult
}

// writeResult is the answer to a writeReq: its function's error (or the
// commit's), or the panic it raised, raised again in the caller.
type writeResult struct {
	err   error
	panic any
}

// committers are the goroutines that run the batches.
type committers struct {
	// urgent holds the writes that go before the queue (inTxUrgent).
	urgent chan *writeReq
	queue  chan *writeReq
	*loops
}

// loops are goroutines that run a loop until they are stopped: the
// committers, and the readers of batched reads (readbatch.go).
type loops struct {
	stop   chan struct{} // closed: each loop returns once its work is done
	exited chan struct{} // closed when every loop has returned
	once   sync.Once
}

// newLoops returns loops to start.
func newLoops() *loops { return &loops{stop: make(chan struct{}), exited: make(chan struct{})} }

// start runs loop in n goroutines.
func (l *loops) start(n int, loop func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(loop)
	}
	go func() {
		wg.Wait()
		close(l.exited)
	}()
}

// close stops the loops and waits for them to return.
func (l *loops) close() {
	l.once.Do(func() { close(l.stop) })
	<-l.exited
}

// startCommitters starts n committers on db's write pool: one on SQLite,
// whose single write connection makes writers take turns anyway; several
// on PostgreSQL, whose transactions run side by side.
func (db *DB) startCommitters(n int) {
	c := &committers{urgent: make(chan *writeReq, MaxBatch), queue: make(chan *writeReq, 4*MaxBatch), loops: newLoops()}
	c.start(n, func() { db.commitLoop(c) })
	db.group = c
}

// stopCommitters stops the committers once their batches have committed.
// A write queued and not taken is answered with service_unavailable, as
// a write on a closed pool is.
func (db *DB) stopCommitters() {
	if db.group != nil {
		db.group.close()
	}
}

// InTx runs fn in a write transaction, which it shares with other writes
// arriving meanwhile (group commit, above).
func (db *DB) InTx(ctx context.Context, fn func(checkout.Tx) error) error {
	if db.group == nil {
		return db.inTxAlone(ctx, fn)
	}
	return db.enqueue(ctx, db.group.queue, fn)
}

// inTxUrgent is InTx for a short write that others wait on, the webhook
// dispatcher's claim: it goes before the queued writes, in a batch of
// urgent writes alone, so that it waits for the batch in progress at most
// and not for a queue of creates (an event's first attempt would wait for
// it).
func (db *DB) inTxUrgent(ctx context.Context, fn func(checkout.Tx) error) error {
	if db.group == nil {
		return db.inTxAlone(ctx, fn)
	}
	return db.enqueue(ctx, db.group.urgent, fn)
}

// enqueue hands fn to the committers through queue and waits for its
// answer.
func (db *DB) enqueue(ctx context.Context, queue chan *writeReq, fn func(checkout.Tx) error) error {
	c := db.group
	if err := ctx.Err(); err != nil {
		return db.translate(err)
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan writeResult, 1)}
	select {
	case queue <- r:
	case <-ctx.Done():
		return db.translate(ctx.Err())
	case <-c.exited:
		return db.translate(errClosed)
	}
	var res writeResult
	select {
	case res = <-r.done:
	case <-c.exited:
		select {
		case res = <-r.done: // answered before the committers stopped
		default:
			return db.translate(errClosed) // never taken
		}
	}
	if res.panic != nil {
		panic(res.panic)
	}
	return res.err
}

// errClosed is the error of a write queued while the store closed.
var errClosed = errors.New("store: closed")

// commitLoop runs batches until the store closes.
func (db *DB) commitLoop(c *committers) {
	batch := make([]*writeReq, 0, MaxBatch)
	for {
		batch = batch[:0]
		urgent := false // urgent writes go first, alone when there are some
		select {
		case r := <-c.urgent:
			batch, urgent = append(batch, r), true
		default:
			select {
			case r := <-c.urgent:
				batch, urgent = append(batch, r), true
			case r := <-c.queue:
				batch = append(batch, r)
			case <-c.stop:
				return
			}
		}
		n := len(batch)
		batch = fillFrom(batch, c.urgent, MaxBatch)
		if urgent = urgent || len(batch) > n; !urgent {
			batch = fillFrom(batch, c.queue, MaxBatch)
		}
		db.commitBatch(batch)
		clear(batch)
	}
}

// fillFrom appends to batch what ch holds, up to max in all, without
// waiting for more.
func fillFrom[T any](batch []T, ch <-chan T, max int) []T {
	for len(batch) < max {
		select {
		case v := <-ch:
			batch = append(batch, v)
		default:
			return batch
		}
	}
	return batch
}

// commitBatch runs the writes of batch and answers each.
func (db *DB) commitBatch(batch []*writeReq) {
	live := make([]*writeReq, 0, len(batch))
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- writeResult{err: db.translate(err)}
			continue
		}
		live = append(live, r)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		r := live[0]
		r.done <- runFn(func() error { return db.inTxAlone(r.ctx, r.fn) })
		return
	}
	db.batches.Add(1)
	db.batched.Add(int64(len(live)))
	var results []writeResult
	var retry []bool
	var failed bool
	var h *handover
	// Lost to a failover, the batch runs again whole (failover.go); its
	// callers wait for it, whatever their contexts, until the store closes.
	err := db.durably(context.Background(), func(mark string) error {
		var err error
		savepoints := db.failing.Load() // the last batch had a write fail
		if !savepoints {
			results, retry, failed, h, err = db.runBatch(live, false, mark)
		}
		if savepoints || failed {
			db.savepointed.Add(1)
			// The same mark: the run without savepoints did not commit.
			results, retry, failed, _, err = db.runBatch(live, true, mark) // claims nothing
		}
		return err
	})
	// The claims go to the dispatcher once the callers have their answers:
	// the goroutine a wake-up readies last runs next on its processor, and
	// each one readied after pushes the one before to the back of the
	// queue, so a worker started first waited behind the callers (and
	// whatever else was queued), up to milliseconds on busy processors.
	defer h.end(true)
	db.failing.Store(failed)
	for i, r := range live {
		switch {
		case err != nil && results[i].err == nil && results[i].panic == nil:
			r.done <- writeResult{err: err} // the batch did not commit
		case retry[i] && err == nil:
			r.done <- runFn(func() error { return db.inTxAlone(r.ctx, r.fn) })
		default:
			r.done <- results[i]
		}
	}
}

// runBatch runs the functions of batch in one transaction and commits. It
// returns each function's result, which of them lost a race (to run again
// alone once the batch has committed), the error that kept the batch from
// committing, if any (then nothing of it was written), and whether a
// function failed. With savepoints each function runs in one, and one that
// fails is rolled back alone; without, the first to fail ends the run,
// rolled back whole (failed and no error: the caller runs the batch again
// with savepoints). Without savepoints it claims for the dispatcher (claim
// in create): the claims of a batch that committed are returned, handed,
// for the caller to hand over.
func (db *DB) runBatch(batch []*writeReq, savepoints bool, mark string) (results []writeResult, retry []bool, failed bool, handed *handover, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), BatchTimeout)
	defer cancel()
	results = make([]writeResult, len(batch))
	retry = make([]bool, len(batch))
	w, err := db.beginWrite(ctx, mark)
	if err != nil {
		return results, retry, false, nil, db.translate(err)
	}
	tx := &Tx{db: db, tx: w, ctx: ctx}
	if !savepoints {
		tx.deferred = &deferredInserts{} // deferred.go
	}
	// Runs after the Rollback below (defers run last first): the
	// transaction's connection must be back in the pool, or on SQLite,
	// whose pool has the one write connection, it waits for itself.
	defer func() { db.prepareMissed(ctx, tx.missed) }()
	defer tx.end()  // once committed or rolled back, before any caller is answered
	defer w.close() // rolls back what did not commit
	for i, r := range batch {
		if savepoints {
			if _, err := w.ExecContext(ctx, "SAVEPOINT w"); err != nil {
				return results, retry, failed, nil, db.translate(w.saw(err))
			}
		}
		var raw error
		results[i] = runFn(func() error {
			raw = r.fn(tx)
			return db.translate(raw)
		})
		if results[i].err == nil && results[i].panic == nil && !tx.flushFailed() {
			continue
		}
		if w.saw(raw); w.drop {
			// Its connection is lost: the batch is, whole (failover.go).
			return results, retry, failed, nil, results[i].err
		}
		failed = true
		if !savepoints {
			return nil, nil, true, nil, nil // rolled back by the deferred Rollback
		}
		if _, err := w.ExecContext(ctx, "ROLLBACK TO SAVEPOINT w"); err != nil {
			return results, retry, failed, nil, db.translate(w.saw(err))
		}
		// The rollback freed the locks the function took, those of the
		// endpoints it listed among them (FOR SHARE): read them again.
		tx.enabled = nil
		retry[i] = raw != nil && db.dialect.Retryable != nil && db.dialect.Retryable(raw)
		// No RELEASE: a round trip per write saved. The savepoints nest,
		// each ROLLBACK TO names the newest, and a released one would hold
		// its subtransaction until the commit all the same.
	}
	var h *handover
	if !savepoints { // claim in create (handover.go); not when a write failed
		if h, err = db.claimInTx(ctx, tx); err != nil {
			if w.saw(err); w.drop {
				return results, retry, failed, nil, db.translate(err)
			}
			return nil, nil, true, nil, nil // run again with savepoints, without the claim
		}
	}
	flushFailed, err := tx.commit(ctx)
	if flushFailed {
		h.end(false)
		return nil, nil, true, nil, nil // the rows kept broke a constraint: run again with savepoints
	}
	if err = db.translate(err); err != nil {
		h.end(false)
		return results, retry, failed, nil, err
	}
	db.committed()
	return results, retry, failed, h, nil // the caller hands the claims over
}

// committed runs the test hook of a write transaction just committed,
// before its deferred ends (Tx.end).
func (db *DB) committed() {
	if db.commitHook != nil {
		db.commitHook()
	}
}

// runFn runs fn, catching a panic for the caller to raise again.
func runFn(fn func() error) (res writeResult) {
	defer func() {
		if p := recover(); p != nil {
			res = writeResult{panic: p}
		}
	}()
	return writeResult{err: fn()}
}

// inTxAlone runs fn in a transaction of its own, with ctx. It claims for
// the dispatcher when fn inserted deliveries (handover.go); when that
// claim fails, fn runs again in a transaction without it.
func (db *DB) inTxAlone(ctx context.Context, fn func(checkout.Tx) error) error {
	// Lost to a failover, it runs again (failover.go).
	return db.durably(ctx, func(mark string) error {
		claimFailed, err := db.runAlone(ctx, fn, true, mark)
		if claimFailed {
			_, err = db.runAlone(ctx, fn, false, mark) // the first did not commit
		}
		return err
	})
}

// runAlone is inTxAlone's transaction, with the claim in create or not. It
// reports whether the claim failed (then nothing was written).
func (db *DB) runAlone(ctx context.Context, fn func(checkout.Tx) error, claim bool, mark string) (claimFailed bool, _ error) {
	w, err := db.beginWrite(ctx, mark)
	if err != nil {
		return false, db.translate(err)
	}
	// Its inserts are combined too (deferred.go): a create's deliveries, one
	// per endpoint, in one statement. A combined statement's error is fn's,
	// whatever fn made of it.
	tx := &Tx{db: db, tx: w, deferred: &deferredInserts{}}
	// Runs after the Rollback below (defers run last first): the
	// transaction's connection must be back in the pool.
	defer func() { db.prepareMissed(ctx, tx.missed) }()
	defer tx.end() // once committed or rolled back, before the caller is answered
	// Deferred so that a panicking fn does not leave the transaction open,
	// holding its locks and its connection (on SQLite, the only writer)
	// after a recover upstream. After a commit it does nothing.
	defer w.close()
	if err := fn(tx); err != nil {
		return false, db.translate(w.saw(err))
	}
	var h *handover
	if claim { // its statements write the rows kept first
		if h, err = db.claimInTx(ctx, tx); err != nil {
			return !db.lost(w.saw(err)), err
		}
	}
	flushFailed, err := tx.commit(ctx)
	if flushFailed && h != nil {
		// The claim's lease goes with the commit (pipetx.go): that round
		// trip failed, so run again without the claim, as when the claim
		// fails (a failure of fn's own rows then shows again, alone).
		h.end(false)
		return true, err
	}
	err = db.translate(err)
	if err == nil {
		db.committed()
	}
	h.end(err == nil)
	return false, err
}

// context returns the context a statement of tx runs with: the caller's,
// or in a batch the committer's (see above).
func (tx *Tx) context(ctx context.Context) context.Context {
	if tx.ctx != nil {
		return tx.ctx
	}
	return ctx
}

// execRaw runs a statement the package builds at run time (not cached).
func (tx *Tx) execRaw(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	tx.writes(query)
	return tx.tx.ExecContext(tx.context(ctx), query, args...)
}
