package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/logtest"
)

const (
	leakedKey     = "ck_live_sk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
	leakedHMACKey = "ck_test_hk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
	leakedWhsec   = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"
)

type stringer string

func (s stringer) String() string { return string(s) }

// Whatever carries a secret into a log record, the line written holds
// [redacted] in its place; the rest of the record is kept.
func TestLogHandlerRedactsSecrets(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf logtest.Buffer
			h := buf.TextHandler()
			if format == "json" {
				h = buf.JSONHandler()
			}
			log := slog.New(LogHandler{h}).With("attached", "with "+leakedWhsec)
			log.Error("a message quoting "+leakedKey,
				"str", "bearer "+leakedKey,
				"err", fmt.Errorf("driver: converting %q: %w", leakedHMACKey, errors.New("bad")),
				"stringer", stringer(leakedWhsec),
				"bytes", []byte(leakedKey),
				slog.Group("group", "inner", leakedKey, "n", 1),
				"kept", "key_0123",
				"num", 42,
			)
			out := buf.String()
			for _, s := range []string{"ck_live_sk_", "ck_test_hk_", "whsec_", "0123456789abcdef"} {
				if strings.Contains(out, s) {
					t.Errorf("log line holds %q: %s", s, out)
				}
			}
			for _, s := range []string{"[redacted]", "key_0123", "42", "driver: converting", "attached", "inner"} {
				if !strings.Contains(out, s) {
					t.Errorf("log line lacks %q: %s", s, out)
				}
			}
			if n := strings.Count(out, "[redacted]"); n != 7 {
				t.Errorf("%d redactions; want 7 (message, attached, str, err, stringer, bytes, group.inner): %s", n, out)
			}
		})
	}
}

// A record with no secret passes through as it is, request id added.
func TestLogHandlerAddsRequestID(t *testing.T) {
	var buf logtest.Buffer
	log := slog.New(LogHandler{buf.TextHandler()})
	var id string
	h := WithRequestID(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id = RequestID(r.Context())
		Logger(r.Context()).InfoContext(r.Context(), "inside", "path", r.URL.Path)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	log.InfoContext(context.Background(), "outside")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "msg=inside path=/x request_id="+id) || strings.Contains(lines[1], "request_id") {
		t.Errorf("log = %q; want the request's line with request_id=%s, the other without", lines, id)
	}
}
