package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"slices"
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

// documentedSeries is one series of the metrics table of
// docs/operations.md: what the documentation promises an operator.
type documentedSeries struct {
	name, typ string
	labels    []string
}

// readDocumentedSeries reads the metrics table of docs/operations.md.
func readDocumentedSeries(t *testing.T) []documentedSeries {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## Metrics\n")
	section, _, _ = strings.Cut(section, "\n## ")
	quoted := regexp.MustCompile("`([a-z_]+)`")
	var out []documentedSeries
	for line := range strings.Lines(section) {
		cols := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cols) < 5 {
			continue
		}
		var labels []string
		for _, m := range quoted.FindAllStringSubmatch(cols[3], -1) {
			labels = append(labels, m[1])
		}
		for _, m := range quoted.FindAllStringSubmatch(cols[1], -1) {
			out = append(out, documentedSeries{name: m[1], typ: strings.TrimSpace(cols[2]), labels: labels})
		}
	}
	if len(out) < 30 {
		t.Fatalf("the metrics table of docs/operations.md has %d series; this reader has lost its way", len(out))
	}
	return out
}

// checkDocumented checks that m has every series of docs that want keeps,
// with its type, and that each of its samples carries exactly the
// documented labels (and le, a histogram's buckets).
func checkDocumented(t *testing.T, m *metricstest.Scrape, docs []documentedSeries, want func(name string) bool) {
	t.Helper()
	for _, d := range docs {
		if !want(d.name) {
			continue
		}
		if m.Types[d.name] != d.typ || m.Help[d.name] == "" {
			t.Errorf("%s: TYPE %q, HELP %q; the docs say a %s", d.name, m.Types[d.name], m.Help[d.name], d.typ)
			continue
		}
		n := 0
		for _, sm := range m.Samples {
			base := sm.Name
			if d.typ == "histogram" {
				base = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, "_bucket"), "_sum"), "_count")
			}
			if base != d.name {
				continue
			}
			n++
			want := slices.Clone(d.labels)
			if sm.Name == d.name+"_bucket" {
				want = append(want, "le")
			}
			var got []string
			for l := range sm.Labels {
				got = append(got, l)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s %v: labels %v; the docs say %v", sm.Name, sm.Labels, got, d.labels)
			}
		}
		if n == 0 {
			t.Errorf("%s: no sample", d.name)
		}
	}
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
		for range 2 { // the second from the session cache, on SQLite
			if status, _, _ := call(t, "GET", checkouts+"/"+id, k.Secret, ""); status != http.StatusOK {
				t.Fatalf("retrieve = %d", status)
			}
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
			{"checkoutd_http_requests_total", []string{"route", "/v1/stores/{storeId}/checkouts/{checkoutId}", "method", "GET", "code", "200"}, 2},
			{"checkoutd_webhook_attempts_in_flight", nil, 2},
			{"checkoutd_webhook_deliveries_pending", []string{"state", "due"}, 2},
			{"checkoutd_webhook_deliveries_pending", []string{"state", "waiting"}, 0},
			{"checkoutd_webhook_attempts_total", nil, 0},
			{"checkoutd_webhook_deliveries_failed_total", nil, 0},
			{"checkoutd_request_logs_dropped_total", nil, 0},
			{"checkoutd_api_auth_limited_total", []string{"result", "refused"}, 0},
			{"checkoutd_api_auth_limited_total", []string{"result", "admitted"}, 0},
			{"checkoutd_job_failures_total", nil, 0},
			{"checkoutd_job_row_failures_total", []string{"job", "expire-sessions"}, 0},
			{"checkoutd_job_row_failures_total", []string{"job", "payments"}, 0},
			{"checkoutd_db_errors_total", nil, 0},
			{"checkoutd_store_rows_skipped_total", nil, 0},
		} {
			if got, n := m.Sum(tt.name, tt.pairs...); got != tt.want || n == 0 {
				t.Errorf("%s%v = %v (%d series); want %v", tt.name, tt.pairs, got, n, tt.want)
			}
		}
		// Every series the documentation lists, with its labels; the live
		// crypto nodes' need live crypto (TestServeLiveLitecoin), the process's
		// a /proc.
		docs := readDocumentedSeries(t)
		checkDocumented(t, m, docs, func(name string) bool {
			return !strings.HasPrefix(name, "checkoutd_crypto_") && (runtime.GOOS == "linux" || !strings.HasPrefix(name, "process_")) &&
				(db.name == "sqlite" || !strings.HasPrefix(name, "checkoutd_db_session_cache_"))
		})
		// The session cache: SQLite served by one process keeps the sessions
		// it read (the first retrieve missed, the second hit); PostgreSQL
		// has none.
		_, n := m.Sum("checkoutd_db_session_cache_lookups_total")
		switch hit, miss := m.Value("checkoutd_db_session_cache_lookups_total", "result", "hit"), m.Value("checkoutd_db_session_cache_lookups_total", "result", "miss"); {
		case db.name == "postgres" && n != 0:
			t.Errorf("checkoutd_db_session_cache_lookups_total on PostgreSQL: %d series; want none", n)
		case db.name == "sqlite" && (hit < 1 || miss < 1 || m.Value("checkoutd_db_session_cache_sessions") < 1 || m.Value("checkoutd_db_session_cache_bytes") < 500):
			t.Errorf("session cache after two retrieves: %v hits, %v misses, %v sessions, %v bytes; want at least 1 each, 500 bytes", hit, miss, m.Value("checkoutd_db_session_cache_sessions"), m.Value("checkoutd_db_session_cache_bytes"))
		}
		// And no series of checkoutd's own that the documentation does not list.
		for name := range m.Types {
			if strings.HasPrefix(name, "checkoutd_") && !slices.ContainsFunc(docs, func(d documentedSeries) bool { return d.name == name }) {
				t.Errorf("%s is not in the metrics table of docs/operations.md", name)
			}
		}
		// Each delivery was handed over by its create (claim in create), or
		// claimed by the dispatcher woken after it, whose claim held the
		// free workers at that moment: which, the test does not choose.
		if n := m.Value("checkoutd_webhook_deliveries_handed_over_total"); n > 2 {
			t.Errorf("checkoutd_webhook_deliveries_handed_over_total = %v; want at most the 2 deliveries", n)
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
