// Package metricstest reads the Prometheus text exposition format (version
// 0.0.4), and OpenMetrics as the Prometheus Go client writes it, for tests
// that scrape /metrics. The text format is parsed by prometheus/common's
// expfmt; on top of it Parse refuses what expfmt leaves to its callers and
// no correct writer produces: a sample without a TYPE, a series written
// twice, a family's samples split up, a histogram without its _sum or
// _count, whose buckets decrease, or whose +Inf bucket differs from its
// count. What /metrics serves is written by the Prometheus Go client, so
// these checks hold checkoutd's registrations to the format (a family
// registered twice, a label value that breaks a series) rather than a
// writer of its own.
package metricstest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one line of a scrape.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape is a parsed exposition.
type Scrape struct {
	Samples []Sample
	// Types and Help are by family name.
	Types map[string]string
	Help  map[string]string
}

// Parse parses text, which must be a whole, valid exposition.
func Parse(text string) (*Scrape, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	lines, err := sampleLines(text, families)
	if err != nil {
		return nil, err
	}
	s := &Scrape{Types: map[string]string{}, Help: map[string]string{}}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		mf := families[name]
		if mf.GetType() == dto.MetricType_UNTYPED {
			return nil, fmt.Errorf("%s: samples without a TYPE", name)
		}
		s.Types[name] = strings.ToLower(mf.GetType().String())
		if mf.Help != nil {
			s.Help[name] = mf.GetHelp()
		}
		samples, err := familySamples(mf)
		if err != nil {
			return nil, err
		}
		// expfmt keeps a series written twice as two (a counter, a gauge)
		// or as one with the last value (a histogram's _sum): either way the
		// lines outnumber the distinct series.
		seen := map[string]bool{}
		for _, sm := range samples {
			k := seriesKey(sm)
			if seen[k] {
				return nil, fmt.Errorf("duplicate series %s", k)
			}
			seen[k] = true
		}
		if lines[name] != len(samples) {
			return nil, fmt.Errorf("%s: %d sample lines for %d series: a series written twice, or a line that is none of the family's", name, lines[name], len(samples))
		}
		s.Samples = append(s.Samples, samples...)
	}
	return s, nil
}

// OpenMetricsType is the media type of OpenMetrics 1.0, which a scraper
// names in its Accept header to be served it.
const OpenMetricsType = "application/openmetrics-text"

// ParseOpenMetrics parses text, which must be a whole OpenMetrics exposition
// written by the Prometheus Go client, into the Scrape the text format of
// the same series would give, so that tests compare the two. expfmt has no
// OpenMetrics parser, so the text is read as the text format once the
// differences the client writes are undone: it must end in "# EOF" (and
// hold no other), its UNIT lines go, and a counter's family, named there
// without "_total", takes back the name of its samples, which must all be
// that name with "_total". Types and Help are then by the text format's
// family names.
//
// Families are followed line by line, not by name: the Go collector's
// go_memstats_alloc_bytes gauge and go_memstats_alloc_bytes_total counter
// share a family name in OpenMetrics (client_golang issue 829), which
// Prometheus ingests as two series all the same.
func ParseOpenMetrics(text string) (*Scrape, error) {
	body, ok := strings.CutSuffix(text, "# EOF\n")
	if !ok {
		return nil, errors.New("openmetrics: no # EOF line at the end")
	}
	lines := strings.SplitAfter(body, "\n")
	lines = lines[:len(lines)-1] // what follows the last newline: nothing
	var b strings.Builder
	family, counter := "", false // the family of the last TYPE line
	for i, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			return nil, fmt.Errorf("openmetrics: line %d is empty", i+1)
		case f[0] != "#":
			if name, _, _ := strings.Cut(f[0], "{"); counter && name != family+"_total" {
				return nil, fmt.Errorf("openmetrics: line %d %q: a sample of counter %s must be named %s_total", i+1, line, family, family)
			}
		case len(f) > 1 && f[1] == "EOF":
			return nil, fmt.Errorf("openmetrics: line %d: # EOF before the end", i+1)
		case len(f) > 2 && f[1] == "UNIT":
			continue
		case len(f) > 3 && f[1] == "TYPE":
			family, counter = f[2], f[3] == "counter"
			if counter {
				line = "# TYPE " + family + "_total counter\n"
			}
		case len(f) > 2 && f[1] == "HELP":
			// The client writes a family's HELP right before its TYPE.
			if i+1 < len(lines) && lines[i+1] == "# TYPE "+f[2]+" counter\n" {
				line = "# HELP " + f[2] + "_total" + strings.TrimPrefix(line, "# HELP "+f[2])
			}
		}
		b.WriteString(line)
	}
	return Parse(b.String())
}

// sampleLines counts the sample lines of each family, and checks that each
// family's lines come together: expfmt merges a family split up.
func sampleLines(text string, families map[string]*dto.MetricFamily) (map[string]int, error) {
	n := map[string]int{}
	current := ""
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// expfmt has read the line: its name ends at the labels or the value.
		name, _, _ := strings.Cut(strings.Fields(line)[0], "{")
		fam := family(name, families)
		if fam != current && n[fam] > 0 {
			return nil, fmt.Errorf("line %d %q: samples of %s are not together", i+1, line, fam)
		}
		current = fam
		n[fam]++
	}
	return n, nil
}

// family is the family a sample name belongs to: a histogram's _bucket,
// _sum and _count belong to the histogram, a summary's _sum and _count to
// the summary.
func family(name string, families map[string]*dto.MetricFamily) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok || families[base] == nil {
			continue
		}
		switch families[base].GetType() {
		case dto.MetricType_HISTOGRAM:
			return base
		case dto.MetricType_SUMMARY:
			if suffix != "_bucket" {
				return base
			}
		}
	}
	return name
}

// familySamples returns the samples of a family as they were written, one
// per line, and checks its histograms.
func familySamples(mf *dto.MetricFamily) ([]Sample, error) {
	name := mf.GetName()
	var out []Sample
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		with := func(extra ...string) map[string]string {
			l := make(map[string]string, len(labels)+1)
			for k, v := range labels {
				l[k] = v
			}
			for i := 0; i < len(extra); i += 2 {
				l[extra[i]] = extra[i+1]
			}
			return l
		}
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			out = append(out, Sample{name, labels, m.GetCounter().GetValue()})
		case dto.MetricType_GAUGE:
			out = append(out, Sample{name, labels, m.GetGauge().GetValue()})
		case dto.MetricType_SUMMARY:
			sum := m.GetSummary()
			for _, q := range sum.GetQuantile() {
				out = append(out, Sample{name, with("quantile", formatFloat(q.GetQuantile())), q.GetValue()})
			}
			out = append(out, Sample{name + "_sum", labels, sum.GetSampleSum()}, Sample{name + "_count", labels, float64(sum.GetSampleCount())})
		case dto.MetricType_HISTOGRAM:
			h := m.GetHistogram()
			if err := checkHistogram(name, labels, h); err != nil {
				return nil, err
			}
			for _, b := range h.GetBucket() {
				out = append(out, Sample{name + "_bucket", with("le", formatFloat(b.GetUpperBound())), bucketCount(b)})
			}
			out = append(out, Sample{name + "_sum", labels, h.GetSampleSum()}, Sample{name + "_count", labels, histogramCount(h)})
		default:
			return nil, fmt.Errorf("%s: type %s, which the writer never produces", name, mf.GetType())
		}
	}
	return out, nil
}

// checkHistogram checks one histogram series: buckets whose bounds ascend up
// to +Inf and whose counts never decrease, a +Inf bucket equal to _count,
// and a _sum.
func checkHistogram(name string, labels map[string]string, h *dto.Histogram) error {
	series := seriesKey(Sample{Name: name, Labels: labels})
	if len(h.GetBucket()) == 0 || h.SampleSum == nil || (h.SampleCount == nil && h.SampleCountFloat == nil) {
		return fmt.Errorf("histogram %s lacks buckets, _sum or _count", series)
	}
	var les, counts []float64
	for _, b := range h.GetBucket() {
		les = append(les, b.GetUpperBound())
		counts = append(counts, bucketCount(b))
	}
	if !slices.IsSorted(les) || !math.IsInf(les[len(les)-1], 1) {
		return fmt.Errorf("histogram %s: le not ascending up to +Inf: %v", series, les)
	}
	if !slices.IsSorted(counts) {
		return fmt.Errorf("histogram %s: bucket counts decrease: %v", series, counts)
	}
	if last, count := counts[len(counts)-1], histogramCount(h); last != count {
		return fmt.Errorf("histogram %s: +Inf bucket %v, _count %v", series, last, count)
	}
	return nil
}

func bucketCount(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}

func histogramCount(h *dto.Histogram) float64 {
	if h.SampleCountFloat != nil {
		return h.GetSampleCountFloat()
	}
	return float64(h.GetSampleCount())
}

// formatFloat writes a bound as the format does: Go's shortest form, and
// +Inf, -Inf, NaN.
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

func seriesKey(sm Sample) string {
	keys := make([]string, 0, len(sm.Labels))
	for k := range sm.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(sm.Name)
	for _, k := range keys {
		fmt.Fprintf(&b, ",%s=%q", k, sm.Labels[k])
	}
	return b.String()
}

// Sum returns the sum of the samples named name whose labels include the
// given pairs (name, value, name, value...), and how many there were.
func (s *Scrape) Sum(name string, pairs ...string) (float64, int) {
	if len(pairs)%2 != 0 {
		panic("metricstest: odd label pairs")
	}
	total, n := 0.0, 0
next:
	for _, sm := range s.Samples {
		if sm.Name != name {
			continue
		}
		for i := 0; i < len(pairs); i += 2 {
			if v, ok := sm.Labels[pairs[i]]; !ok || v != pairs[i+1] {
				continue next
			}
		}
		total += sm.Value
		n++
	}
	return total, n
}

// Value returns the sum of the samples named name with the given label
// pairs (see Sum), or 0 when there is none.
func (s *Scrape) Value(name string, pairs ...string) float64 {
	v, _ := s.Sum(name, pairs...)
	return v
}
