package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fakeStore is a RequestLogStore whose RequestLogInsert can be held up or
// made to fail; any other method panics.
type fakeStore struct {
	block chan struct{} // RequestLogInsert waits for it to close, when set

	mu      sync.Mutex
	fail    int // how many more inserts fail
	written []*checkout.RequestLog
	batches int
}

func (s *fakeStore) RequestLogInsert(ctx context.Context, logs []*checkout.RequestLog) error {
	if s.block != nil {
		<-s.block
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches++
	if s.fail > 0 {
		s.fail--
		return errors.New("database on fire")
	}
	s.written = append(s.written, logs...)
	return nil
}

func (s *fakeStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.written)
}

func newLog(m string, i int) *checkout.RequestLog {
	return &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: m, Mode: checkout.ModeTest, APIKeyID: "key_1",
		Method: "GET", Path: fmt.Sprintf("/v1/%d", i), Status: 200, CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)}
}

// countLogs returns how many test-mode logs store m has.
func countLogs(t *testing.T, db *store.DB, m string) int {
	t.Helper()
	ls, err := db.RequestLogList(context.Background(), checkout.RequestLogListParams{MerchantID: m, Mode: checkout.ModeTest, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	return len(ls)
}

// Flush returns once every log recorded before it is in the database, even
// when there are more than one batch's worth.
func TestRequestLogWriterFlush(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		log, _ := logtest.Capture()
		w := NewRequestLogWriter(db, log)
		defer w.Close()
		m := checkout.NewStoreID()
		for _, n := range []int{1, 300, 3000} {
			before := countLogs(t, db, m)
			for i := range n {
				w.Record(newLog(m, before+i))
			}
			w.Flush(context.Background())
			if got := countLogs(t, db, m) - before; got != n {
				t.Errorf("after recording %d logs and Flush, %d are in the database; want all", n, got)
			}
		}
		if w.Dropped() != 0 {
			t.Errorf("Dropped = %d; want 0", w.Dropped())
		}
	})
}

// Close writes everything queued, however much, before it returns.
func TestRequestLogWriterCloseDrains(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		log, _ := logtest.Capture()
		w := NewRequestLogWriter(db, log)
		m := checkout.NewStoreID()
		const n = 5000
		for i := range n {
			w.Record(newLog(m, i))
		}
		w.Close()
		if got := countLogs(t, db, m); got != n {
			t.Errorf("after Close, %d of %d logs are in the database; want all", got, n)
		}
		w.Close()                     // twice is fine
		w.Flush(context.Background()) // and Flush after Close returns
	})
}

// Record never blocks: when the database falls behind and the buffer is
// full, logs are dropped and counted.
func TestRequestLogWriterNeverBlocks(t *testing.T) {
	st := &fakeStore{block: make(chan struct{})}
	log, buf := logtest.Capture()
	w := NewRequestLogWriter(st, log)
	const n = requestLogBuffer + 4*requestLogBatch + 1000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			w.Record(newLog("m", i))
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Record blocked while the store was held up")
	}
	dropped := w.Dropped()
	if dropped < 1000 || dropped > n-requestLogBuffer {
		t.Errorf("Dropped = %d; want between 1000 and %d", dropped, n-requestLogBuffer)
	}
	if !strings.Contains(buf.String(), "request log buffer full") {
		t.Errorf("no warning logged about dropping; log: %s", buf)
	}
	close(st.block)
	w.Close()
	if got := int64(st.count()) + dropped; got != n {
		t.Errorf("written %d + dropped %d = %d; want every one of the %d logs accounted for", st.count(), dropped, got, n)
	}
}

// A batch the database refuses is logged and the writer goes on.
func TestRequestLogWriterStoreError(t *testing.T) {
	st := &fakeStore{fail: 1}
	log, buf := logtest.Capture()
	w := NewRequestLogWriter(st, log)
	defer w.Close()
	w.Record(newLog("m", 0))
	w.Flush(context.Background())
	if !strings.Contains(buf.String(), "write request logs") || !strings.Contains(buf.String(), "database on fire") {
		t.Errorf("the failed write was not logged; log: %s", buf)
	}
	w.Record(newLog("m", 1))
	w.Flush(context.Background())
	if st.count() != 1 {
		t.Errorf("after a failed batch, %d logs written; want the next one", st.count())
	}
}

// Flush gives up when its context ends, even if the store never answers.
func TestRequestLogWriterFlushContext(t *testing.T) {
	st := &fakeStore{block: make(chan struct{})}
	log, _ := logtest.Capture()
	w := NewRequestLogWriter(st, log)
	w.Record(newLog("m", 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.Flush(ctx) // returns
	close(st.block)
	w.Close()
}
