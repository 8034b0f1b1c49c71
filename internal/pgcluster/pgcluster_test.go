package pgcluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/checkoutd/checkoutd/internal/pgcluster"
)

// TestFailover writes through the cluster's multi-host URL while the
// primary changes twice, first in a planned switchover, then by a SIGKILL
// of its whole process group, and checks that every write acknowledged
// before either is still there. It logs how long writes were refused.
func TestFailover(t *testing.T) {
	c := pgcluster.Start(t)
	ctx := context.Background()
	primary, err := c.Primary(ctx)
	if err != nil || primary == "" {
		t.Fatalf("Primary() = %q, %v; want a node", primary, err)
	}
	conn := connect(t, c.URI())
	// Commits wait for one standby: that is what makes a failover lose
	// nothing acknowledged.
	var sync string
	if err := conn.QueryRow(ctx, "SHOW synchronous_standby_names").Scan(&sync); err != nil || sync == "" {
		t.Fatalf("synchronous_standby_names = %q, %v; want a standby", sync, err)
	}
	t.Logf("primary %s, synchronous_standby_names = %s", primary, sync)
	if _, err := conn.Exec(ctx, "CREATE TABLE writes (id bigint PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	var ids idSource
	acked := &ackedIDs{}

	// A planned switchover.
	w := startWriter(conn, &ids, acked)
	acked.waitFor(t, 100)
	began := time.Now()
	c.Switchover()
	if err := w.wait(t); err == nil {
		t.Fatal("the writer's connection to the old primary outlived the switchover")
	}
	took := writeAgain(t, c.URI(), &ids, acked, began)
	next, err := c.WaitPrimary(ctx, primary)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("switchover %s -> %s: first write %v after it began (%d writes acknowledged before)", primary, next, took.Round(time.Millisecond), acked.len())
	checkAcked(t, c.URI(), acked)

	// The primary dies, once the old one is back as a standby.
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	conn = connect(t, c.URI())
	w = startWriter(conn, &ids, acked)
	acked.waitFor(t, acked.len()+100)
	killed, at := c.KillPrimary()
	if err := w.wait(t); err == nil {
		t.Fatal("the writer's connection to the killed primary still works")
	}
	took = writeAgain(t, c.URI(), &ids, acked, at)
	next, err = c.WaitPrimary(ctx, killed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover %s (killed) -> %s: first write %v after the kill (%d writes acknowledged before)", killed, next, took.Round(time.Millisecond), acked.len())
	checkAcked(t, c.URI(), acked)
}

func connect(t *testing.T, uri string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// idSource hands out the ids of the rows written, each once, so that a
// write whose outcome is unknown is never repeated with the same id.
type idSource struct {
	mu   sync.Mutex
	last int64
}

func (s *idSource) next() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	return s.last
}

// ackedIDs are the rows whose INSERT was acknowledged: they must survive.
type ackedIDs struct {
	mu      sync.Mutex
	ids     []int64
	changed chan struct{}
}

func (a *ackedIDs) add(id int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids = append(a.ids, id)
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}

func (a *ackedIDs) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ids)
}

// waitFor waits until n writes were acknowledged.
func (a *ackedIDs) waitFor(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		a.mu.Lock()
		if len(a.ids) >= n {
			a.mu.Unlock()
			return
		}
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		changed := a.changed
		a.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("%d writes acknowledged after a minute; want %d", a.len(), n)
		}
	}
}

// writer inserts rows one after another on one connection until a write
// fails.
type writer struct {
	done chan struct{}
	err  error
}

func startWriter(conn *pgx.Conn, ids *idSource, acked *ackedIDs) *writer {
	w := &writer{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			id := ids.next()
			_, err := conn.Exec(ctx, "INSERT INTO writes (id) VALUES ($1)", id)
			cancel()
			if err != nil {
				w.err = err
				return
			}
			acked.add(id)
		}
	}()
	return w
}

// wait waits until the writer stopped and returns the error that stopped
// it.
func (w *writer) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-w.done:
		return w.err
	case <-time.After(2 * time.Minute):
		t.Fatal("the writer still runs two minutes after its primary went")
		return nil
	}
}

// writeAgain writes a row through a new connection on uri, retrying until
// one write is acknowledged, and returns the time from since until then.
func writeAgain(t *testing.T, uri string, ids *idSource, acked *ackedIDs, since time.Time) time.Duration {
	t.Helper()
	deadline := time.Now().Add(pgcluster.FailoverTimeout)
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var conn *pgx.Conn
		conn, err = pgx.Connect(ctx, uri)
		if err == nil {
			id := ids.next()
			_, err = conn.Exec(ctx, "INSERT INTO writes (id) VALUES ($1)", id)
			conn.Close(ctx)
			if err == nil {
				cancel()
				acked.add(id)
				return time.Since(since)
			}
		}
		cancel()
		// A refused connection or a read-only node answers at once: pause
		// between attempts rather than spin.
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no write through %s for %v: %v", uri, pgcluster.FailoverTimeout, err)
	return 0
}

// checkAcked checks that every acknowledged row is on the primary.
func checkAcked(t *testing.T, uri string, acked *ackedIDs) {
	t.Helper()
	acked.mu.Lock()
	ids := append([]int64(nil), acked.ids...)
	acked.mu.Unlock()
	conn := connect(t, uri)
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM writes WHERE id = ANY($1)", ids).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(ids) {
		t.Fatalf("%d of %d acknowledged writes found after the primary changed", n, len(ids))
	}
}
