package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/metrics"
	"github.com/checkoutd/checkoutd/internal/metrics/metricstest"
	"github.com/checkoutd/checkoutd/internal/server"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// metricsServer is the HTTP surface on db with a registry, behind a real
// server, and a store with a test-mode write key.
type metricsServer struct {
	url     string
	storeID string
	secret  string
}

func newMetricsServer(t *testing.T, db *store.DB, d server.Deps) *metricsServer {
	t.Helper()
	log := logtest.Logger(t)
	svc := service.New(service.Config{Store: db, CheckoutBaseURL: "https://pay.example.test", Logger: log})
	logs := service.NewRequestLogWriter(db, log)
	t.Cleanup(logs.Close)
	d.Service, d.Logger, d.RequestLogs = svc, log, logs
	d.RateLimiter = api.NewRateLimiter(0, 1, nil)
	srv := httptest.NewServer(server.New(d))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	m, err := svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest,
		Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		t.Fatal(err)
	}
	return &metricsServer{url: srv.URL, storeID: m.ID, secret: secret}
}

// send makes one request and returns its status and body.
func (s *metricsServer) send(t *testing.T, method, path, secret, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// scrapeMetrics reads base+/metrics and parses it strictly.
func scrapeMetrics(t *testing.T, base string) (*metricstest.Scrape, string) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4;") {
		t.Fatalf("GET /metrics = %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s, err := metricstest.Parse(string(b))
	if err != nil {
		t.Fatalf("GET /metrics: %v\n%s", err, b)
	}
	return s, string(b)
}

const (
	createRoute   = "/v1/stores/{storeId}/checkouts"
	retrieveRoute = "/v1/stores/{storeId}/checkouts/{checkoutId}"
)

// Requests are counted and timed by route pattern, method and status code;
// labels never hold an id, a path or a secret.
func TestMetricsHTTP(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newMetricsServer(t, db, server.Deps{})
		checkouts := "/v1/stores/" + s.storeID + "/checkouts"
		var id string
		for range 2 {
			status, _, body := s.send(t, "POST", checkouts, s.secret, `{"items":[{"name":"Sword","amount":1500}]}`)
			if status != 201 {
				t.Fatalf("create = %d %s", status, body)
			}
			id = body[strings.Index(body, `"cs_`)+1:][:67]
		}
		wantStatus := func(method, path, secret string, want int) {
			t.Helper()
			if status, _, body := s.send(t, method, path, secret, ""); status != want {
				t.Fatalf("%s %s = %d %s; want %d", method, path, status, body, want)
			}
		}
		wantStatus("GET", checkouts+"/"+id, s.secret, 200)
		wantStatus("GET", checkouts+"/cs_"+strings.Repeat("0", 64), s.secret, 404)
		wantStatus("GET", checkouts+"/"+id, "", 401)
		wantStatus("GET", checkouts+"/"+id, "ck_test_sk_"+strings.Repeat("x", 43), 401)
		wantStatus("GET", "/nope/"+id, "", 404)
		wantStatus("GET", "//v1/../metrics", "", 404)
		wantStatus("DELETE", checkouts, s.secret, 405)
		wantStatus("BREW", "/healthz", "", 405)
		wantStatus("GET", "/healthz", "", 200)

		first, text := scrapeMetrics(t, s.url)
		requests := func(sc *metricstest.Scrape, route, method, code string) float64 {
			return sc.Value("checkoutd_http_requests_total", "route", route, "method", method, "code", code)
		}
		for _, tt := range []struct {
			route, method, code string
			want                float64
		}{
			{createRoute, "POST", "201", 2},
			{retrieveRoute, "GET", "200", 1},
			{retrieveRoute, "GET", "404", 1},
			{retrieveRoute, "GET", "401", 2},
			{"unmatched", "GET", "404", 2},
			{createRoute, "DELETE", "405", 1},
			{"/healthz", "other", "405", 1},
			{"/healthz", "GET", "200", 1},
			{"/metrics", "GET", "200", 0}, // the scrape counts once it is over
		} {
			if got := requests(first, tt.route, tt.method, tt.code); got != tt.want {
				t.Errorf("requests{route=%q,method=%q,code=%q} = %v; want %v", tt.route, tt.method, tt.code, got, tt.want)
			}
		}
		if got, _ := first.Sum("checkoutd_http_requests_total"); got != 11 {
			t.Errorf("requests in all = %v; want 11", got)
		}
		if got := first.Value("checkoutd_http_request_duration_seconds_count", "route", createRoute, "method", "POST"); got != 2 {
			t.Errorf("duration count of creates = %v; want 2", got)
		}
		if got := first.Value("checkoutd_http_request_duration_seconds_bucket", "route", createRoute, "method", "POST", "le", "+Inf"); got != 2 {
			t.Errorf("+Inf bucket of creates = %v; want 2", got)
		}
		if got := first.Value("checkoutd_http_requests_in_flight"); got != 1 {
			t.Errorf("requests in flight during the scrape = %v; want 1 (the scrape)", got)
		}
		if first.Types["checkoutd_http_request_duration_seconds"] != "histogram" || first.Types["checkoutd_http_requests_total"] != "counter" {
			t.Errorf("types = %v", first.Types)
		}
		for _, leak := range []string{s.storeID, id, s.secret, "/nope", "BREW"} {
			if strings.Contains(text, leak) {
				t.Errorf("/metrics holds %q:\n%s", leak, text)
			}
		}
		// An id or key of any kind (cs_..., ck_test_sk_...), but not the
		// runtime's names that hold the letters (go_memstats_mallocs_total).
		if leak := regexp.MustCompile(`\b(cs|ck)_`).FindString(text); leak != "" {
			t.Errorf("/metrics holds %q:\n%s", leak, text)
		}

		// Counts move.
		s.send(t, "POST", checkouts, s.secret, `{"items":[{"name":"Sword","amount":1500}]}`)
		second, _ := scrapeMetrics(t, s.url)
		if got := requests(second, createRoute, "POST", "201"); got != 3 {
			t.Errorf("creates after one more = %v; want 3", got)
		}
		if got := requests(second, "/metrics", "GET", "200"); got != 1 {
			t.Errorf("scrapes counted = %v; want 1", got)
		}
	})
}

// With HideMetrics the main handler has no /metrics, and MetricsHandler
// serves it alone, with the main handler's series.
func TestMetricsOnAListenerOfItsOwn(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	reg := metrics.NewRegistry()
	s := newMetricsServer(t, db, server.Deps{Metrics: reg, HideMetrics: true})
	status, hdr, body := s.send(t, "GET", "/metrics", "", "")
	if status != 404 || !strings.Contains(body, `"not_found"`) || hdr.Get("Request-Id") == "" {
		t.Errorf("GET /metrics on the main handler = %d %s; want 404 not_found in the envelope", status, body)
	}
	own := httptest.NewServer(server.MetricsHandler(reg, nil))
	defer own.Close()
	sc, _ := scrapeMetrics(t, own.URL)
	if got := sc.Value("checkoutd_http_requests_total", "route", "unmatched", "code", "404"); got != 1 {
		t.Errorf("the main handler's 404 on the metrics listener = %v; want 1", got)
	}
	resp, err := http.Get(own.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /healthz on the metrics listener = %d; want 404: it serves /metrics alone", resp.StatusCode)
	}
}

// A scraper that asks for OpenMetrics is served it through the whole
// surface (the middleware passes the negotiation through), with the same
// series.
func TestMetricsOpenMetrics(t *testing.T) {
	s := newMetricsServer(t, storetest.Open(t, "sqlite"), server.Deps{})
	s.send(t, "GET", "/healthz", "", "")
	req, err := http.NewRequest("GET", s.url+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, metricstest.OpenMetricsType+"; version=1.0.0;") {
		t.Fatalf("GET /metrics asking for OpenMetrics = %d %q", resp.StatusCode, ct)
	}
	sc, err := metricstest.ParseOpenMetrics(string(b))
	if err != nil {
		t.Fatalf("ParseOpenMetrics: %v\n%s", err, b)
	}
	if got := sc.Value("checkoutd_http_requests_total", "route", "/healthz", "method", "GET", "code", "200"); got != 1 {
		t.Errorf("requests{route=/healthz} in OpenMetrics = %v; want 1", got)
	}
	if sc.Types["checkoutd_http_request_duration_seconds"] != "histogram" || sc.Types["go_goroutines"] != "gauge" {
		t.Errorf("types = %v", sc.Types)
	}
}
