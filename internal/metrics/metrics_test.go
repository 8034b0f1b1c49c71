package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/metrics"
	"github.com/checkoutd/checkoutd/internal/metrics/metricstest"
)

// get serves r and asks it for /metrics with the given Accept header (none
// when empty), returning the response and its body.
func get(t *testing.T, r *metrics.Registry, accept string) (*http.Response, string) {
	t.Helper()
	return getLogged(t, r, accept, logtest.Logger(t))
}

// getLogged is get with the handler logging to log.
func getLogged(t *testing.T, r *metrics.Registry, accept string, log *slog.Logger) (*http.Response, string) {
	t.Helper()
	srv := httptest.NewServer(r.Handler(log))
	defer srv.Close()
	req, err := http.NewRequest("GET", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// scrape reads r in the text format and parses it strictly.
func scrape(t *testing.T, r *metrics.Registry) *metricstest.Scrape {
	t.Helper()
	resp, body := get(t, r, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET = %d: %s", resp.StatusCode, body)
	}
	s, err := metricstest.Parse(body)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, body)
	}
	return s
}

// testRegistry has a family of each kind checkoutd registers: read at
// scrape time with labels (Func), without (Value), and updated in place
// (the client's own counter and histogram).
func testRegistry() *metrics.Registry {
	r := metrics.NewRegistry()
	req := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "test_requests_total", Help: "Requests served."}, []string{"route", "code"})
	req.WithLabelValues("/a", "200").Add(3)
	req.WithLabelValues("/a", "500").Inc()
	req.WithLabelValues(`/b"\`+"\n", "200").Inc()
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "test_duration_seconds", Help: "How long.\nIn seconds; a \\ too.",
		Buckets: []float64{0.1, 1}}, []string{"route"})
	h.WithLabelValues("/a").Observe(0.05)
	h.WithLabelValues("/a").Observe(0.1) // on a bound: counted in that bucket (le is inclusive)
	h.WithLabelValues("/a").Observe(0.5)
	h.WithLabelValues("/a").Observe(7)
	r.MustRegister(req, h)
	r.Value("test_up", "Always one.", metrics.GaugeType, func() float64 { return 1 })
	r.Value("test_read_total", "Read at scrape time.", metrics.CounterType, func() float64 { return 42 })
	r.Func("test_queue", "Queued.", metrics.GaugeType, []string{"state"}, func(_ context.Context, emit metrics.Emit) {
		emit(2, "waiting")
		emit(1.5e9, "due")
	})
	r.Func("test_attempts_total", "Attempts.", metrics.CounterType, []string{"result"}, func(_ context.Context, emit metrics.Emit) {
		emit(7, "succeeded")
	})
	r.Func("test_absent", "Emits nothing.", metrics.GaugeType, nil, func(context.Context, metrics.Emit) {})
	return r
}

// Every kind of family reads back with its type, help, labels and values.
func TestFamilies(t *testing.T) {
	s := scrape(t, testRegistry())
	for _, tt := range []struct {
		name  string
		pairs []string
		want  float64
	}{
		{"test_requests_total", []string{"route", "/a", "code", "200"}, 3},
		{"test_requests_total", []string{"route", "/a", "code", "500"}, 1},
		{"test_requests_total", []string{"route", "/b\"\\\n"}, 1},
		{"test_duration_seconds_bucket", []string{"route", "/a", "le", "0.1"}, 2},
		{"test_duration_seconds_bucket", []string{"route", "/a", "le", "1"}, 3},
		{"test_duration_seconds_bucket", []string{"route", "/a", "le", "+Inf"}, 4},
		{"test_duration_seconds_sum", []string{"route", "/a"}, 7.65},
		{"test_duration_seconds_count", []string{"route", "/a"}, 4},
		{"test_up", nil, 1},
		{"test_read_total", nil, 42},
		{"test_queue", []string{"state", "waiting"}, 2},
		{"test_queue", []string{"state", "due"}, 1.5e9},
		{"test_attempts_total", []string{"result", "succeeded"}, 7},
	} {
		if got, n := s.Sum(tt.name, tt.pairs...); got != tt.want || n != 1 {
			t.Errorf("%s%v = %v (%d series); want %v (1)", tt.name, tt.pairs, got, n, tt.want)
		}
	}
	wantTypes := map[string]string{
		"test_requests_total": "counter", "test_duration_seconds": "histogram", "test_up": "gauge",
		"test_read_total": "counter", "test_queue": "gauge", "test_attempts_total": "counter",
	}
	for name, want := range wantTypes {
		if s.Types[name] != want {
			t.Errorf("TYPE of %s = %q; want %q", name, s.Types[name], want)
		}
	}
	if _, ok := s.Types["test_absent"]; ok {
		t.Errorf("a family that emits nothing is in the scrape")
	}
	if s.Help["test_duration_seconds"] != "How long.\nIn seconds; a \\ too." || s.Help["test_queue"] != "Queued." {
		t.Errorf("help read back as %q, %q", s.Help["test_duration_seconds"], s.Help["test_queue"])
	}
}

// The handler serves the text format 0.0.4 unless the scraper asks for
// OpenMetrics (or protobuf), and all hold the same series.
func TestHandlerNegotiates(t *testing.T) {
	r := testRegistry()
	resp, text := get(t, r, "")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4;") {
		t.Errorf("GET without Accept = %d, Content-Type %q; want 200 text/plain; version=0.0.4", resp.StatusCode, ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q; want no-store", cc)
	}
	if strings.Contains(text, "# EOF") {
		t.Errorf("the text format holds an OpenMetrics # EOF")
	}
	fromText, err := metricstest.Parse(text)
	if err != nil {
		t.Fatal(err)
	}

	// What Prometheus asks for (its scrape_protocols, OpenMetrics first).
	accept := "application/openmetrics-text;version=1.0.0;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
	resp, om := get(t, r, accept)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, metricstest.OpenMetricsType+"; version=1.0.0;") {
		t.Fatalf("GET with Accept %s = %d, Content-Type %q; want OpenMetrics 1.0.0", accept, resp.StatusCode, ct)
	}
	fromOM, err := metricstest.ParseOpenMetrics(om)
	if err != nil {
		t.Fatalf("ParseOpenMetrics: %v\n%s", err, om)
	}
	if !strings.Contains(om, "# TYPE test_requests counter\n") || !strings.Contains(om, "# TYPE test_read counter\n") {
		t.Errorf("OpenMetrics counters are not named without _total:\n%s", om)
	}
	// The runtime's series change between two scrapes; ours do not.
	ours := func(s *metricstest.Scrape) []metricstest.Sample {
		var out []metricstest.Sample
		for _, sm := range s.Samples {
			if strings.HasPrefix(sm.Name, "test_") {
				out = append(out, sm)
			}
		}
		return out
	}
	if got, want := ours(fromOM), ours(fromText); !equalSamples(got, want) {
		t.Errorf("OpenMetrics samples =\n%v\nwant, as in the text format,\n%v", got, want)
	}
	for name, typ := range fromText.Types {
		if fromOM.Types[name] != typ || fromOM.Help[name] != fromText.Help[name] {
			t.Errorf("%s: OpenMetrics TYPE %q HELP %q; text %q %q", name, fromOM.Types[name], fromOM.Help[name], typ, fromText.Help[name])
		}
	}
	if len(fromOM.Types) != len(fromText.Types) {
		t.Errorf("OpenMetrics has %d families; the text format %d", len(fromOM.Types), len(fromText.Types))
	}

	// A Prometheus set to scrape native histograms asks for protobuf.
	resp, pb := get(t, r, "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.google.protobuf;") {
		t.Errorf("GET asking for protobuf: Content-Type %q", ct)
	}
	dec := expfmt.NewDecoder(strings.NewReader(pb), expfmt.NewFormat(expfmt.TypeProtoDelim))
	families := 0
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("protobuf: %v", err)
		}
		if want := fromText.Types[mf.GetName()]; want != strings.ToLower(mf.GetType().String()) {
			t.Errorf("protobuf %s: type %s; the text format's %q", mf.GetName(), mf.GetType(), want)
		}
		families++
	}
	if families != len(fromText.Types) {
		t.Errorf("protobuf has %d families; the text format %d", families, len(fromText.Types))
	}

	// Asked for OpenMetrics alone, without a version.
	resp, _ = get(t, r, metricstest.OpenMetricsType)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, metricstest.OpenMetricsType+";") {
		t.Errorf("GET with Accept %s: Content-Type %q", metricstest.OpenMetricsType, ct)
	}
}

func equalSamples(a, b []metricstest.Sample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Value != b[i].Value || len(a[i].Labels) != len(b[i].Labels) {
			return false
		}
		for k, v := range a[i].Labels {
			if b[i].Labels[k] != v {
				return false
			}
		}
	}
	return true
}

// Every registry has the Go runtime's and the process's series.
func TestRuntimeCollectors(t *testing.T) {
	s := scrape(t, metrics.NewRegistry())
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_threads", "go_info", "go_gc_duration_seconds"} {
		if s.Types[name] == "" || s.Help[name] == "" {
			t.Errorf("no %s (TYPE %q, HELP %q)", name, s.Types[name], s.Help[name])
		}
	}
	if s.Value("go_goroutines") < 1 || s.Value("go_memstats_heap_alloc_bytes") <= 0 {
		t.Errorf("go_goroutines = %v, go_memstats_heap_alloc_bytes = %v; want them above 0", s.Value("go_goroutines"), s.Value("go_memstats_heap_alloc_bytes"))
	}
	if _, n := s.Sum("go_info", "version", runtime.Version()); n != 1 {
		t.Errorf("no go_info{version=%q}", runtime.Version())
	}
	if runtime.GOOS != "linux" {
		return // the process collector reads /proc
	}
	for _, name := range []string{"process_resident_memory_bytes", "process_start_time_seconds", "process_cpu_seconds_total", "process_open_fds"} {
		if s.Types[name] == "" {
			t.Errorf("no %s on Linux", name)
		}
	}
	if rss := s.Value("process_resident_memory_bytes"); rss <= 0 {
		t.Errorf("process_resident_memory_bytes = %v", rss)
	}
	if start := s.Value("process_start_time_seconds"); start > float64(time.Now().Unix()+1) || start < float64(time.Now().Add(-24*time.Hour).Unix()) {
		t.Errorf("process_start_time_seconds = %v", start)
	}
}

// A family read at scrape time is given a context that ends, since the
// client gives collectors none of the request's.
func TestCollectContext(t *testing.T) {
	r := metrics.NewRegistry()
	var left time.Duration
	r.Func("test_deadline", "x", metrics.GaugeType, nil, func(ctx context.Context, emit metrics.Emit) {
		if d, ok := ctx.Deadline(); ok {
			left = time.Until(d)
		}
		emit(1)
	})
	scrape(t, r)
	if left <= 0 || left > metrics.CollectTimeout {
		t.Errorf("time left to collect = %v; want a deadline within %v", left, metrics.CollectTimeout)
	}
}

// A family read at scrape time that emits the wrong number of label values
// fails that scrape, and not the process; the error is logged, where an
// operator looks, and not only told to the scraper.
func TestCollectMistakeFailsTheScrape(t *testing.T) {
	r := metrics.NewRegistry()
	r.Func("test_bad", "x", metrics.GaugeType, []string{"a"}, func(_ context.Context, emit metrics.Emit) { emit(1, "1", "2") })
	log, logs := logtest.Capture()
	resp, body := getLogged(t, r, "", log)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "test_bad") {
		t.Errorf("GET = %d %s; want 500 naming test_bad", resp.StatusCode, body)
	}
	if got := logs.String(); !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "test_bad") {
		t.Errorf("log = %q; want an error naming test_bad", got)
	}
}

// Counters and histograms take updates from many goroutines without losing
// any, and a scrape during them is always consistent.
func TestConcurrentUpdates(t *testing.T) {
	r := metrics.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "test_total", Help: "Counted."}, []string{"worker"})
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "test_seconds", Help: "Observed.", Buckets: []float64{1, 2}}, []string{"worker"})
	r.MustRegister(c, h)
	srv := httptest.NewServer(r.Handler(logtest.Logger(t)))
	defer srv.Close()
	const workers, each = 8, 1000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			label := []string{"even", "odd"}[w%2]
			for i := range each {
				c.WithLabelValues(label).Inc()
				h.WithLabelValues(label).Observe(float64(i % 3))
			}
		})
	}
	stop := make(chan struct{})
	scraped := make(chan error, 1)
	go func() {
		var err error
		for {
			select {
			case <-stop:
				scraped <- err
				return
			default:
			}
			resp, gerr := http.Get(srv.URL)
			if gerr != nil {
				err = gerr
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if _, perr := metricstest.Parse(string(b)); perr != nil && err == nil {
				err = perr
			}
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-scraped; err != nil {
		t.Errorf("a scrape during updates did not parse: %v", err)
	}
	s := scrape(t, r)
	if got := s.Value("test_total"); got != workers*each {
		t.Errorf("test_total = %v; want %d", got, workers*each)
	}
	if got := s.Value("test_seconds_count"); got != workers*each {
		t.Errorf("test_seconds_count = %v; want %d", got, workers*each)
	}
	// i%3 over 0..999: 334 zeros, 333 ones, 333 twos per worker.
	if got := s.Value("test_seconds_sum"); got != workers*(333+2*333) {
		t.Errorf("test_seconds_sum = %v; want %d", got, workers*(333+2*333))
	}
	if got := s.Value("test_seconds_bucket", "le", "1"); got != workers*(334+333) {
		t.Errorf("bucket le=1 = %v; want %d", got, workers*(334+333))
	}
}

// Registration mistakes are programming errors: they panic at start, not
// at a scrape.
func TestRegisterMistakesPanic(t *testing.T) {
	noop := func(context.Context, metrics.Emit) {}
	one := func() float64 { return 1 }
	tests := map[string]func(r *metrics.Registry){
		"bad name":       func(r *metrics.Registry) { r.Func("1bad", "x", metrics.GaugeType, nil, noop) },
		"bad label":      func(r *metrics.Registry) { r.Func("ok", "x", metrics.GaugeType, []string{"a-b"}, noop) },
		"reserved label": func(r *metrics.Registry) { r.Func("ok", "x", metrics.GaugeType, []string{"__name"}, noop) },
		"untyped Func":   func(r *metrics.Registry) { r.Func("ok", "x", prometheus.UntypedValue, nil, noop) },
		"untyped Value":  func(r *metrics.Registry) { r.Value("ok", "x", prometheus.UntypedValue, one) },
		"twice": func(r *metrics.Registry) {
			r.Func("ok", "x", metrics.GaugeType, nil, noop)
			r.Func("ok", "x", metrics.GaugeType, nil, noop)
		},
		"twice, differently": func(r *metrics.Registry) {
			r.Value("ok_total", "x", metrics.CounterType, one)
			r.Func("ok_total", "y", metrics.CounterType, []string{"a"}, noop)
		},
		"a runtime series": func(r *metrics.Registry) { r.Value("go_goroutines", "x", metrics.GaugeType, one) },
		"a process series": func(r *metrics.Registry) { r.Value("process_start_time_seconds", "x", metrics.GaugeType, one) },
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			fn(metrics.NewRegistry())
		})
	}
}

// The parser the tests rely on refuses what a correct writer never
// produces: what expfmt refuses, and what metricstest checks on top of it.
func TestParseRefuses(t *testing.T) {
	bad := map[string]string{
		"no TYPE":             "x 1\n",
		"no final newline":    "# TYPE x gauge\nx 1",
		"bad value":           "# TYPE x gauge\nx one\n",
		"hex value":           "# TYPE x gauge\nx 0x1p-2\n",
		"bad escape":          "# TYPE x gauge\nx{a=\"\\t\"} 1\n",
		"unterminated label":  "# TYPE x gauge\nx{a=\"1} 1\n",
		"duplicate series":    "# TYPE x gauge\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n",
		"split family":        "# TYPE x gauge\n# TYPE y gauge\nx 1\ny 1\nx{a=\"b\"} 1\n",
		"TYPE after samples":  "# TYPE x gauge\nx 1\n# TYPE x gauge\n",
		"unknown type":        "# TYPE x meter\nx 1\n",
		"histogram no +Inf":   "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
		"histogram decreases": "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		"histogram count":     "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n",
		"histogram no sum":    "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
		"histogram sum twice": "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_sum 2\nh_count 1\n",
		"histogram bare name": "# TYPE h histogram\nh 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		"bucket twice":        "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		"duplicate labels":    "# TYPE x gauge\nx{a=\"1\",b=\"2\"} 1\nx{b=\"2\",a=\"1\"} 2\n",
		"untyped":             "# TYPE x untyped\nx 1\n",
	}
	for name, text := range bad {
		if _, err := metricstest.Parse(text); err == nil {
			t.Errorf("%s: Parse(%q) = nil; want an error", name, text)
		}
	}
	badOM := map[string]string{
		"no EOF":                  "# TYPE x gauge\nx 1\n",
		"EOF twice":               "# TYPE x gauge\nx 1\n# EOF\n# EOF\n",
		"EOF in the middle":       "# TYPE x gauge\n# EOF\nx 1\n# EOF\n",
		"counter without _total":  "# TYPE x counter\nx 1\n# EOF\n",
		"counter named _total":    "# TYPE x_total counter\nx_total 1\n# EOF\n",
		"empty line":              "# TYPE x gauge\n\nx 1\n# EOF\n",
		"what the text one fails": "# TYPE x gauge\nx 1\nx 2\n# EOF\n",
	}
	for name, text := range badOM {
		if _, err := metricstest.ParseOpenMetrics(text); err == nil {
			t.Errorf("%s: ParseOpenMetrics(%q) = nil; want an error", name, text)
		}
	}
	s, err := metricstest.ParseOpenMetrics("# HELP x A counter.\n# TYPE x counter\n# UNIT x seconds\nx_total{a=\"b\"} 2.0\n# TYPE y gauge\ny 1.5\n# EOF\n")
	if err != nil || s.Value("x_total", "a", "b") != 2 || s.Types["x_total"] != "counter" || s.Help["x_total"] != "A counter." || s.Value("y") != 1.5 {
		t.Errorf("ParseOpenMetrics of a good exposition = %+v, %v", s, err)
	}
}
