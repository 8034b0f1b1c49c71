package server_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/openapi"
)

// wantPlainError is wantError for errors that no field is at fault for:
// they carry neither param nor details.
func wantPlainError(t *testing.T, r *response, status int, code string) envelope {
	t.Helper()
	e := wantError(t, r, status, code)
	if e.Error.Param != "" || len(e.Error.Details) != 0 || e.Error.Message == "" {
		t.Errorf("%s: param %q, details %v, message %q; want no param or details, and a message", code, e.Error.Param, e.Error.Details, e.Error.Message)
	}
	return e
}

// Unknown routes answer 404 not_found and known paths with another method
// 405 method_not_allowed with Allow, before authentication, in the
// envelope with a Request-Id (checkResponse sees to those on every test's
// every response).
func TestRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody)
		checkouts := "/v1/stores/" + h.store.ID + "/checkouts"
		one := checkouts + "/" + s.ID
		tests := []struct {
			method, path string
			status       int
			allow        string
		}{
			{"GET", "/", 404, ""},
			{"GET", "/nope", 404, ""},
			{"POST", "/nope", 404, ""},
			{"GET", "/v1", 404, ""},
			{"GET", "/v1/", 404, ""},
			{"GET", "/v1/stores", 404, ""},
			{"GET", "/v1/stores/" + h.store.ID, 404, ""},
			{"GET", checkouts + "/", 404, ""},
			{"GET", one + "/", 404, ""},
			{"GET", one + "/extra", 404, ""},
			{"GET", "/v2" + one[3:], 404, ""},
			{"GET", "/" + one, 404, ""},
			{"GET", "/v1/stores/x/../" + h.store.ID + "/checkouts/" + s.ID, 404, ""},
			{"GET", "/V1" + one[3:], 404, ""},
			{"GET", checkouts, 405, "POST"},
			{"PUT", checkouts, 405, "POST"},
			{"DELETE", checkouts, 405, "POST"},
			{"PATCH", checkouts, 405, "POST"},
			{"OPTIONS", checkouts, 405, "POST"},
			{"POST", one, 405, "GET, HEAD"},
			{"DELETE", one, 405, "GET, HEAD"},
			{"PUT", one, 405, "GET, HEAD"},
			{"POST", "/v1/openapi.json", 405, "GET, HEAD"},
			{"POST", "/healthz", 405, "GET, HEAD"},
			{"DELETE", "/readyz", 405, "GET, HEAD"},
		}
		for _, tt := range tests {
			for _, secret := range []string{"", h.secret, "ck_test_sk_" + checkout.NewSecret()} {
				r := h.do(request{method: tt.method, path: tt.path, secret: secret})
				if tt.status == http.StatusNotFound {
					wantPlainError(t, r, 404, "not_found")
					continue
				}
				wantPlainError(t, r, 405, "method_not_allowed")
				if got := r.Header.Get("Allow"); got != tt.allow {
					t.Errorf("%s %s: Allow = %q; want %q", tt.method, tt.path, got, tt.allow)
				}
			}
		}
	})
}

// Every response has a Request-Id of its own.
func TestRequestIDsAreUnique(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody)
		seen := map[string]bool{}
		for _, r := range []*response{
			h.get(s.ID), h.get(s.ID), h.post(swordBody), h.post(`{}`),
			h.do(request{method: "GET", path: "/nope"}), h.do(request{method: "GET", path: "/healthz"}),
			h.do(request{method: "GET", path: "/v1/openapi.json"}),
		} {
			id := r.Header.Get("Request-Id")
			if seen[id] {
				t.Errorf("Request-Id %s answered twice", id)
			}
			seen[id] = true
		}
	})
}

// A body of 64 KiB is read, a byte more is 413, whether the client sends a
// Content-Length or not.
func TestBodyLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		// A valid request padded with white space to n bytes.
		padded := func(n int) string { return swordBody + rep(" ", n-len(swordBody)) }
		for _, chunked := range []bool{false, true} {
			for _, tt := range []struct {
				size   int
				status int
			}{
				{api.MaxBodyBytes - 1, 201},
				{api.MaxBodyBytes, 201},
				{api.MaxBodyBytes + 1, 413},
				{4 * api.MaxBodyBytes, 413},
			} {
				r := h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: padded(tt.size), chunked: chunked})
				if tt.status == 201 {
					if r.Status != 201 {
						t.Errorf("Create(%d bytes, chunked %v) = %d %s; want 201", tt.size, chunked, r.Status, r.Body)
					}
					continue
				}
				if r.Status != 413 {
					t.Errorf("Create(%d bytes, chunked %v) = %d %s; want 413", tt.size, chunked, r.Status, r.Body)
					continue
				}
				wantPlainError(t, r, 413, "payload_too_large")
			}
		}
		// Content type is checked first.
		r := h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: padded(2 * api.MaxBodyBytes),
			headers: map[string]string{"Content-Type": "text/plain"}})
		wantPlainError(t, r, 415, "unsupported_media_type")
	})
}

// A body is JSON only with Content-Type application/json, in UTF-8.
func TestContentType(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		tests := []struct {
			contentType string // "" sends none
			ok          bool
		}{
			{"", false},
			{"application/json", true},
			{"application/json; charset=utf-8", true},
			{"application/json; charset=UTF-8", true},
			{"application/json;charset=\"utf-8\"", true},
			{"Application/JSON", true},
			{"application/json; charset=latin1", false},
			{"application/json; charset=utf-16", false},
			{"text/plain", false},
			{"text/json", false},
			{"application/x-www-form-urlencoded", false},
			{"multipart/form-data; boundary=x", false},
			{"application/json-patch+json", false},
			{"application/jsonx", false},
			{"application/json, text/plain", false},
			{"json", false},
		}
		for _, tt := range tests {
			req := request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: swordBody,
				headers: map[string]string{"Content-Type": tt.contentType}}
			r := h.do(req)
			if tt.ok {
				if r.Status != http.StatusCreated {
					t.Errorf("Create with Content-Type %q = %d %s; want 201", tt.contentType, r.Status, r.Body)
				}
				continue
			}
			if r.Status != http.StatusUnsupportedMediaType {
				t.Errorf("Create with Content-Type %q = %d %s; want 415", tt.contentType, r.Status, r.Body)
				continue
			}
			wantPlainError(t, r, 415, "unsupported_media_type")
		}
	})
}

// A body that is not exactly one JSON object answers 400 invalid_json.
func TestInvalidJSON(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		deep := func(n int) string {
			return `{"items":[{"name":"Sword","amount":1500}],"metadata":` + rep(`{"a":`, n) + `"x"` + rep("}", n) + `}`
		}
		tests := []struct {
			name string
			body string
		}{
			{"empty", ""},
			{"white space", "  \n "},
			{"null", "null"},
			{"an array", "[" + swordBody + "]"},
			{"a string", `"items"`},
			{"a number", "42"},
			{"true", "true"},
			{"truncated", `{"items":[{"name":"Sword","amount":1500}]`},
			{"truncated in a string", `{"items":[{"name":"Swo`},
			{"an open brace", "{"},
			{"trailing object", swordBody + " {}"},
			{"trailing text", swordBody + "x"},
			{"trailing bracket", swordBody + "]"},
			{"two objects", swordBody + swordBody},
			{"single quotes", `{'items':[]}`},
			{"unquoted key", `{items:[]}`},
			{"trailing comma", `{"items":[{"name":"Sword","amount":1500},]}`},
			{"a comment", `{"items":[{"name":"Sword","amount":1500}] /* hi */}`},
			{"NaN", `{"items":[{"name":"Sword","amount":NaN}]}`},
			{"a byte order mark", "\ufeff" + swordBody},
			{"nested too deep", deep(40)},
		}
		for _, tt := range tests {
			r := h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: tt.body,
				headers: map[string]string{"Content-Type": "application/json"}})
			if r.Status != http.StatusBadRequest {
				t.Errorf("Create(%s: %q) = %d %s; want 400 invalid_json", tt.name, short(tt.body), r.Status, r.Body)
				continue
			}
			wantPlainError(t, r, 400, "invalid_json")
		}
		// White space around one object is fine, and so is nesting within
		// the limit (refused by the field rules, not the parser).
		if r := h.post(" \n\t" + swordBody + "\n "); r.Status != http.StatusCreated {
			t.Errorf("Create(object in white space) = %d %s; want 201", r.Status, r.Body)
		}
		r := h.post(deep(20))
		if e := wantError(t, r, 400, "validation_failed"); e.Error.Param != "metadata.a" {
			t.Errorf("Create(nested 20 deep) param = %q; want metadata.a", e.Error.Param)
		}
	})
}

// faultyStore is a store that fails or panics on demand: how the tests
// reach checkoutd's answers to internal failures through the HTTP surface,
// with no switch in production code.
type faultyStore struct {
	checkout.Store
	getPanics atomic.Bool // SessionGet panics
	getFails  atomic.Bool // SessionGet returns an unexpected error
	txPanics  atomic.Bool // a transaction panics after its work, before committing
}

const faultDetail = "disk on fire at /var/lib/checkoutd/secret-detail"

func (s *faultyStore) SessionGet(ctx context.Context, id string) (*checkout.Session, error) {
	if s.getPanics.Load() {
		panic(faultDetail)
	}
	if s.getFails.Load() {
		return nil, errors.New(faultDetail)
	}
	return s.Store.SessionGet(ctx, id)
}

func (s *faultyStore) InTx(ctx context.Context, fn func(checkout.Tx) error) error {
	return s.Store.InTx(ctx, func(tx checkout.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if s.txPanics.Load() {
			panic(faultDetail)
		}
		return nil
	})
}

// A panic or an unexpected error inside a request answers 500
// internal_error with a generic message; the detail goes to the log under
// the request id, never to the client. A panic inside a transaction rolls
// it back, and the server goes on serving.
func TestInternalErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var fs *faultyStore
		h := newHarness(t, db, harnessOptions{wrapStore: func(st checkout.Store) checkout.Store {
			fs = &faultyStore{Store: st}
			return fs
		}})
		s := h.mustCreate(swordBody)
		tests := []struct {
			name    string
			fault   *atomic.Bool
			req     func() *response
			logWant string
		}{
			{"panic", &fs.getPanics, func() *response { return h.get(s.ID) }, "panic serving request"},
			{"error", &fs.getFails, func() *response { return h.get(s.ID) }, "request failed"},
			{"panic in a transaction", &fs.txPanics, func() *response { return h.post(swordBody) }, "panic serving request"},
		}
		for _, tt := range tests {
			tt.fault.Store(true)
			r := tt.req()
			tt.fault.Store(false)
			e := wantPlainError(t, r, http.StatusInternalServerError, "internal_error")
			if e.Error.Message != "An internal error occurred." || strings.Contains(string(r.Body), "fire") {
				t.Errorf("%s: answered %s; want the generic message only", tt.name, r.Body)
			}
			id := r.Header.Get("Request-Id")
			var line string
			for l := range strings.Lines(h.logBuf.String()) {
				if strings.Contains(l, "request_id="+id) && strings.Contains(l, tt.logWant) {
					line = l
				}
			}
			if !strings.Contains(line, "fire") {
				t.Errorf("%s: no log line %q with the detail under request_id=%s; log:\n%s", tt.name, tt.logWant, id, h.logBuf)
			}
		}
		// Nothing of the failed transaction stayed, and the server (and
		// SQLite's one write connection) is free.
		if n := len(h.events(h.store.ID, checkout.ModeTest, checkout.EventCheckoutCreated)); n != 1 {
			t.Errorf("%d checkout.created events; want 1: the panicking transaction's was committed", n)
		}
		if r := h.post(swordBody); r.Status != http.StatusCreated {
			t.Errorf("Create after the failures = %d %s; want 201", r.Status, r.Body)
		}
		if r := h.get(s.ID); r.Status != http.StatusOK {
			t.Errorf("Retrieve after the failures = %d %s; want 200", r.Status, r.Body)
		}
	})
}

// When the database does not answer, the API answers 503
// service_unavailable with Retry-After: for keys cached or not, on reads
// and writes; /readyz says so too, and /healthz still answers.
func TestDatabaseUnavailable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody) // caches h.key and the store
		_, uncached := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			req  request
		}{
			{"retrieve", request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: h.secret}},
			{"create", request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: swordBody}},
			{"create with an Idempotency-Key", request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: h.secret, body: swordBody,
				headers: map[string]string{"Idempotency-Key": "k1"}}},
			{"retrieve with a key not cached", request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, secret: uncached}},
			{"readyz", request{method: "GET", path: "/readyz"}},
		} {
			r := h.do(tt.req)
			if r.Status != http.StatusServiceUnavailable {
				t.Errorf("%s with the database closed = %d %s; want 503", tt.name, r.Status, r.Body)
				continue
			}
			wantPlainError(t, r, http.StatusServiceUnavailable, "service_unavailable")
			if ra := r.Header.Get("Retry-After"); ra == "" {
				t.Errorf("%s: 503 without Retry-After", tt.name)
			}
		}
		if r := h.do(request{method: "GET", path: "/healthz"}); r.Status != http.StatusOK {
			t.Errorf("healthz with the database closed = %d %s; want 200", r.Status, r.Body)
		}
	})
}

// The health endpoints answer in the envelope.
func TestHealth(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		for path, want := range map[string]string{
			"/healthz": `{"ok":true,"data":{"status":"ok"}}`,
			"/readyz":  `{"ok":true,"data":{"database":"ok","status":"ready"}}`,
		} {
			r := h.do(request{method: "GET", path: path})
			if r.Status != http.StatusOK || strings.TrimSpace(string(r.Body)) != want {
				t.Errorf("GET %s = %d %s; want 200 %s", path, r.Status, r.Body, want)
			}
		}
	})
}

// GET /v1/openapi.json serves the document as it is, without credentials.
func TestOpenAPIDocument(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		r := h.do(request{method: "GET", path: "/v1/openapi.json"})
		if r.Status != http.StatusOK || !bytes.Equal(r.Body, openapi.JSON) {
			t.Fatalf("GET /v1/openapi.json = %d (%d bytes); want 200 and the document (%d bytes)", r.Status, len(r.Body), len(openapi.JSON))
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q; want application/json", ct)
		}
	})
}
