// Package metrics keeps checkoutd's Prometheus metrics and writes them in the
// Prometheus text exposition format, version 0.0.4.
//
// It is written on the standard library rather than on the Prometheus Go
// client: checkoutd needs counters, gauges and histograms with a few bounded
// labels, and values read from its components at scrape time. That is a
// couple of hundred lines here, against a client library that would bring a
// protobuf runtime and a dozen modules into a payment service's build for
// features it does not use (summaries, push, process collectors, exemplars).
//
// Counters and histograms are updated with atomics, so recording costs no
// lock on the request path. Series read at scrape time (Func) let components
// keep plain counters of their own (their Stats methods) without importing
// this package.
package metrics

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Type is a metric family's type.
type Type string

// The types this package writes.
const (
	CounterType   Type = "counter"
	GaugeType     Type = "gauge"
	HistogramType Type = "histogram"
)

// ContentType is the media type of the text exposition format 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

var (
	nameRe  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelRe = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Registry holds metric families and writes them.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{families: map[string]*family{}}
}

// family is one metric name: its help, type, label names and series.
type family struct {
	name   string
	help   string
	typ    Type
	labels []string
	// Exactly one of these is set.
	vec   *vec
	funcs []CollectFunc
}

// Emit adds one sample of a family read at scrape time: its value and the
// values of the family's labels, in order.
type Emit func(value float64, labelValues ...string)

// CollectFunc writes a family's samples at scrape time, calling emit once
// per series. It may emit nothing (the series are then absent from that
// scrape), for instance when the database it reads does not answer.
type CollectFunc func(ctx context.Context, emit Emit)

// register adds a family, or returns the existing one when name, type and
// labels match; anything else is a programming error and panics.
func (r *Registry) register(name, help string, typ Type, labels []string, fn CollectFunc) *family {
	if !nameRe.MatchString(name) {
		panic(fmt.Sprintf("metrics: invalid metric name %q", name))
	}
	for _, l := range labels {
		if !labelRe.MatchString(l) || strings.HasPrefix(l, "__") || (typ == HistogramType && l == "le") {
			panic(fmt.Sprintf("metrics: invalid label name %q of %s", l, name))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.families[name]; ok {
		if f.typ != typ || f.help != help || !slices.Equal(f.labels, labels) || (fn == nil) != (f.vec != nil) {
			panic(fmt.Sprintf("metrics: %s registered twice, differently", name))
		}
		if fn != nil {
			f.funcs = append(f.funcs, fn)
		}
		return f
	}
	f := &family{name: name, help: help, typ: typ, labels: slices.Clone(labels)}
	if fn != nil {
		f.funcs = []CollectFunc{fn}
	} else {
		f.vec = &vec{labels: len(labels), series: map[string]*series{}}
	}
	r.families[name] = f
	return f
}

// Func registers a family whose samples fn writes at every scrape. It may be
// called again with the same name, type, help and labels to add series from
// another source.
func (r *Registry) Func(name, help string, typ Type, labels []string, fn CollectFunc) {
	if typ == HistogramType {
		panic("metrics: Func cannot write histograms")
	}
	r.register(name, help, typ, labels, fn)
}

// Value registers a family of one series without labels whose value fn
// returns at every scrape.
func (r *Registry) Value(name, help string, typ Type, fn func() float64) {
	r.Func(name, help, typ, nil, func(_ context.Context, emit Emit) { emit(fn()) })
}

// Counter registers a counter family with the given label names.
func (r *Registry) Counter(name, help string, labels ...string) *CounterVec {
	return &CounterVec{r.register(name, help, CounterType, labels, nil).vec}
}

// Histogram registers a histogram family with the given upper bounds of its
// buckets (ascending; +Inf is implied) and label names.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	if !slices.IsSorted(buckets) || len(buckets) == 0 || math.IsInf(buckets[len(buckets)-1], 1) {
		panic(fmt.Sprintf("metrics: buckets of %s must be finite and ascending", name))
	}
	f := r.register(name, help, HistogramType, labels, nil)
	f.vec.buckets = slices.Clone(buckets)
	return &HistogramVec{f.vec}
}

// vec holds the series of a family that is updated in place, by the
// values of its labels.
type vec struct {
	labels  int
	buckets []float64 // histograms only
	mu      sync.RWMutex
	series  map[string]*series
}

// series is one counter or histogram.
type series struct {
	labelValues []string
	count       atomic.Uint64   // counters: the value
	bucketCount []atomic.Uint64 // histograms: per bucket, not cumulative; the last is +Inf
	sumBits     atomic.Uint64   // histograms: float64 bits of the sum; gauges: of the value
}

func (v *vec) with(values []string) *series {
	if len(values) != v.labels {
		panic(fmt.Sprintf("metrics: %d label values for %d labels", len(values), v.labels))
	}
	key := strings.Join(values, "\xff")
	v.mu.RLock()
	s, ok := v.series[key]
	v.mu.RUnlock()
	if ok {
		return s
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.series[key]; ok {
		return s
	}
	s = &series{labelValues: slices.Clone(values)}
	if v.buckets != nil {
		s.bucketCount = make([]atomic.Uint64, len(v.buckets)+1)
	}
	v.series[key] = s
	return s
}

// CounterVec is a counter family.
type CounterVec struct{ v *vec }

// With returns the counter of the given label values.
func (c *CounterVec) With(labelValues ...string) *Counter { return &Counter{c.v.with(labelValues)} }

// Counter is one counter series.
type Counter struct{ s *series }

// Inc adds one.
func (c *Counter) Inc() { c.s.count.Add(1) }

// Add adds n.
func (c *Counter) Add(n uint64) { c.s.count.Add(n) }

// Gauge registers a gauge family with the given label names, set in place.
func (r *Registry) Gauge(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{r.register(name, help, GaugeType, labels, nil).vec}
}

// GaugeVec is a gauge family.
type GaugeVec struct{ v *vec }

// With returns the gauge of the given label values.
func (g *GaugeVec) With(labelValues ...string) *Gauge { return &Gauge{g.v.with(labelValues)} }

// Gauge is one gauge series. Its value is kept as float64 bits in the
// series' sum.
type Gauge struct{ s *series }

// Set sets the value.
func (g *Gauge) Set(x float64) { g.s.sumBits.Store(math.Float64bits(x)) }

// Add adds x, which may be negative.
func (g *Gauge) Add(x float64) { addFloat(&g.s.sumBits, x) }

// HistogramVec is a histogram family.
type HistogramVec struct{ v *vec }

// With returns the histogram of the given label values.
func (h *HistogramVec) With(labelValues ...string) *Histogram {
	return &Histogram{h.v.with(labelValues), h.v.buckets}
}

// Histogram is one histogram series.
type Histogram struct {
	s       *series
	buckets []float64
}

// Observe records one value.
func (h *Histogram) Observe(x float64) {
	i, _ := slices.BinarySearch(h.buckets, x) // the first bound >= x; len for +Inf
	h.s.bucketCount[i].Add(1)
	addFloat(&h.s.sumBits, x)
}

// addFloat adds x to the float64 whose bits bits holds.
func addFloat(bits *atomic.Uint64, x float64) {
	for {
		old := bits.Load()
		if bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+x)) {
			return
		}
	}
}

// Handler serves the registry in the text format.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var b strings.Builder
		r.Write(req.Context(), &b)
		w.Header().Set("Content-Type", ContentType)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, b.String())
	})
}

// Write writes every family in the text format, families by name and series
// by label values, so that the output is stable.
func (r *Registry) Write(ctx context.Context, w io.Writer) error {
	r.mu.Lock()
	fams := make([]*family, 0, len(r.families))
	for _, f := range r.families {
		fams = append(fams, f)
	}
	r.mu.Unlock()
	slices.SortFunc(fams, func(a, b *family) int { return strings.Compare(a.name, b.name) })

	var b strings.Builder
	for _, f := range fams {
		samples := f.collect(ctx)
		if len(samples) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
		for _, s := range samples {
			b.WriteString(s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// collect returns the family's sample lines, sorted by label values.
func (f *family) collect(ctx context.Context) []string {
	type row struct {
		labels []string
		lines  string
	}
	var rows []row
	if f.funcs != nil {
		for _, fn := range f.funcs {
			fn(ctx, func(value float64, labelValues ...string) {
				if len(labelValues) != len(f.labels) {
					panic(fmt.Sprintf("metrics: %s: %d label values for %d labels", f.name, len(labelValues), len(f.labels)))
				}
				rows = append(rows, row{labelValues, sample(f.name, f.labels, labelValues, "", "", value)})
			})
		}
	} else {
		f.vec.mu.RLock()
		all := make([]*series, 0, len(f.vec.series))
		for _, s := range f.vec.series {
			all = append(all, s)
		}
		f.vec.mu.RUnlock()
		for _, s := range all {
			rows = append(rows, row{s.labelValues, f.lines(s)})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return slices.Compare(a.labels, b.labels) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.lines
	}
	return out
}

// lines writes one series of a vec: a counter's or gauge's one line, or a histogram's
// cumulative buckets, sum and count.
func (f *family) lines(s *series) string {
	switch f.typ {
	case CounterType:
		return sample(f.name, f.labels, s.labelValues, "", "", float64(s.count.Load()))
	case GaugeType:
		return sample(f.name, f.labels, s.labelValues, "", "", math.Float64frombits(s.sumBits.Load()))
	}
	var b strings.Builder
	var cum uint64
	for i := range s.bucketCount {
		cum += s.bucketCount[i].Load()
		le := math.Inf(1)
		if i < len(f.vec.buckets) {
			le = f.vec.buckets[i]
		}
		b.WriteString(sample(f.name+"_bucket", f.labels, s.labelValues, "le", formatFloat(le), float64(cum)))
	}
	b.WriteString(sample(f.name+"_sum", f.labels, s.labelValues, "", "", math.Float64frombits(s.sumBits.Load())))
	// The count is the +Inf bucket, read once above, so the two agree.
	b.WriteString(sample(f.name+"_count", f.labels, s.labelValues, "", "", float64(cum)))
	return b.String()
}

// sample formats one line: name{labels} value, with an extra label (le)
// when extraName is set.
func sample(name string, labels, values []string, extraName, extraValue string, v float64) string {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 || extraName != "" {
		b.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(l)
			b.WriteString(`="`)
			b.WriteString(escapeLabel(values[i]))
			b.WriteByte('"')
		}
		if extraName != "" {
			if len(labels) > 0 {
				b.WriteByte(',')
			}
			b.WriteString(extraName)
			b.WriteString(`="`)
			b.WriteString(extraValue)
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
	return b.String()
}

// formatFloat writes a value as the format wants it: Go's shortest form,
// and +Inf, -Inf, NaN.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }
