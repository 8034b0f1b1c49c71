package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
)

type requestIDKey struct{}

type loggerKey struct{}

// RequestID returns the id of the request ctx belongs to, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Logger returns the logger of the request ctx belongs to, or the default.
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// WithRequestID gives every request a fresh id (req_ and 32 hex), in its
// context and in the Request-Id header of its response, and puts log in the
// context for Logger. Ids are never taken from the client, so a log line can
// be trusted to name one request.
func WithRequestID(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := checkout.NewRequestID()
		w.Header().Set("Request-Id", id)
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		ctx = context.WithValue(ctx, loggerKey{}, log)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// LogHandler is a slog.Handler that adds the request id of the context to
// every record logged with one.
type LogHandler struct{ slog.Handler }

// Handle adds request_id and passes the record on.
func (h LogHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := RequestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

// WithAttrs keeps the wrapper.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return LogHandler{h.Handler.WithAttrs(attrs)}
}

// WithGroup keeps the wrapper.
func (h LogHandler) WithGroup(name string) slog.Handler {
	return LogHandler{h.Handler.WithGroup(name)}
}
