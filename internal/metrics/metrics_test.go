package metrics_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/checkoutd/checkoutd/internal/metrics"
	"github.com/checkoutd/checkoutd/internal/metrics/metricstest"
)

func write(t *testing.T, r *metrics.Registry) string {
	t.Helper()
	var b strings.Builder
	if err := r.Write(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The exact text of a small registry: what Prometheus reads.
func TestWriteFormat(t *testing.T) {
	r := metrics.NewRegistry()
	req := r.Counter("test_requests_total", "Requests served.", "route", "code")
	req.With("/a", "200").Add(3)
	req.With("/a", "500").Inc()
	req.With(`/b"\`+"\n", "200").Inc()
	h := r.Histogram("test_duration_seconds", "How long.\nIn seconds; a \\ too.", []float64{0.1, 1}, "route")
	h.With("/a").Observe(0.05)
	h.With("/a").Observe(0.1) // on a bound: counted in that bucket (le is inclusive)
	h.With("/a").Observe(0.5)
	h.With("/a").Observe(7)
	r.Value("test_up", "Always one.", metrics.GaugeType, func() float64 { return 1 })
	r.Func("test_queue", "Queued.", metrics.GaugeType, []string{"state"}, func(_ context.Context, emit metrics.Emit) {
		emit(2, "waiting")
		emit(1.5e9, "due")
	})
	r.Func("test_absent", "Emits nothing.", metrics.GaugeType, nil, func(context.Context, metrics.Emit) {})
	r.Counter("test_unused_total", "No series yet.", "x")
	g := r.Gauge("test_in_flight", "In flight.")
	g.With().Add(3)
	g.With().Add(-1)

	want := `# HELP test_duration_seconds How long.\nIn seconds; a \\ too.
# TYPE test_duration_seconds histogram
test_duration_seconds_bucket{route="/a",le="0.1"} 2
test_duration_seconds_bucket{route="/a",le="1"} 3
test_duration_seconds_bucket{route="/a",le="+Inf"} 4
test_duration_seconds_sum{route="/a"} 7.65
test_duration_seconds_count{route="/a"} 4
# HELP test_in_flight In flight.
# TYPE test_in_flight gauge
test_in_flight 2
# HELP test_queue Queued.
# TYPE test_queue gauge
test_queue{state="due"} 1.5e+09
test_queue{state="waiting"} 2
# HELP test_requests_total Requests served.
# TYPE test_requests_total counter
test_requests_total{route="/a",code="200"} 3
test_requests_total{route="/a",code="500"} 1
test_requests_total{route="/b\"\\\n",code="200"} 1
# HELP test_up Always one.
# TYPE test_up gauge
test_up 1
`
	got := write(t, r)
	if got != want {
		t.Errorf("Write =\n%s\nwant\n%s", got, want)
	}
	s, err := metricstest.Parse(got)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if v := s.Value("test_requests_total", "route", "/b\"\\\n"); v != 1 {
		t.Errorf("escaped label read back as %v; want 1", v)
	}
	if s.Help["test_duration_seconds"] != "How long.\nIn seconds; a \\ too." {
		t.Errorf("help read back as %q", s.Help["test_duration_seconds"])
	}
}

func TestHandler(t *testing.T) {
	r := metrics.NewRegistry()
	r.Counter("test_total", "A counter.").With().Add(5)
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("GET = %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if string(b) != "# HELP test_total A counter.\n# TYPE test_total counter\ntest_total 5\n" {
		t.Errorf("body = %q", b)
	}
}

// Counters and histograms take updates from many goroutines without losing
// any, and a scrape during them is always consistent.
func TestConcurrentUpdates(t *testing.T) {
	r := metrics.NewRegistry()
	c := r.Counter("test_total", "Counted.", "worker")
	h := r.Histogram("test_seconds", "Observed.", []float64{1, 2}, "worker")
	const workers, each = 8, 1000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			label := []string{"even", "odd"}[w%2]
			for i := range each {
				c.With(label).Inc()
				h.With(label).Observe(float64(i % 3))
			}
		}()
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
			var b strings.Builder
			r.Write(context.Background(), &b)
			if _, perr := metricstest.Parse(b.String()); perr != nil && err == nil {
				err = perr
			}
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-scraped; err != nil {
		t.Errorf("a scrape during updates did not parse: %v", err)
	}
	s, err := metricstest.Parse(write(t, r))
	if err != nil {
		t.Fatal(err)
	}
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

func TestRegisterMistakesPanic(t *testing.T) {
	tests := map[string]func(r *metrics.Registry){
		"bad name":          func(r *metrics.Registry) { r.Counter("1bad", "x") },
		"bad label":         func(r *metrics.Registry) { r.Counter("ok_total", "x", "a-b") },
		"reserved label":    func(r *metrics.Registry) { r.Counter("ok_total", "x", "__name") },
		"le on a histogram": func(r *metrics.Registry) { r.Histogram("ok_seconds", "x", []float64{1}, "le") },
		"unsorted buckets":  func(r *metrics.Registry) { r.Histogram("ok_seconds", "x", []float64{2, 1}) },
		"infinite bucket":   func(r *metrics.Registry) { r.Histogram("ok_seconds", "x", []float64{1, math.Inf(1)}) },
		"twice, differently": func(r *metrics.Registry) {
			r.Counter("ok_total", "x")
			r.Counter("ok_total", "y")
		},
		"label count": func(r *metrics.Registry) { r.Counter("ok_total", "x", "a").With("1", "2") },
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
	// The same registration twice is allowed: Func adds series to a family.
	r := metrics.NewRegistry()
	a := r.Counter("ok_total", "x", "a")
	b := r.Counter("ok_total", "x", "a")
	a.With("1").Inc()
	b.With("1").Inc()
	r.Func("ok_gauge", "g", metrics.GaugeType, []string{"job"}, func(_ context.Context, emit metrics.Emit) { emit(1, "a") })
	r.Func("ok_gauge", "g", metrics.GaugeType, []string{"job"}, func(_ context.Context, emit metrics.Emit) { emit(2, "b") })
	s, err := metricstest.Parse(write(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if s.Value("ok_total", "a", "1") != 2 || s.Value("ok_gauge") != 3 {
		t.Errorf("registered twice: %+v", s.Samples)
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
}
