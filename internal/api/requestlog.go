package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
)

// maxLoggedBody is the most of a body a request log keeps.
const maxLoggedBody = 64 << 10

// RequestLogWriter records request logs off the request path: requests hand
// their log to a buffered channel and one goroutine writes them in batches,
// one transaction per batch. A request never waits for its log; on SQLite a
// batch costs one fsync instead of one per request. If the database falls so
// far behind that the buffer fills, logs are dropped and counted rather than
// slow the API (Dropped).
type RequestLogWriter struct {
	store   checkout.Store
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
func NewRequestLogWriter(store checkout.Store, log *slog.Logger) *RequestLogWriter {
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

// LogRequests records every request that reaches it (authenticated ones:
// it sits behind Authenticate) with its bodies, secrets redacted, and never
// its headers.
func LogRequests(rl *RequestLogWriter, now clock.Func, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		created := now()
		reqBody := &capture{}
		if r.Body != nil {
			r.Body = teeBody{r.Body, reqBody}
		}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if r.Body != nil && reqBody.Len() < maxLoggedBody {
			// A request refused before its body was read (403, 415, 429 and
			// the like) is logged with the body it sent all the same: read
			// what the handler left, as far as the log keeps. (A response
			// already flushed may have had the server discard it; then the
			// log keeps what was read.)
			io.CopyN(io.Discard, r.Body, int64(maxLoggedBody-reqBody.Len()))
		}
		key := KeyFrom(r.Context())
		rl.Record(&checkout.RequestLog{
			RequestID:    RequestID(r.Context()),
			MerchantID:   key.MerchantID,
			Mode:         key.Mode,
			APIKeyID:     key.ID,
			Method:       r.Method,
			Path:         checkout.RedactSecrets(r.URL.RequestURI()),
			Status:       rec.status,
			Duration:     time.Since(start),
			RequestBody:  redactBody(reqBody.Bytes()),
			ResponseBody: redactBody(rec.body.Bytes()),
			CreatedAt:    created,
		})
	})
}

// redactBody replaces secrets in a body. A JSON body whose strings use
// escapes (\u0063k_test_sk_...) is decoded first so no spelling of a secret
// slips through.
func redactBody(b []byte) string {
	if len(b) > maxLoggedBody {
		b = b[:maxLoggedBody]
	}
	// What both databases can store: valid UTF-8 without NUL (PostgreSQL
	// text refuses it, and with it the whole batch of logs).
	s := checkout.StorableText(string(b))
	if strings.Contains(s, `\`) {
		var v any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if dec.Decode(&v) == nil {
			if out, err := json.Marshal(redactValue(v)); err == nil {
				return string(out)
			}
		}
	}
	return checkout.RedactSecrets(s)
}

func redactValue(v any) any {
	switch t := v.(type) {
	case string:
		return checkout.RedactSecrets(t)
	case []any:
		for i := range t {
			t[i] = redactValue(t[i])
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[checkout.RedactSecrets(k)] = redactValue(val)
		}
		return out
	}
	return v
}

// capture keeps the first maxLoggedBody bytes written to it.
type capture struct{ bytes.Buffer }

func (c *capture) Write(p []byte) (int, error) {
	if room := maxLoggedBody - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

type teeBody struct {
	io.ReadCloser
	c *capture
}

func (t teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.c.Write(p[:n])
	return n, err
}

// recorder notes the status and keeps the start of the body written.
type recorder struct {
	http.ResponseWriter
	status int
	body   capture
	wrote  bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
