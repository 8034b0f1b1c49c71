package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/web"
)

// memLogs keeps the logs LogRequests records, in memory.
type memLogs struct {
	mu   sync.Mutex
	logs []*checkout.RequestLog
}

func (m *memLogs) Record(l *checkout.RequestLog) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs = append(m.logs, l)
}

func (m *memLogs) last() *checkout.RequestLog {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.logs[len(m.logs)-1]
}

// LogRequests records what the API needs to show a request (method, path,
// status, key, bodies with secrets redacted) and never its headers; and
// whatever bytes a client sends, the log can be stored on both databases.
func TestLogRequests(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		log, buf := logtest.Capture()
		w := service.NewRequestLogWriter(db, log)
		defer w.Close()
		clk := clock.NewFake(t0)
		key := &checkout.APIKey{ID: "key_0123", MerchantID: checkout.NewStoreID(), Mode: checkout.ModeLive}
		secret := "ck_live_sk_" + checkout.NewSecret()
		h := LogRequests(w, clk.Now, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			rw.WriteHeader(http.StatusTeapot)
			fmt.Fprintf(rw, `{"ok":true,"data":{"secret":%q}}`, secret)
		}))
		tests := []struct {
			name, body string
		}{
			{"json", `{"title":"` + secret + `"}`},
			{"escaped secret", `{"title":"\u0063k_live_sk_abc"}`},
			{"nul byte", "{\"title\":\"a\x00b\"}"},
			{"invalid utf-8", "{\"title\":\"\xff\xfe\"}"},
			{"empty", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := httptest.NewRequest("POST", "/v1/stores/x/checkouts?key="+secret, strings.NewReader(tt.body))
				r.Pattern = "POST /v1/stores/{storeId}/checkouts" // as the mux sets it
				r.Header.Set("Authorization", "Bearer "+secret)
				r.Header.Set("X-Custom", "header-value")
				id := checkout.NewRequestID()
				r = r.WithContext(web.WithID(context.WithValue(r.Context(), keyCtx{}, key), id))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				w.Flush(context.Background())
				got, err := db.RequestLogGet(context.Background(), id)
				if err != nil {
					t.Fatalf("RequestLogGet = %v; log: %s", err, buf)
				}
				if got.Method != "POST" || got.Status != http.StatusTeapot || got.APIKeyID != key.ID || got.MerchantID != key.MerchantID ||
					got.Mode != checkout.ModeLive || !got.CreatedAt.Equal(t0) || got.Path != "/v1/stores/x/checkouts?key=[redacted]" ||
					got.Route != "/v1/stores/{storeId}/checkouts" {
					t.Errorf("logged %+v", got)
				}
				all := got.Path + got.RequestBody + got.ResponseBody
				for _, leak := range []string{secret, secret[11:], "header-value", "Bearer", "_sk_abc"} {
					if strings.Contains(all, leak) {
						t.Errorf("the log holds %q: %+v", leak, got)
					}
				}
				if strings.ContainsRune(all, 0) {
					t.Errorf("the log holds a NUL byte: %q", all)
				}
			})
		}
	})
}

// A request the handler refuses without reading its body is logged with
// the body all the same, as much of it as a log keeps.
func TestLogRequestsUnreadBody(t *testing.T) {
	w := &memLogs{}
	key := &checkout.APIKey{ID: "key_0123", MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest}
	h := LogRequests(w, clock.NewFake(t0).Now, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(http.StatusForbidden)
	}))
	for _, body := range []string{`{"items":[]}`, strings.Repeat("x", maxLoggedBody+10)} {
		r := httptest.NewRequest("POST", "/v1/stores/x/checkouts", strings.NewReader(body))
		r = r.WithContext(context.WithValue(r.Context(), keyCtx{}, key))
		h.ServeHTTP(httptest.NewRecorder(), r)
		got := w.last().RequestBody
		if want := body[:min(len(body), maxLoggedBody)]; got != want {
			t.Errorf("logged body of %d bytes, unread by the handler: %d bytes; want %d", len(body), len(got), len(want))
		}
	}
}
