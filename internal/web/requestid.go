package web

import (
	"context"
	"fmt"
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

// WithID returns ctx carrying id as its request's id, for RequestID and the
// log lines of LogHandler.
func WithID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
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
		ctx := WithID(r.Context(), id)
		ctx = context.WithValue(ctx, loggerKey{}, log)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// LogHandler is a slog.Handler that adds the request id of the context to
// every record logged with one, and replaces every secret-shaped string in a
// record (API key secrets, webhook signing secrets) with [redacted].
//
// No code path logs a secret on purpose: handlers never log headers or
// bodies, and errors name ids, not secrets. The redaction is the last line
// against the one that does by accident, such as a driver error that quotes
// a value, or a key id argument that was really a secret.
type LogHandler struct{ slog.Handler }

// Handle redacts the record, adds request_id and passes it on.
func (h LogHandler) Handle(ctx context.Context, rec slog.Record) error {
	rec = redactRecord(rec)
	if id := RequestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

// WithAttrs keeps the wrapper, and redacts the attributes.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i], _ = redactAttr(a)
	}
	return LogHandler{h.Handler.WithAttrs(out)}
}

// redactRecord returns rec with its secrets redacted; rec itself when it
// holds none, which is nearly always.
func redactRecord(rec slog.Record) slog.Record {
	msg := checkout.RedactSecrets(rec.Message)
	changed := msg != rec.Message
	attrs := make([]slog.Attr, 0, rec.NumAttrs())
	rec.Attrs(func(a slog.Attr) bool {
		a, c := redactAttr(a)
		changed = changed || c
		attrs = append(attrs, a)
		return true
	})
	if !changed {
		return rec
	}
	out := slog.NewRecord(rec.Time, rec.Level, msg, rec.PC)
	out.AddAttrs(attrs...)
	return out
}

// redactAttr returns a with the secrets of its value redacted, and whether
// there were any. Errors and Stringers are judged by their text, and
// replaced by it when it holds a secret.
func redactAttr(a slog.Attr) (slog.Attr, bool) {
	v := a.Value.Resolve()
	var text string
	switch v.Kind() {
	case slog.KindString:
		text = v.String()
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		changed := false
		for i, g := range group {
			var c bool
			out[i], c = redactAttr(g)
			changed = changed || c
		}
		if !changed {
			return a, false
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}, true
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			text = x.Error()
		case fmt.Stringer:
			text = x.String()
		case []byte:
			text = string(x)
		default:
			return a, false
		}
	default:
		return a, false
	}
	if r := checkout.RedactSecrets(text); r != text {
		return slog.String(a.Key, r), true
	}
	return a, false
}

// WithGroup keeps the wrapper.
func (h LogHandler) WithGroup(name string) slog.Handler {
	return LogHandler{h.Handler.WithGroup(name)}
}
