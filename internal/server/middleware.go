package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/web"
)

// recoverPanics turns a panic in a handler into a 500 internal_error in the
// envelope, and the stack into a log line under the request id.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			web.Logger(r.Context()).ErrorContext(r.Context(), "panic serving request",
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if sw.status != 0 {
				return // the response has begun; nothing sound can follow it
			}
			web.WriteError(sw, r, checkout.Internal(errors.New(fmt.Sprint(v))))
		}()
		next.ServeHTTP(sw, r)
	})
}

// quietPaths are logged at debug when they succeed.
var quietPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// accessLog logs one line per request: method, path, status and duration,
// never headers, query strings or bodies.
func accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		level := slog.LevelInfo
		if quietPaths[r.URL.Path] && sw.status < 400 {
			// Load balancers and scrapers ask every few seconds; their
			// successful requests would drown the log at info.
			level = slog.LevelDebug
		}
		web.Logger(r.Context()).Log(r.Context(), level, "request",
			"method", r.Method,
			"path", logPath(r.URL.Path),
			"status", sw.status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
	})
}

// logPath is a request's path as the access log shows it: secrets
// redacted, and a refund link's token left out, since whoever holds it says
// where a refund goes.
func logPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "/refund/"); ok && rest != "" {
		return "/refund/[link]"
	}
	return checkout.RedactSecrets(path)
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
