// Package logtest gives tests their loggers: one that writes to the test's
// own log, shown beside a failure (and under -v) and nowhere else, and one
// whose output a test reads to check what was logged.
package logtest

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Logger returns a logger that writes each record, at info level and above,
// in slog's text format, to t's log. What the code under test logs after t
// has ended (a goroutine still winding down) is dropped: t may no longer
// log.
func Logger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return slog.New(slog.NewTextHandler(w, nil))
}

// testWriter hands each record, which slog writes at once, to t.Log.
type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

// Capture returns a logger that writes every record, at debug level and
// above, in slog's text format, to the Buffer it returns.
func Capture() (*slog.Logger, *Buffer) {
	b := &Buffer{}
	return slog.New(b.TextHandler()), b
}

// Buffer holds what was written to it, for a test to read while the code
// under test may still be writing from other goroutines. Its zero value is
// empty and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TextHandler returns a handler that writes records, at debug level and
// above, in slog's text format, to b.
func (b *Buffer) TextHandler() slog.Handler {
	return slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})
}

// JSONHandler returns a handler that writes records, at debug level and
// above, as JSON lines, to b.
func (b *Buffer) JSONHandler() slog.Handler {
	return slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})
}
