package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/metrics/metricstest"
)

// scrapeServe reads url (a /metrics) and parses it strictly.
func scrapeServe(t *testing.T, url string) *metricstest.Scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET %s = %d %q: %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s, err := metricstest.Parse(string(b))
	if err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, b)
	}
	return s
}

// The whole binary's /metrics, after real traffic and webhook deliveries:
// every family the operator documentation lists is there, and the counts
// move with what happened.
func TestServeMetrics(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		r := newEventReceiver(t, true) // holds the attempts until opened
		base, _, _ := startServe(t, db, "--webhook-allow-cidr", "127.0.0.0/8", "--webhook-ca-file", r.caFile, "--rate-limit", "0")
		s := createStore(t, vars{}, db.flags, "--name", "Acme Games", "--currency", "USD")
		k := createKey(t, vars{}, db.flags, "--store", s.ID)
		mustCLI(t, vars{}, append([]string{"webhooks", "create", "--json", "--store", s.ID, "--mode", "test", "--url", r.url,
			"--events", "checkout.created", "--webhook-allow-cidr", "127.0.0.0/8"}, db.flags...)...)

		checkouts := base + "/v1/stores/" + s.ID + "/checkouts"
		var id string
		for range 2 {
			status, _, created := call(t, "POST", checkouts, k.Secret, `{"items":[{"name":"Sword","amount":1500}]}`)
			if status != http.StatusCreated {
				t.Fatalf("create = %d", status)
			}
			id = created.Data.ID
		}
		if status, _, _ := call(t, "GET", checkouts+"/"+id, k.Secret, ""); status != http.StatusOK {
			t.Fatalf("retrieve = %d", status)
		}
		waitFor(t, "both deliveries held by the receiver", guard, func() bool { return len(r.inHeld) >= 2 })
		var m *metricstest.Scrape
		waitFor(t, "a round of each background job", guard, func() bool {
			m = scrapeServe(t, base+"/metrics")
			return m.Value("checkoutd_job_runs_total", "job", "expire-sessions") >= 1 && m.Value("checkoutd_job_runs_total", "job", "purge") >= 1
		})
		for _, tt := range []struct {
			name  string
			pairs []string
			want  float64
		}{
			{"checkoutd_sessions_created_total", []string{"mode", "test"}, 2},
			{"checkoutd_sessions_created_total", []string{"mode", "live"}, 0},
			{"checkoutd_sessions_expired_total", []string{"mode", "test"}, 0},
			{"checkoutd_payments_captured_after_failure_total", nil, 0},
			{"checkoutd_http_requests_total", []string{"route", "/v1/stores/{storeId}/checkouts", "method", "POST", "code", "201"}, 2},
			{"checkoutd_http_requests_total", []string{"route", "/v1/stores/{storeId}/checkouts/{checkoutId}", "method", "GET", "code", "200"}, 1},
			{"checkoutd_webhook_attempts_in_flight", nil, 2},
			{"checkoutd_webhook_deliveries_pending", []string{"state", "due"}, 2},
			{"checkoutd_webhook_deliveries_pending", []string{"state", "waiting"}, 0},
			{"checkoutd_webhook_attempts_total", nil, 0},
			{"checkoutd_webhook_deliveries_failed_total", nil, 0},
			{"checkoutd_request_logs_dropped_total", nil, 0},
			{"checkoutd_job_failures_total", nil, 0},
			{"checkoutd_db_errors_total", nil, 0},
			{"checkoutd_store_rows_skipped_total", nil, 0},
		} {
			if got, n := m.Sum(tt.name, tt.pairs...); got != tt.want || n == 0 {
				t.Errorf("%s%v = %v (%d series); want %v", tt.name, tt.pairs, got, n, tt.want)
			}
		}
		for _, name := range []string{"checkoutd_http_request_duration_seconds", "checkoutd_http_requests_in_flight",
			"checkoutd_webhook_attempt_seconds_total", "checkoutd_request_logs_queued", "checkoutd_job_last_success_timestamp_seconds",
			"checkoutd_db_connections", "checkoutd_db_connections_max", "checkoutd_db_connection_waits_total",
			"checkoutd_db_connection_wait_seconds_total", "checkoutd_build_info", "process_start_time_seconds", "go_goroutines",
			"go_memstats_heap_alloc_bytes"} {
			if m.Types[name] == "" || m.Help[name] == "" {
				t.Errorf("/metrics lacks %s (TYPE %q, HELP %q)", name, m.Types[name], m.Help[name])
			}
		}
		if m.Value("checkoutd_db_connections_max") == 0 || m.Value("go_goroutines") == 0 || m.Value("go_memstats_heap_alloc_bytes") == 0 {
			t.Errorf("runtime and pool gauges are zero")
		}
		if start := m.Value("process_start_time_seconds"); start < float64(time.Now().Add(-time.Hour).Unix()) || start > float64(time.Now().Unix()+1) {
			t.Errorf("process_start_time_seconds = %v", start)
		}

		// The receiver answers: the attempts count, the queue empties.
		r.open()
		waitFor(t, "the deliveries to be recorded", guard, func() bool {
			m = scrapeServe(t, base+"/metrics")
			return m.Value("checkoutd_webhook_deliveries_pending", "state", "due") == 0 && m.Value("checkoutd_webhook_attempts_in_flight") == 0
		})
		if ok, failed := m.Value("checkoutd_webhook_attempts_total", "result", "succeeded"), m.Value("checkoutd_webhook_attempts_total", "result", "failed"); ok != 2 || failed != 0 {
			t.Errorf("attempts after delivery: %v succeeded, %v failed; want 2, 0", ok, failed)
		}
	})
}

// metricsListening finds the addr of the "metrics listening" line of
// serve's JSON log.
func metricsListening(log string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "metrics listening" {
			return line.Addr
		}
	}
	return ""
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// --metrics-addr moves /metrics to a listener of its own, or (off) turns it
// off; the default serves it on the main listener.
func TestServeMetricsAddr(t *testing.T) {
	db := newDatabase(t, "sqlite")
	base, logs, _ := startServe(t, db, "--metrics-addr", "127.0.0.1:0")
	own := metricsListening(logs.String())
	if own == "" {
		t.Fatalf("no metrics listening line; log:\n%s", logs)
	}
	if got := getStatus(t, base+"/metrics"); got != http.StatusNotFound {
		t.Errorf("GET /metrics on the main listener = %d; want 404", got)
	}
	getStatus(t, base+"/healthz")
	m := scrapeServe(t, "http://"+own+"/metrics")
	if got := m.Value("checkoutd_http_requests_total", "route", "/healthz"); got < 1 {
		t.Errorf("the main listener's requests on the metrics listener: /healthz = %v; want at least 1", got)
	}
	if got := getStatus(t, "http://"+own+"/healthz"); got != http.StatusNotFound {
		t.Errorf("GET /healthz on the metrics listener = %d; want 404", got)
	}

	base, logs, _ = startServe(t, newDatabase(t, "sqlite"), "--metrics-addr", "off")
	if got := getStatus(t, base+"/metrics"); got != http.StatusNotFound || metricsListening(logs.String()) != "" {
		t.Errorf("--metrics-addr off: GET /metrics = %d; want 404 and no metrics listener", got)
	}

	base, _, _ = startServe(t, newDatabase(t, "sqlite"))
	scrapeServe(t, base+"/metrics")
}
