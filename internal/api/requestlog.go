package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/web"
)

// maxLoggedBody is the most of a body a request log keeps.
const maxLoggedBody = 64 << 10

// RequestLogs takes the log of each request LogRequests sees; Record must
// not block (service.RequestLogWriter queues it for a batch).
type RequestLogs interface {
	Record(l *checkout.RequestLog)
}

// LogRequests records every request that reaches it (authenticated ones:
// it sits behind Authenticate) with its bodies, secrets redacted, and never
// its headers.
func LogRequests(rl RequestLogs, now clock.Func, next http.Handler) http.Handler {
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
			RequestID:    web.RequestID(r.Context()),
			MerchantID:   key.MerchantID,
			Mode:         key.Mode,
			APIKeyID:     key.ID,
			Method:       r.Method,
			Path:         checkout.RedactSecrets(r.URL.RequestURI()),
			Route:        route(r.Pattern),
			Status:       rec.status,
			Duration:     time.Since(start),
			RequestBody:  redactBody(reqBody.Bytes()),
			ResponseBody: redactBody(rec.body.Bytes()),
			CreatedAt:    created,
		})
	})
}

// route is the path part of a ServeMux pattern ("GET /v1/x/{id}" is
// /v1/x/{id}): the endpoint a request reached, which the dashboard's logs
// filter by. LogRequests runs inside the mux's handler, so the request
// carries the pattern that matched it.
func route(pattern string) string {
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

// redactBody replaces secrets in a body, however they are spelled (JSON
// escapes, percent-encoding: checkout.RedactSecrets), whether the body is
// valid JSON or not, and keeps the rest as it was sent.
func redactBody(b []byte) string {
	if len(b) > maxLoggedBody {
		b = b[:maxLoggedBody]
	}
	// What both databases can store: valid UTF-8 without NUL (PostgreSQL
	// text refuses it, and with it the whole batch of logs).
	return checkout.RedactSecrets(checkout.StorableText(string(b)))
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
