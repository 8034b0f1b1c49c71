// Package metrics is checkoutd's Prometheus registry: a private registry of
// the Prometheus Go client (github.com/prometheus/client_golang) with the
// standard Go runtime and process collectors, the series checkoutd reads
// from its components at scrape time, and the handler that serves them.
//
// The client writes the text format and OpenMetrics, whichever the scraper
// asks for, so checkoutd keeps no exposition format of its own. Series
// updated on the request path (the HTTP surface's) are the client's own
// counters and histograms, registered with MustRegister: they are updated
// with atomics, without a lock. Series read at scrape time (Func, Value)
// let components keep plain counters of their own (their Stats methods)
// without importing the client.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
)

// The types of a series read at scrape time.
const (
	CounterType = prometheus.CounterValue
	GaugeType   = prometheus.GaugeValue
)

// CollectTimeout bounds each CollectFunc: the client gives collectors no
// request context, so a reader that blocks (a database, a node) would
// otherwise outlive the scrape that called it.
const CollectTimeout = 5 * time.Second

// Registry holds checkoutd's metrics and serves them.
type Registry struct {
	reg *prometheus.Registry
}

// NewRegistry returns a registry with the Go runtime's series (go_*) and
// the process's (process_*, where the platform has them: Linux does).
func NewRegistry() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return &Registry{reg: reg}
}

// MustRegister adds collectors: the client's counters, gauges and
// histograms, or a Collector of several families read together. A name
// registered twice is a programming error and panics.
func (r *Registry) MustRegister(cs ...prometheus.Collector) {
	r.reg.MustRegister(cs...)
}

// Emit adds one sample of a family read at scrape time: its value and the
// values of the family's labels, in order.
type Emit func(value float64, labelValues ...string)

// CollectFunc writes a family's samples at scrape time, calling emit once
// per series. It may emit nothing (the series are then absent from that
// scrape), for instance when the database it reads does not answer. ctx
// ends after CollectTimeout.
type CollectFunc func(ctx context.Context, emit Emit)

// Func registers a family of the given type (CounterType or GaugeType) and
// label names whose samples fn writes at every scrape.
func (r *Registry) Func(name, help string, typ prometheus.ValueType, labels []string, fn CollectFunc) {
	if typ != CounterType && typ != GaugeType {
		panic(fmt.Sprintf("metrics: %s: Func writes counters and gauges only", name))
	}
	checkNames(name, labels)
	r.reg.MustRegister(&funcCollector{desc: prometheus.NewDesc(name, help, labels, nil), typ: typ, fn: fn})
}

// Value registers a family of one series without labels whose value fn
// returns at every scrape.
func (r *Registry) Value(name, help string, typ prometheus.ValueType, fn func() float64) {
	checkNames(name, nil)
	switch typ {
	case CounterType:
		r.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, fn))
	case GaugeType:
		r.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
	default:
		panic(fmt.Sprintf("metrics: %s: Value writes counters and gauges only", name))
	}
}

// checkNames panics on a metric or label name that Prometheus' classic
// rules refuse. The client takes any UTF-8 name and escapes it on the way
// out (a hyphen becomes an underscore), which would turn a typo into a
// series no document promises instead of failing at start.
func checkNames(name string, labels []string) {
	if !model.LegacyValidation.IsValidMetricName(name) {
		panic(fmt.Sprintf("metrics: invalid metric name %q", name))
	}
	for _, l := range labels {
		if !model.LegacyValidation.IsValidLabelName(l) {
			panic(fmt.Sprintf("metrics: invalid label name %q of %s", l, name))
		}
	}
}

// funcCollector is a family read at scrape time (Func).
type funcCollector struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	fn   CollectFunc
}

func (c *funcCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect reads the family. A sample with the wrong number of label values
// fails the scrape (a 500 that names the family) rather than the process.
func (c *funcCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), CollectTimeout)
	defer cancel()
	c.fn(ctx, func(value float64, labelValues ...string) {
		m, err := prometheus.NewConstMetric(c.desc, c.typ, value, labelValues...)
		if err != nil {
			m = prometheus.NewInvalidMetric(c.desc, err)
		}
		ch <- m
	})
}

// Handler serves the registry in the format the scraper asks for by its
// Accept header: OpenMetrics (application/openmetrics-text, what
// Prometheus asks for first) or the text format 0.0.4 (the default),
// gzipped when the scraper accepts it. A family that fails to collect
// fails the scrape with a 500, and the error goes to log.
func (r *Registry) Handler(log *slog.Logger) http.Handler {
	h := promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelError),
	})
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, req)
	})
}
