package service

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// RequestLogStore is where a RequestLogWriter writes (*store.DB).
type RequestLogStore interface {
	// RequestLogInsert writes a batch of request logs in one transaction.
	RequestLogInsert(ctx context.Context, logs []*checkout.RequestLog) error
}

// RequestLogWriter records request logs off the request path: requests hand
// their log to a buffered channel and one goroutine writes them in batches,
// one transaction per batch. A request never waits for its log; on SQLite a
// batch costs one fsync instead of one per request. If the database falls so
// far behind that the buffer fills, logs are dropped and counted rather than
// slow the API (Dropped).
type RequestLogWriter struct {
	store   RequestLogStore
	log     *slog.Logger
	ch      chan *checkout.RequestLog
	flush   chan chan struct{}
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
}

// Batch limits of the writer.
const (
	requestLogBuffer   = 8192
	requestLogBatch    = 256
	requestLogInterval = 50 * time.Millisecond
)

// NewRequestLogWriter starts a writer; Close stops it.
func NewRequestLogWriter(store RequestLogStore, log *slog.Logger) *RequestLogWriter {
	w := &RequestLogWriter{
		store: store,
		log:   log,
		ch:    make(chan *checkout.RequestLog, requestLogBuffer),
		flush: make(chan chan struct{}),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go w.run()
	return w
}

// Record queues a log; it never blocks.
func (w *RequestLogWriter) Record(l *checkout.RequestLog) {
	select {
	case w.ch <- l:
	default:
		if w.dropped.Add(1)%1000 == 1 {
			w.log.Warn("request log buffer full; dropping request logs", "dropped", w.dropped.Load())
		}
	}
}

// Dropped returns how many logs were dropped because the buffer was full.
func (w *RequestLogWriter) Dropped() int64 { return w.dropped.Load() }

// Queued returns how many logs wait in the buffer to be written.
func (w *RequestLogWriter) Queued() int { return len(w.ch) }

// Flush returns once every log recorded before the call is written.
func (w *RequestLogWriter) Flush(ctx context.Context) {
	ack := make(chan struct{})
	select {
	case w.flush <- ack:
		select {
		case <-ack:
		case <-ctx.Done():
		}
	case <-w.done:
	case <-ctx.Done():
	}
}

// Close writes what is queued and stops the writer.
func (w *RequestLogWriter) Close() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (w *RequestLogWriter) run() {
	defer close(w.done)
	tick := time.NewTicker(requestLogInterval)
	defer tick.Stop()
	var batch []*checkout.RequestLog
	write := func() {
		for len(w.ch) > 0 && len(batch) < requestLogBatch*4 {
			batch = append(batch, <-w.ch)
		}
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := w.store.RequestLogInsert(ctx, batch); err != nil {
			w.log.Error("write request logs", "count", len(batch), "err", err)
		}
		cancel()
		batch = batch[:0]
	}
	// drain writes until the buffer is empty, as Flush and Close promise:
	// one write takes at most four batches.
	drain := func() {
		write()
		for len(w.ch) > 0 {
			write()
		}
	}
	for {
		select {
		case l := <-w.ch:
			batch = append(batch, l)
			if len(batch) >= requestLogBatch {
				write()
			}
		case <-tick.C:
			write()
		case ack := <-w.flush:
			drain()
			close(ack)
		case <-w.stop:
			drain()
			return
		}
	}
}
