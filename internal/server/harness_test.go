package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/web"
	"github.com/checkoutd/checkoutd/openapi"
)

// t0 is when every test's fake clock starts.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// checkoutBase is the checkout base URL the tests configure.
const checkoutBase = "https://pay.example.test"

// apiBase is the API's configured base URL (--base-url): signed requests'
// @target-uri is rebuilt from it, whatever address the test server has.
const apiBase = "http://api.example.test"

// harness is a whole checkoutd HTTP surface on a real database, behind a
// real HTTP server, with a fake clock. Every response it sees is checked
// against the OpenAPI document.
type harness struct {
	t     *testing.T
	db    *store.DB
	clock *clock.Fake
	svc   *service.Service
	logs  *service.RequestLogWriter
	srv   *httptest.Server
	// cacheClock drives the key and store caches (real-time staleness).
	cacheClock *clock.Fake
	// logBuf receives every log line the server writes.
	logBuf *logtest.Buffer
	// authFailures is the API's limit of failed authentications.
	authFailures *api.FailureLimiter
	// A store with a test-mode write key.
	store  *checkout.Merchant
	secret string
	key    *checkout.APIKey
}

type harnessOptions struct {
	rateLimit float64
	rateBurst int
	// authFailureLimit is failed authentications per client per minute;
	// 0 leaves them unlimited.
	authFailureLimit int
	// wrapStore, when set, stands between the service and the database:
	// how a test makes the store fail or panic without a switch in
	// production code.
	wrapStore func(checkout.Store) checkout.Store
	// acquirers are the card acquirers stores can set up accounts at.
	acquirers []pay.AcquirerConnector
}

// testSecretsKey seals the harness's HMAC keys' secrets.
var testSecretsKey, _ = seal.NewKey([]byte("harness secrets key, 32 bytes!!!"))

func newHarness(t *testing.T, db *store.DB, opts ...harnessOptions) *harness {
	t.Helper()
	o := harnessOptions{rateLimit: 0}
	if len(opts) > 0 {
		o = opts[0]
	}
	clk := clock.NewFake(t0)
	cacheClk := clock.NewFake(t0)
	logBuf := &logtest.Buffer{}
	log := slog.New(web.LogHandler{Handler: logBuf.TextHandler()})
	a := app.New(app.Config{
		Store: db, WrapStore: o.wrapStore, Logger: log,
		Now: clk.Now, CacheNow: cacheClk.Now, CheckoutBaseURL: checkoutBase, BaseURL: apiBase,
		RateLimit: o.rateLimit, RateBurst: o.rateBurst, AuthFailureLimit: o.authFailureLimit,
		SecretsKey: testSecretsKey, Processors: pay.Registry{Test: pay.Simulators()}, Acquirers: o.acquirers,
	})
	t.Cleanup(a.Close)
	h := &harness{t: t, db: db, clock: clk, cacheClock: cacheClk, svc: a.Service, logs: a.RequestLogs, logBuf: logBuf,
		authFailures: a.AuthFailures}
	handler := a.Handler
	h.srv = httptest.NewServer(handler)
	t.Cleanup(h.srv.Close)
	h.store = h.newStore("Acme Games", "USD")
	h.key, h.secret = h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)
	return h
}

func (h *harness) newStore(name, currency string) *checkout.Merchant {
	h.t.Helper()
	m, err := h.svc.CreateMerchant(context.Background(), checkout.MerchantParams{
		Name: name, Currency: currency, Website: "https://acme.example",
	})
	if err != nil {
		h.t.Fatalf("CreateMerchant: %v", err)
	}
	return m
}

func (h *harness) newKey(storeID string, mode checkout.Mode, perms ...checkout.Permission) (*checkout.APIKey, string) {
	h.t.Helper()
	k, secret, err := h.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{
		MerchantID: storeID, Mode: mode, Type: checkout.KeyBearer, Permissions: perms,
	})
	if err != nil {
		h.t.Fatalf("CreateAPIKey: %v", err)
	}
	return k, secret
}

// response is a response read whole.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// decode decodes the body into v.
func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// envelope is the body of any API response.
type envelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code      string               `json:"code"`
		Message   string               `json:"message"`
		Param     string               `json:"param"`
		RequestID string               `json:"request_id"`
		Details   []checkout.Violation `json:"details"`
	} `json:"error"`
}

func (r *response) envelope(t *testing.T) envelope {
	t.Helper()
	var e envelope
	r.decode(t, &e)
	return e
}

// request describes one request to the server.
type request struct {
	method  string
	path    string
	body    string
	secret  string            // "" sends no Authorization header
	headers map[string]string // set after the defaults; "" removes a header
	// header is added last, as is: for empty and repeated values.
	header http.Header
	// chunked sends the body without a Content-Length.
	chunked bool
}

// exchange is one request sent and its response, not yet checked.
type exchange struct {
	req     *http.Request
	reqBody []byte
	resp    *response
}

// send sends req. It may run on any goroutine; check the exchange on the
// test's.
func (h *harness) send(req request) (*exchange, error) {
	var body io.Reader
	if req.body != "" {
		body = strings.NewReader(req.body)
		if req.chunked {
			body = io.MultiReader(body) // hides the length
		}
	}
	hr, err := http.NewRequest(req.method, h.srv.URL+req.path, body)
	if err != nil {
		return nil, err
	}
	if req.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.secret != "" {
		hr.Header.Set("Authorization", "Bearer "+req.secret)
	}
	for k, v := range req.headers {
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		hr.Header.Set(k, v)
	}
	for k, vs := range req.header {
		for _, v := range vs {
			hr.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.method, req.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the response: %w", req.method, req.path, err)
	}
	return &exchange{req: hr, reqBody: []byte(req.body), resp: &response{Status: resp.StatusCode, Header: resp.Header, Body: b}}, nil
}

// do sends req and checks the response against the OpenAPI document and the
// rules every response follows (envelope, Request-Id).
func (h *harness) do(req request) *response {
	h.t.Helper()
	x, err := h.send(req)
	if err != nil {
		h.t.Fatal(err)
	}
	checkResponse(h.t, x.req, x.reqBody, x.resp)
	return x.resp
}

// doAll sends every request at once, each from a goroutine of its own, and
// checks every response as do does. Responses are in the order of reqs.
func (h *harness) doAll(reqs []request) []*response {
	h.t.Helper()
	xs := make([]*exchange, len(reqs))
	errs := make([]error, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Go(func() {
			<-start
			xs[i], errs[i] = h.send(req)
		})
	}
	close(start)
	wg.Wait()
	out := make([]*response, len(reqs))
	for i, x := range xs {
		if errs[i] != nil {
			h.t.Fatal(errs[i])
		}
		checkResponse(h.t, x.req, x.reqBody, x.resp)
		out[i] = x.resp
	}
	return out
}

// post creates a session with the harness key.
func (h *harness) post(body string) *response {
	h.t.Helper()
	return h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", body: body, secret: h.secret})
}

// get retrieves a session with the harness key.
func (h *harness) get(id string) *response {
	h.t.Helper()
	return h.do(request{method: "GET", path: "/v1/stores/" + h.store.ID + "/checkouts/" + id, secret: h.secret})
}

// mustCreate creates a session and returns it.
func (h *harness) mustCreate(body string) checkout.SessionJSON {
	h.t.Helper()
	r := h.post(body)
	if r.Status != http.StatusCreated {
		h.t.Fatalf("create = %d %s; want 201", r.Status, r.Body)
	}
	var s checkout.SessionJSON
	if err := json.Unmarshal(r.envelope(h.t).Data, &s); err != nil {
		h.t.Fatal(err)
	}
	return s
}

// wantError checks that r is an error envelope with status and code.
func wantError(t *testing.T, r *response, status int, code string) envelope {
	t.Helper()
	e := r.envelope(t)
	if r.Status != status || e.OK || e.Error == nil || e.Error.Code != code {
		t.Fatalf("got %d %s; want %d %s", r.Status, r.Body, status, code)
	}
	return e
}

var (
	specOnce   sync.Once
	specRouter routers.Router
	specDoc    *openapi3.T
	specErr    error
)

func loadSpec() {
	doc, err := goPatterns(openapi.JSON)
	if err != nil {
		specErr = err
		return
	}
	loader := openapi3.NewLoader()
	specDoc, specErr = loader.LoadFromData(doc)
	if specErr != nil {
		return
	}
	if specErr = specDoc.Validate(context.Background()); specErr != nil {
		return
	}
	// Route on paths alone, whatever host the test server has.
	specDoc.Servers = nil
	specRouter, specErr = gorillamux.NewRouter(specDoc)
}

// goPatterns returns the document with each pattern's \uXXXX escapes written
// as Go's regexp writes them, \x{XXXX}, and checks that Go's regexp compiles
// every pattern. The document's patterns are ECMA-262 regular expressions and
// spell non-ASCII characters as \uXXXX, so that the document is ASCII (Prism
// puts a pattern in a response header, and Node refuses non-ASCII there). Go's
// regexp does not read \u. kin-openapi's own validator translates it, but its
// JSON Schema 2020-12 validator, the one OpenAPI 3.1 documents get, compiles
// patterns with Go's regexp as they are, and on failure falls back without a
// word to the validator of OpenAPI 3.0, which ignores 2020-12 keywords such as
// propertyNames (metadata keys).
func goPatterns(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var err error
	walkJSON(v, "#", func(ptr string, obj map[string]any) {
		p, ok := obj["pattern"].(string)
		if !ok || err != nil {
			return
		}
		obj["pattern"] = ecmaToGoRegexp(p)
		if _, cerr := regexp.Compile(obj["pattern"].(string)); cerr != nil {
			err = fmt.Errorf("%s/pattern: Go's regexp refuses %q (%v): say it another way", ptr, p, cerr)
		}
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// ecmaToGoRegexp rewrites the \uXXXX escapes of an ECMA-262 regular
// expression as \x{XXXX}, leaving every other escape (\\u included) as it is.
func ecmaToGoRegexp(re string) string {
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		if re[i] != '\\' || i+1 == len(re) {
			b.WriteByte(re[i])
			continue
		}
		if re[i+1] == 'u' && i+6 <= len(re) && isHex4(re[i+2:i+6]) {
			b.WriteString(`\x{` + re[i+2:i+6] + `}`)
			i += 5
			continue
		}
		b.WriteString(re[i : i+2])
		i++
	}
	return b.String()
}

func isHex4(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return len(s) == 4
}

// checkResponse validates a response against the OpenAPI document: the
// operation's declared status, headers and body schema. Responses to routes
// the document does not have (unknown paths, wrong methods) are checked
// against the document's shared response for their status (NotFound,
// MethodNotAllowed), or the ErrorEnvelope schema. Every response must be
// JSON in the envelope and carry a Request-Id, and an error's request_id
// must be that Request-Id.
func checkResponse(t *testing.T, req *http.Request, reqBody []byte, r *response) {
	t.Helper()
	specOnce.Do(loadSpec)
	if specErr != nil {
		t.Fatalf("OpenAPI document: %v", specErr)
	}
	id := r.Header.Get("Request-Id")
	if !strings.HasPrefix(id, "req_") || len(id) != 36 {
		t.Errorf("%s %s: Request-Id = %q; want req_ and 32 hex", req.Method, req.URL.Path, id)
	}
	if req.URL.Path == "/v1/openapi.json" {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type = %q; want application/json", req.Method, req.URL.Path, ct)
	}
	var e envelope
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", req.Method, req.URL.Path, r.Body)
	}
	if e.Error != nil && e.Error.RequestID != id {
		t.Errorf("%s %s: error.request_id = %q; want the Request-Id header, %q", req.Method, req.URL.Path, e.Error.RequestID, id)
	}
	ctx := context.Background()
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, pathParams, err := specRouter.FindRoute(vreq)
	if err != nil {
		checkUnrouted(t, req, r)
		return
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: vreq, PathParams: pathParams, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  r.Status,
		Header:  r.Header,
		Body:    io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(ctx, input); err != nil {
		t.Errorf("%s %s: response %d %s does not match the OpenAPI document: %v", req.Method, req.URL.Path, r.Status, r.Body, err)
	}
}

// unroutedResponses names the document's shared response for each status a
// request outside its operations can get.
var unroutedResponses = map[int]string{
	http.StatusNotFound:         "NotFound",
	http.StatusMethodNotAllowed: "MethodNotAllowed",
}

// checkUnrouted checks a response to a request the document has no
// operation for against the shared response of its status: body schema and
// required headers.
func checkUnrouted(t *testing.T, req *http.Request, r *response) {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", req.Method, req.URL.Path, r.Body)
	}
	name, ok := unroutedResponses[r.Status]
	if !ok {
		t.Errorf("%s %s (no route in the document): status %d; want one of %v", req.Method, req.URL.Path, r.Status, unroutedResponses)
		return
	}
	resp := specDoc.Components.Responses[name].Value
	schema := resp.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s %s (no route in the document): %d %s does not match the %s response: %v", req.Method, req.URL.Path, r.Status, r.Body, name, err)
	}
	for h, ref := range resp.Headers {
		val := r.Header.Get(h)
		if val == "" {
			if ref.Value.Required {
				t.Errorf("%s %s (no route in the document): %d has no %s header; the %s response requires it", req.Method, req.URL.Path, r.Status, h, name)
			}
			continue
		}
		if err := ref.Value.Schema.Value.VisitJSON(val, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s %s (no route in the document): header %s: %q does not match the %s response: %v", req.Method, req.URL.Path, h, val, name, err)
		}
	}
}
