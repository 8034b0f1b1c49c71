package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Health checks and scrapes that succeed are logged at debug, every other
// request at info.
func TestAccessLogLevels(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		h.do(request{method: "GET", path: "/healthz"})
		h.do(request{method: "GET", path: "/readyz"})
		h.do(request{method: "GET", path: "/nope"})
		h.get("cs_" + strings.Repeat("a", 64))
		want := map[string]string{"path=/healthz": "level=DEBUG", "path=/readyz": "level=DEBUG", "path=/nope": "level=INFO", "path=/v1/stores/": "level=INFO"}
		for _, line := range strings.Split(h.logBuf.String(), "\n") {
			if !strings.Contains(line, "msg=request") {
				continue
			}
			for path, level := range want {
				if strings.Contains(line, path) {
					if !strings.Contains(line, level) {
						t.Errorf("access log %q; want %s", line, level)
					}
					delete(want, path)
				}
			}
		}
		if len(want) > 0 {
			t.Errorf("no access log line for %v", want)
		}
	})
}

// A crypto refund's link says where money goes: its page's requests are
// logged without the token, and an unknown token is the refund page's 404.
func TestAccessLogLeavesOutRefundLinks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, refunder := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermRefundsWrite)
		id := h.paidByCrypto("BTC")
		r := h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/payments/" + id + "/refunds", secret: refunder})
		link := refundOf(t, r).Crypto.LinkURL
		token := link[strings.LastIndex(link, "/")+1:]
		page := func(path string) (int, string) {
			resp, err := http.Get(h.srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if status, body := page("/refund/" + token); status != http.StatusOK || !strings.Contains(body, "A refund of $15.00") {
			t.Errorf("the refund page = %d %s", status, body)
		}
		if status, body := page("/refund/" + strings.Repeat("0", 64)); status != http.StatusNotFound || !strings.Contains(body, "Refund not found") {
			t.Errorf("an unknown link = %d %s", status, body)
		}
		if logs := h.logBuf.String(); strings.Contains(logs, token) || strings.Contains(logs, strings.Repeat("0", 64)) || !strings.Contains(logs, "path=/refund/[link]") {
			t.Errorf("the access log shows a refund link's token, or no refund page request:\n%s", logs)
		}
	})
}
