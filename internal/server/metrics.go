package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/checkoutd/checkoutd/internal/metrics"
)

// latencyBuckets are the upper bounds, in seconds, of the request duration
// histogram: from a cached read to a request at its write timeout.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// httpMetrics are the series of the HTTP surface. Their labels are bounded:
// the route is the pattern a request matched (never its path, which holds
// ids), the method one of the standard ones, the code one the handlers
// write.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

func newHTTPMetrics(r *metrics.Registry) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checkoutd_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "checkoutd_http_request_duration_seconds",
			Help:    "Time from a request's headers to the end of its response, by route pattern and method.",
			Buckets: latencyBuckets,
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "checkoutd_http_requests_in_flight",
			Help: "HTTP requests being served.",
		}),
	}
	r.MustRegister(m.requests, m.duration, m.inFlight)
	return m
}

// unmatched is the route label of a request no route matched.
const unmatched = "unmatched"

type routeKey struct{}

// routeNote is where the router notes the pattern a request matched.
type routeNote struct{ pattern string }

// noteRoute records the route pattern r matched, for instrument.
func noteRoute(r *http.Request, pattern string) {
	if n, ok := r.Context().Value(routeKey{}).(*routeNote); ok {
		n.pattern = pattern
	}
}

// instrument counts and times every request by the route it matched.
func instrument(m *httpMetrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		note := &routeNote{pattern: unmatched}
		sw := &statusWriter{ResponseWriter: w}
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), routeKey{}, note)))
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		method := methodLabel(r.Method)
		m.requests.WithLabelValues(note.pattern, method, strconv.Itoa(sw.status)).Inc()
		m.duration.WithLabelValues(note.pattern, method).Observe(time.Since(start).Seconds())
	})
}

// methodLabel keeps the method label to the standard methods: a client
// can send any token as a method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}
