// Package metricstest parses the Prometheus text exposition format (version
// 0.0.4) strictly, for tests that scrape /metrics. It is written from the
// format's description, apart from the writer in package metrics, and
// refuses what a Prometheus server would refuse, and a few things it would
// accept but no correct writer produces (a family's samples split up, a
// sample before its TYPE, a histogram whose buckets decrease or whose +Inf
// bucket differs from its count).
package metricstest

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
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

var (
	nameRe  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)
	labelRe = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*`)
)

// Parse parses text, which must be a whole, valid exposition.
func Parse(text string) (*Scrape, error) {
	s := &Scrape{Types: map[string]string{}, Help: map[string]string{}}
	if text != "" && !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("the exposition does not end with a line feed")
	}
	done := map[string]bool{} // families whose samples have ended
	current := ""
	seen := map[string]bool{} // series, by name and sorted labels
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", i+1, line, fmt.Sprintf(format, args...))
		}
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE "):
			kind := line[2:6]
			rest := line[7:]
			name := nameRe.FindString(rest)
			if name == "" || (len(rest) > len(name) && rest[len(name)] != ' ') {
				return nil, fail("no metric name")
			}
			value := strings.TrimPrefix(rest[len(name):], " ")
			if done[name] || current == name {
				return nil, fail("%s of %s after its samples", kind, name)
			}
			if kind == "HELP" {
				if _, dup := s.Help[name]; dup {
					return nil, fail("second HELP of %s", name)
				}
				h, err := unescape(value, false)
				if err != nil {
					return nil, fail("%v", err)
				}
				s.Help[name] = h
				continue
			}
			if _, dup := s.Types[name]; dup {
				return nil, fail("second TYPE of %s", name)
			}
			switch value {
			case "counter", "gauge", "histogram", "summary", "untyped":
			default:
				return nil, fail("unknown type %q", value)
			}
			s.Types[name] = value
		case strings.HasPrefix(line, "#"):
			continue // a comment
		default:
			sm, err := parseSample(line)
			if err != nil {
				return nil, fail("%v", err)
			}
			fam := family(sm.Name, s.Types)
			if _, typed := s.Types[fam]; !typed {
				return nil, fail("sample of %s before its TYPE", fam)
			}
			if fam != current {
				if done[fam] {
					return nil, fail("samples of %s are not together", fam)
				}
				if current != "" {
					done[current] = true
				}
				current = fam
			}
			key := seriesKey(sm)
			if seen[key] {
				return nil, fail("duplicate series %s", key)
			}
			seen[key] = true
			s.Samples = append(s.Samples, sm)
		}
	}
	if err := s.checkHistograms(); err != nil {
		return nil, err
	}
	return s, nil
}

// family is the family a sample name belongs to: a histogram's _bucket,
// _sum and _count belong to the histogram.
func family(name string, types map[string]string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && types[base] == "histogram" {
			return base
		}
	}
	return name
}

func parseSample(line string) (Sample, error) {
	sm := Sample{Labels: map[string]string{}}
	sm.Name = nameRe.FindString(line)
	if sm.Name == "" {
		return sm, fmt.Errorf("no metric name")
	}
	rest := line[len(sm.Name):]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for !strings.HasPrefix(rest, "}") {
			l := labelRe.FindString(rest)
			if l == "" {
				return sm, fmt.Errorf("bad label name at %q", rest)
			}
			rest = rest[len(l):]
			if !strings.HasPrefix(rest, `="`) {
				return sm, fmt.Errorf("label %s: want =\"", l)
			}
			rest = rest[2:]
			end := -1
			for i := 0; i < len(rest); i++ {
				if rest[i] == '\\' {
					i++
					continue
				}
				if rest[i] == '"' {
					end = i
					break
				}
			}
			if end < 0 {
				return sm, fmt.Errorf("label %s: unterminated value", l)
			}
			v, err := unescape(rest[:end], true)
			if err != nil {
				return sm, err
			}
			if _, dup := sm.Labels[l]; dup {
				return sm, fmt.Errorf("label %s twice", l)
			}
			sm.Labels[l] = v
			rest = rest[end+1:]
			if strings.HasPrefix(rest, ",") {
				rest = rest[1:]
			} else if !strings.HasPrefix(rest, "}") {
				return sm, fmt.Errorf("want , or } after label %s", l)
			}
		}
		rest = rest[1:]
	}
	if !strings.HasPrefix(rest, " ") {
		return sm, fmt.Errorf("want a space before the value")
	}
	fields := strings.Split(rest[1:], " ")
	if len(fields) > 2 {
		return sm, fmt.Errorf("too many fields")
	}
	v, err := parseFloat(fields[0])
	if err != nil {
		return sm, err
	}
	sm.Value = v
	if len(fields) == 2 {
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			return sm, fmt.Errorf("bad timestamp %q", fields[1])
		}
	}
	return sm, nil
}

func parseFloat(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.ContainsAny(s, "_xXpP") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity") {
		return 0, fmt.Errorf("bad value %q", s)
	}
	return v, nil
}

// unescape undoes the escapes of HELP text (\\ and \n) and label values
// (also \").
func unescape(s string, quote bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' {
			return "", fmt.Errorf("raw line feed")
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("trailing backslash in %q", s)
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case '"':
			if !quote {
				return "", fmt.Errorf(`\" in HELP text`)
			}
			b.WriteByte('"')
		default:
			return "", fmt.Errorf("unknown escape \\%c in %q", s[i], s)
		}
	}
	return b.String(), nil
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

// checkHistograms checks every histogram series: buckets with le, counts
// that never decrease as le grows, a +Inf bucket equal to _count, and a
// _sum.
func (s *Scrape) checkHistograms() error {
	type hist struct {
		les    []float64
		counts []float64
		sum    bool
		count  float64
		hasCnt bool
	}
	hs := map[string]*hist{}
	get := func(base string, labels map[string]string) *hist {
		k := seriesKey(Sample{Name: base, Labels: labels})
		if hs[k] == nil {
			hs[k] = &hist{}
		}
		return hs[k]
	}
	for _, sm := range s.Samples {
		base := family(sm.Name, s.Types)
		if s.Types[base] != "histogram" {
			continue
		}
		switch {
		case sm.Name == base+"_bucket":
			le, ok := sm.Labels["le"]
			if !ok {
				return fmt.Errorf("%s: bucket without le", sm.Name)
			}
			bound, err := parseFloat(le)
			if err != nil {
				return fmt.Errorf("%s: le %q: %v", sm.Name, le, err)
			}
			rest := copyWithout(sm.Labels, "le")
			h := get(base, rest)
			h.les = append(h.les, bound)
			h.counts = append(h.counts, sm.Value)
		case sm.Name == base+"_sum":
			get(base, sm.Labels).sum = true
		case sm.Name == base+"_count":
			h := get(base, sm.Labels)
			h.count, h.hasCnt = sm.Value, true
		default:
			return fmt.Errorf("%s: a sample of histogram %s that is no bucket, sum or count", sm.Name, base)
		}
	}
	for k, h := range hs {
		if len(h.les) == 0 || !h.sum || !h.hasCnt {
			return fmt.Errorf("histogram %s lacks buckets, _sum or _count", k)
		}
		if !slices.IsSorted(h.les) || !math.IsInf(h.les[len(h.les)-1], 1) {
			return fmt.Errorf("histogram %s: le not ascending up to +Inf: %v", k, h.les)
		}
		if !slices.IsSorted(h.counts) {
			return fmt.Errorf("histogram %s: bucket counts decrease: %v", k, h.counts)
		}
		if h.counts[len(h.counts)-1] != h.count {
			return fmt.Errorf("histogram %s: +Inf bucket %v, _count %v", k, h.counts[len(h.counts)-1], h.count)
		}
	}
	return nil
}

func copyWithout(m map[string]string, drop string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k != drop {
			out[k] = v
		}
	}
	return out
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
