package server_test

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// requestLog returns the request log of a response, found by its
// Request-Id, once the writer has written what it holds.
func (h *harness) requestLog(r *response) (*checkout.RequestLog, error) {
	h.t.Helper()
	h.logs.Flush(context.Background())
	return h.db.RequestLogGet(context.Background(), r.Header.Get("Request-Id"))
}

// Every authenticated request is logged, found by its Request-Id: method,
// path, status, key, and bodies with every secret replaced by [redacted];
// never a header. Requests that fail authentication, and requests to no
// route, are not logged.
func TestRequestLogs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		readKey, read := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		liveKey, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		leaked := "ck_test_sk_" + checkout.NewSecret()
		hook := "whsec_" + checkout.NewSecret()
		const headerMarker = "header-value-never-stored"
		s := h.mustCreate(swordBody)
		checkouts := "/v1/stores/" + h.store.ID + "/checkouts"
		tooLarge := swordBody + rep(" ", api.MaxBodyBytes)
		withSecrets := `{"items":[{"name":"Sword","amount":1500}],"metadata":{"note":"key ` + leaked + `","hook":"` + hook + `"}}`

		tests := []struct {
			name   string
			req    request
			key    *checkout.APIKey
			mode   checkout.Mode
			path   string // as logged
			status int
			// reqBody is the request body logged; respHas a part of the
			// response body logged.
			reqBody, respHas string
		}{
			{"create with secrets in the body", request{method: "POST", path: checkouts, secret: h.secret, body: withSecrets},
				h.key, checkout.ModeTest, checkouts, 201,
				`{"items":[{"name":"Sword","amount":1500}],"metadata":{"note":"key [redacted]","hook":"[redacted]"}}`, `"note":"key [redacted]"`},
			{"retrieve", request{method: "GET", path: checkouts + "/" + s.ID, secret: h.secret},
				h.key, checkout.ModeTest, checkouts + "/" + s.ID, 200, "", `"id":"` + s.ID + `"`},
			{"a secret in the path", request{method: "GET", path: checkouts + "/" + leaked, secret: h.secret},
				h.key, checkout.ModeTest, checkouts + "/[redacted]", 400, "", `"code":"validation_failed"`},
			{"a secret in the query", request{method: "GET", path: checkouts + "/" + s.ID + "?key=" + leaked, secret: h.secret},
				h.key, checkout.ModeTest, checkouts + "/" + s.ID + "?key=[redacted]", 200, "", `"id":"` + s.ID + `"`},
			{"a request that fails validation", request{method: "POST", path: checkouts, secret: h.secret, body: `{"items":[]}`},
				h.key, checkout.ModeTest, checkouts, 400, `{"items":[]}`, `"code":"validation_failed"`},
			{"a request without permission", request{method: "POST", path: checkouts, secret: read, body: swordBody},
				readKey, checkout.ModeTest, checkouts, 403, swordBody, `"code":"permission_denied"`},
			{"a body without a content type", request{method: "POST", path: checkouts, secret: h.secret, body: withSecrets, headers: map[string]string{"Content-Type": ""}},
				h.key, checkout.ModeTest, checkouts, 415,
				`{"items":[{"name":"Sword","amount":1500}],"metadata":{"note":"key [redacted]","hook":"[redacted]"}}`, `"code":"unsupported_media_type"`},
			{"a body too large", request{method: "POST", path: checkouts, secret: h.secret, body: tooLarge},
				h.key, checkout.ModeTest, checkouts, 413, tooLarge[:api.MaxBodyBytes], `"code":"payload_too_large"`},
			{"a live request", request{method: "GET", path: checkouts + "/" + s.ID, secret: live},
				liveKey, checkout.ModeLive, checkouts + "/" + s.ID, 404, "", `"code":"checkout_not_found"`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				hh := h.with(t)
				headers := map[string]string{"X-Trace": headerMarker}
				maps.Copy(headers, tt.req.headers)
				tt.req.headers = headers
				r := hh.do(tt.req)
				if r.Status != tt.status {
					t.Fatalf("%s %s = %d %s; want %d", tt.req.method, tt.req.path, r.Status, r.Body, tt.status)
				}
				l, err := hh.requestLog(r)
				if err != nil {
					t.Fatalf("RequestLogGet(%s) = %v; want the request's log", r.Header.Get("Request-Id"), err)
				}
				if l.RequestID != r.Header.Get("Request-Id") || l.Method != tt.req.method || l.Path != tt.path || l.Status != tt.status ||
					l.APIKeyID != tt.key.ID || l.MerchantID != h.store.ID || l.Mode != tt.mode || !l.CreatedAt.Equal(h.clock.Now()) {
					t.Errorf("RequestLogGet = %+v; want %s %s %d by %s in %s at %v", l, tt.req.method, tt.path, tt.status, tt.key.ID, tt.mode, h.clock.Now())
				}
				if route := service.LogRoutes[1]; tt.req.method == "POST" && l.Route != service.LogRoutes[0] || tt.req.method != "POST" && l.Route != route {
					t.Errorf("logged route %q; want the %s route of service.LogRoutes", l.Route, tt.req.method)
				}
				if l.RequestBody != tt.reqBody {
					t.Errorf("logged request body %q; want %q", l.RequestBody, tt.reqBody)
				}
				if !strings.Contains(l.ResponseBody, tt.respHas) {
					t.Errorf("logged response body %q; want it to hold %q", l.ResponseBody, tt.respHas)
				}
				all := l.Path + "\n" + l.RequestBody + "\n" + l.ResponseBody
				for _, never := range []string{h.secret, read, live, leaked, hook, leaked[len("ck_test_sk_"):], headerMarker, "Bearer", "X-Trace"} {
					if strings.Contains(all, never) {
						t.Errorf("the log holds %q:\n%s", never, all)
					}
				}
			})
		}

		// Not authenticated, or no route: no log.
		for _, req := range []request{
			{method: "GET", path: checkouts + "/" + s.ID},
			{method: "GET", path: checkouts + "/" + s.ID, secret: "ck_test_sk_" + checkout.NewSecret()},
			{method: "POST", path: checkouts, body: swordBody, header: http.Header{"Authorization": {"Basic " + h.secret}}},
			{method: "GET", path: "/nope", secret: h.secret},
			{method: "DELETE", path: checkouts, secret: h.secret},
		} {
			r := h.do(req)
			if _, err := h.requestLog(r); !checkout.IsCode(err, checkout.ENotFound) {
				t.Errorf("%s %s answered %d: RequestLogGet = %v; want not_found (no log)", req.method, req.path, r.Status, err)
			}
		}
	})
}

// No secret reaches the server's log: not the key that authenticates, not
// one that fails, not one in a path, a query or a body, not on a failure.
func TestSecretsNeverLogged(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var fs *faultyStore
		h := newHarness(t, db, harnessOptions{wrapStore: func(st checkout.Store) checkout.Store {
			fs = &faultyStore{Store: st}
			return fs
		}})
		unknown := "ck_live_sk_" + checkout.NewSecret()
		inPath := "ck_test_sk_" + checkout.NewSecret()
		inQuery := "ck_test_sk_" + checkout.NewSecret()
		inBody := "whsec_" + checkout.NewSecret()
		checkouts := "/v1/stores/" + h.store.ID + "/checkouts"
		s := h.mustCreate(`{"items":[{"name":"Sword","amount":1500}],"metadata":{"k":"` + inBody + `"}}`)
		h.get(s.ID)
		h.do(request{method: "GET", path: checkouts + "/" + s.ID, secret: unknown})
		h.do(request{method: "GET", path: checkouts + "/" + inPath, secret: h.secret})
		h.do(request{method: "GET", path: "/v1/" + inPath})
		h.do(request{method: "GET", path: checkouts + "/" + s.ID + "?k=" + inQuery, secret: h.secret})
		h.post(`{"items":[],"title":"` + inBody + `"}`)
		fs.getFails.Store(true)
		wantError(t, h.get(s.ID), http.StatusInternalServerError, "internal_error")
		fs.getFails.Store(false)
		h.logs.Flush(context.Background())

		log := h.logBuf.String()
		if !strings.Contains(log, "request_id=req_") {
			t.Fatalf("the server logged no requests; log:\n%s", log)
		}
		for _, secret := range []string{h.secret, unknown, inPath, inQuery, inBody} {
			_, tail, _ := strings.Cut(secret, "_sk_")
			if tail == "" {
				tail = strings.TrimPrefix(secret, "whsec_")
			}
			if strings.Contains(log, secret) || strings.Contains(log, tail) {
				t.Errorf("the log holds the secret %s:\n%s", secret, log)
			}
		}
	})
}
