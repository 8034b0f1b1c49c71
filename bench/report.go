package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// report collects the rows of the table and what it says about them.
type report struct {
	cfg   *config
	Setup []string `json:"setup"`
	Rows  []row    `json:"rows"`
	// BareAgain is the bare handler measured again at the end of the run.
	BareAgain []recheck `json:"bare_again,omitempty"`
	// BareBeside are the bare handler's rows measured right after each
	// API row of another target (beside.go), in the order measured.
	BareBeside []besideRow `json:"bare_beside,omitempty"`
	// measured counts the API rows measured so far, bare's beside
	// included: their order, which ratios reads.
	measured int
	// Hooks are the rows of the webhook table, Scale those of the scale
	// table.
	Hooks []hookRow  `json:"webhooks,omitempty"`
	Scale []scaleRow `json:"scale,omitempty"`
	// Deliveries are the rows of the delivery-list table (-deliveries).
	Deliveries []deliveryRow `json:"delivery_lists,omitempty"`

	// Lists are the rows of the lists table (-lists), Purges those of its
	// purge table.
	Lists  []listRow  `json:"lists,omitempty"`
	Purges []purgeRow `json:"purges,omitempty"`

	// Cluster sets the cluster's creates beside single-node PostgreSQL's
	// (cluster.go).
	Cluster *clusterReport `json:"cluster,omitempty"`

	// Memory is the process's at the end of the run.
	Memory *memory `json:"memory,omitempty"`
}

// addDelivery records a row of the delivery-list table.
func (r *report) addDelivery(rw deliveryRow) { r.Deliveries = append(r.Deliveries, rw) }

// deliveriesFailed counts the delivery-list cases that failed.
func (r *report) deliveriesFailed() int {
	n := 0
	for _, rw := range r.Deliveries {
		if rw.Error != "" {
			n++
		}
	}
	return n
}

// addList records a row of the lists table.
func (r *report) addList(rw listRow) { r.Lists = append(r.Lists, rw) }

// addPurge records a row of the purge table.
func (r *report) addPurge(rw purgeRow) { r.Purges = append(r.Purges, rw) }

// addHook records a row of the webhook table.
func (r *report) addHook(rw hookRow) { r.Hooks = append(r.Hooks, rw) }

// addScale records a row of the scale table.
func (r *report) addScale(rw scaleRow) { r.Scale = append(r.Scale, rw) }

// recheck is a second measurement of a bare row.
type recheck struct {
	Op  string  `json:"op"`
	RPS float64 `json:"rps"`
	// Change is RPS over the first measurement's, minus 1.
	Change float64 `json:"change"`
}

// maxDrift is how far the second measurement of bare may stray from the
// first before the report calls the run unreliable, or bare's measurements
// just before and just after a row may differ before the report calls that
// row's ratio unreliable.
const maxDrift = 0.2

// besideRow is a measurement of bare beside another target's row.
type besideRow struct {
	Op string `json:"op"`
	// After is the target whose row bare was measured right after.
	After string  `json:"after"`
	RPS   float64 `json:"rps"`
	order int
}

// row is one line of the table: one operation on one target, or a target
// that was skipped.
type row struct {
	Target  string `json:"target"`
	Op      string `json:"op,omitempty"`
	Skipped string `json:"skipped,omitempty"`

	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	RPS      float64 `json:"rps"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	// VsBare is RPS over the bare handler's for the same operation in the
	// same run, BareRPS; absent when bare was not measured. BareRPS is the
	// mean of bare's measurements of the operation just before and just
	// after the row (the one before alone without -bare-beside), and
	// BareMoved the one after over the one before, minus 1.
	VsBare    *float64 `json:"vs_bare,omitempty"`
	BareRPS   *float64 `json:"bare_rps,omitempty"`
	BareMoved *float64 `json:"bare_moved,omitempty"`
	// VsStripeMock is, for checkoutd's rows, RPS over stripe-mock's for the
	// same operation in the same run: how checkoutd stands against a real
	// peer; absent when stripe-mock was not measured.
	VsStripeMock *float64 `json:"vs_stripe_mock,omitempty"`
	BodyBytes    int64    `json:"body_bytes"`
	// LogsDropped counts the request logs checkoutd's writer had dropped,
	// its buffer full, by the end of the row (checkoutd only).
	LogsDropped *int64 `json:"request_logs_dropped,omitempty"`
	// MeanBatch is checkoutd's mean shared batch during the row and its
	// warm-up: writes per shared transaction (group commit) for a create,
	// sessions per shared read (batched reads, PostgreSQL) for a retrieve;
	// absent when nothing was shared.
	MeanBatch  *float64 `json:"mean_batch,omitempty"`
	FirstError string   `json:"first_error,omitempty"`
	order      int
}

func newReport(cfg *config) *report {
	return &report{cfg: cfg, Setup: []string{
		fmt.Sprintf("%s %s/%s, %d CPUs (GOMAXPROCS %d), load generator in the same process",
			runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0)),
		fmt.Sprintf("%d workers back to back over keep-alive HTTP/1.1 on loopback; per row %s warm-up, then %s measured",
			cfg.concurrency, cfg.warmup, cfg.duration),
		"checkoutd as serve wires it: server.New, request logs on, access log formatted (then discarded), " +
			"background jobs on, rate limiter on at 1e9/s per key so it never refuses (the default 100/s would cap this one key)",
		loadAverage(),
		cfg.collector,
		fmt.Sprintf("retrieve reads a pool of %d sessions created through the API before the row", cfg.pool),
	}}
}

// add records t's row for op.
func (r *report) add(t *target, op string, res *result) {
	if !slices.ContainsFunc(r.Rows, func(rw row) bool { return rw.Target == t.name }) {
		r.Setup = append(r.Setup, t.note)
	}
	rw := row{
		Target:     t.name,
		Op:         op,
		Requests:   res.requests,
		Errors:     res.failures,
		RPS:        res.rps(),
		P50ms:      ms(res.percentile(50)),
		P99ms:      ms(res.percentile(99)),
		FirstError: res.firstErr,
		order:      r.next(),
	}
	if n := len(res.latencies); n > 0 {
		rw.BodyBytes = res.bytes / int64(n)
	}
	if t.dropped != nil {
		d := t.dropped()
		rw.LogsDropped = &d
	}
	if res.batch > 0 {
		rw.MeanBatch = &res.batch
	}
	r.Rows = append(r.Rows, rw)
}

// next returns the order of the API row measured now.
func (r *report) next() int {
	r.measured++
	return r.measured
}

// beside records bare's row for op measured right after the last row.
func (r *report) beside(op string, res *result) {
	after := ""
	if n := len(r.Rows); n > 0 {
		after = r.Rows[n-1].Target
	}
	r.BareBeside = append(r.BareBeside, besideRow{Op: op, After: after, RPS: res.rps(), order: r.next()})
}

// bareAround returns bare's rates for op measured last before the row of
// order and first after it: its own row at the start, or a row beside
// another target's; 0 for none.
func (r *report) bareAround(op string, order int) (before, after float64) {
	var bare []besideRow
	for _, rw := range r.Rows {
		if rw.Target == "bare" && rw.Op == op && rw.Skipped == "" {
			bare = append(bare, besideRow{RPS: rw.RPS, order: rw.order})
		}
	}
	for _, b := range r.BareBeside {
		if b.Op == op {
			bare = append(bare, b)
		}
	}
	slices.SortFunc(bare, func(a, b besideRow) int { return a.order - b.order })
	for _, b := range bare {
		switch {
		case b.order < order:
			before = b.RPS
		case b.order > order && after == 0:
			after = b.RPS
		}
	}
	return before, after
}

// recheck records the second measurement of the bare row for op.
func (r *report) recheck(_ *target, op string, res *result) {
	for _, rw := range r.Rows {
		if rw.Target == "bare" && rw.Op == op && rw.RPS > 0 {
			r.BareAgain = append(r.BareAgain, recheck{Op: op, RPS: res.rps(), Change: res.rps()/rw.RPS - 1})
		}
	}
}

// skip records that target could not run, and why.
func (r *report) skip(target, reason string) {
	r.Rows = append(r.Rows, row{Target: target, Skipped: strings.Join(strings.Fields(reason), " ")})
}

// measuredBeyondBare reports whether a target other than bare was measured.
func (r *report) measuredBeyondBare() bool {
	return slices.ContainsFunc(r.Rows, func(rw row) bool { return rw.Target != "bare" && rw.Skipped == "" })
}

// failed returns how many requests failed in all.
func (r *report) failed() int {
	n := 0
	for _, rw := range r.Rows {
		n += rw.Errors
	}
	for _, rw := range r.Hooks {
		n += rw.Lost + rw.Again
	}
	for _, rw := range r.Scale {
		n += rw.Errors
	}
	return n
}

// rates returns the req/s of target's rows by operation.
func (r *report) rates(target string) map[string]float64 {
	rates := map[string]float64{}
	for _, rw := range r.Rows {
		if rw.Target == target && rw.Skipped == "" {
			rates[rw.Op] = rw.RPS
		}
	}
	return rates
}

// ratios fills VsBare from the bare rows, and checkoutd's VsStripeMock
// from stripe-mock's.
func (r *report) ratios() {
	bare, peer := r.rates("bare"), r.rates("stripe-mock")
	for i := range r.Rows {
		rw := &r.Rows[i]
		if rw.Target == "bare" {
			if b := bare[rw.Op]; b > 0 {
				v := rw.RPS / b
				rw.VsBare = &v
			}
		} else if before, after := r.bareAround(rw.Op, rw.order); before > 0 || after > 0 {
			b := before
			switch {
			case before == 0:
				b = after
			case after > 0:
				b = (before + after) / 2
				moved := after/before - 1
				rw.BareMoved = &moved
			}
			v := rw.RPS / b
			rw.VsBare, rw.BareRPS = &v, &b
		}
		if p := peer[rw.Op]; p > 0 && isCheckoutd(rw.Target) {
			v := rw.RPS / p
			rw.VsStripeMock = &v
		}
	}
	// Webhooks: throughput against bare's posts by as many workers; the
	// first attempt's latency against one bare post's round trip; a
	// listener's throughput (one delivery at a time) against one bare
	// worker's.
	bareHook := map[string]hookRow{}
	for _, rw := range r.Hooks {
		if rw.Target == "bare" {
			bareHook[rw.Op] = rw
		}
	}
	for i := range r.Hooks {
		rw := &r.Hooks[i]
		var v float64
		switch b := bareHook[map[string]string{"deliver": "deliver", "first-attempt": "one", "listen": "one"}[rw.Op]]; {
		case rw.Skipped != "" || b.Target == "":
			continue
		case rw.Op == "first-attempt" && b.P50ms > 0:
			v = rw.P50ms / b.P50ms
		case (rw.Op == "deliver" || rw.Op == "listen") && b.PerSecond > 0:
			v = rw.PerSecond / b.PerSecond
		default:
			continue
		}
		rw.VsBare = &v
	}
	r.clusterRatios()
	if b, ok := bare["retrieve"]; ok && b > 0 {
		for i := range r.Scale {
			v := r.Scale[i].RPS / b
			r.Scale[i].VsBare = &v
		}
	}
}

// print writes the table, or the JSON with -json.
func (r *report) print(w io.Writer) error {
	r.ratios()
	if r.cfg.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	var b strings.Builder
	b.WriteString("checkoutd merchant API benchmark (DESIGN.md section 11)\n")
	for _, s := range r.Setup {
		b.WriteString("  " + s + "\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	unsteady := false // a row's bare before and after differ by more than maxDrift
	fmt.Fprintln(tw, "target     \top      \trequests\treq/s\tp50 ms\tp99 ms\terrors\tvs bare\tbare req/s\tvs stripe-mock\tbody B\tlogs dropped\tbatch\t")
	for _, rw := range r.Rows {
		if rw.Skipped != "" {
			fmt.Fprintf(tw, "%-11s\t%-8s\tskipped\t\n", rw.Target, "-")
			continue
		}
		vs, baseline := percent(rw.VsBare), "-"
		if rw.BareRPS != nil {
			baseline = fmt.Sprintf("%.0f", *rw.BareRPS)
		}
		if rw.BareMoved != nil && math.Abs(*rw.BareMoved) > maxDrift {
			vs += "!"
			unsteady = true
		}
		fmt.Fprintf(tw, "%-11s\t%-8s\t%d\t%.0f\t%.2f\t%.2f\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t\n",
			rw.Target, rw.Op, rw.Requests, rw.RPS, rw.P50ms, rw.P99ms, rw.Errors, vs, baseline, times(rw.VsStripeMock), rw.BodyBytes, count(rw.LogsDropped), mean(rw.MeanBatch))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, rw := range r.Rows {
		if rw.Skipped != "" {
			fmt.Fprintf(&b, "\n%s skipped: %s", rw.Target, rw.Skipped)
		}
		if rw.FirstError != "" {
			fmt.Fprintf(&b, "\n%s %s: %d errors; the first: %s", rw.Target, rw.Op, rw.Errors, rw.FirstError)
		}
	}
	if slices.ContainsFunc(r.Rows, func(rw row) bool { return rw.Skipped != "" || rw.FirstError != "" }) {
		b.WriteString("\n")
	}
	if len(r.BareBeside) > 0 {
		b.WriteString("\nvs bare: over bare req/s, the mean of bare's rate for the same operation measured just before the row and just after it (bare beside each row)\n")
	}
	if unsteady {
		fmt.Fprintf(&b, "!: bare's rate just before and just after that row differ by more than %.0f%%: its ratio is not reliable; run again.\n", maxDrift*100)
	}
	if len(r.BareAgain) > 0 {
		var parts []string
		drifted := false
		for _, c := range r.BareAgain {
			parts = append(parts, fmt.Sprintf("%s %.0f req/s (%+.0f%%)", c.Op, c.RPS, c.Change*100))
			drifted = drifted || math.Abs(c.Change) > maxDrift
		}
		fmt.Fprintf(&b, "\nbare again at the end: %s\n", strings.Join(parts, ", "))
		switch {
		case drifted && len(r.BareBeside) > 0:
			fmt.Fprintf(&b, "The machine's speed changed by more than %.0f%% during the run; each ratio is over bare measured beside its row (a ! marks those around which bare moved as much).\n", maxDrift*100)
		case drifted:
			fmt.Fprintf(&b, "WARNING: the machine's speed changed by more than %.0f%% during the run: the ratios are not reliable; run again.\n", maxDrift*100)
		}
	}
	r.printCluster(&b)
	r.printHooks(&b)
	r.printScale(&b)
	r.printDeliveries(&b)
	r.printLists(&b)
	r.printMemory(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// printHooks writes the webhook table.
func (r *report) printHooks(b *strings.Builder) {
	if len(r.Hooks) == 0 {
		return
	}
	fmt.Fprintf(b, "\nwebhooks: deliveries to a local HTTPS receiver (the dispatcher as serve runs it: %d workers, 4 per endpoint)\n\n", hookWorkers)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target  \top             \tdeliveries\tper s\tp50 ms\tp99 ms\tlost\tagain\tvs bare\t")
	for _, rw := range r.Hooks {
		if rw.Skipped != "" {
			fmt.Fprintf(tw, "%-8s\t%-14s\tskipped\t\n", rw.Target, "-")
			continue
		}
		p50, p99, vs := fmt.Sprintf("%.2f", rw.P50ms), fmt.Sprintf("%.2f", rw.P99ms), percent(rw.VsBare)
		switch {
		case rw.Target == "bare":
			vs = "-"
		case rw.Op == "deliver":
			p50, p99 = "-", "-"
		case rw.Op == "first-attempt" && rw.VsBare != nil:
			vs = fmt.Sprintf("%.1f×", *rw.VsBare)
		}
		fmt.Fprintf(tw, "%-8s\t%-14s\t%d\t%.0f\t%s\t%s\t%d\t%d\t%s\t\n", rw.Target, rw.Op, rw.Deliveries, rw.PerSecond, p50, p99, rw.Lost, rw.Again, vs)
	}
	tw.Flush()
	for _, rw := range r.Hooks {
		if rw.Note != "" {
			fmt.Fprintf(b, "  %s %s: %s\n", rw.Target, rw.Op, rw.Note)
		}
		if rw.Skipped != "" {
			fmt.Fprintf(b, "  %s skipped: %s\n", rw.Target, rw.Skipped)
		}
	}
	b.WriteString("  vs bare: deliver is its rate over bare deliver's; first-attempt is its p50 as a multiple of bare one's (one post's round trip)\n")
}

// printScale writes the scale table.
func (r *report) printScale(b *strings.Builder) {
	if len(r.Scale) == 0 {
		return
	}
	fmt.Fprintf(b, "\nscale: retrieves of sessions picked at random among all stored (%d workers)\n\n", r.cfg.concurrency)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target  \tsessions\tdb MB\tB/session\tfill s\treq/s\tp50 ms\tp99 ms\terrors\tvs bare\t")
	for _, rw := range r.Scale {
		if rw.Skipped != "" {
			fmt.Fprintf(tw, "%-8s\tskipped\t\n", rw.Target)
			continue
		}
		fmt.Fprintf(tw, "%-8s\t%d\t%.1f\t%d\t%.1f\t%.0f\t%.2f\t%.2f\t%d\t%s\t\n", rw.Target, rw.Sessions, float64(rw.DBBytes)/(1<<20),
			rw.DBBytes/int64(max(rw.Sessions, 1)), rw.FillSeconds, rw.RPS, rw.P50ms, rw.P99ms, rw.Errors, percent(rw.VsBare))
	}
	tw.Flush()
	for _, rw := range r.Scale {
		if rw.Skipped != "" {
			fmt.Fprintf(b, "  %s skipped: %s\n", rw.Target, rw.Skipped)
		}
		if rw.FirstError != "" {
			fmt.Fprintf(b, "  %s at %d sessions: %d errors; the first: %s\n", rw.Target, rw.Sessions, rw.Errors, rw.FirstError)
		}
	}
	b.WriteString("  each session stored with its checkout.created event; vs bare: req/s over bare retrieve's\n")
}

// printLists writes the lists table and its purge table.
func (r *report) printLists(b *strings.Builder) {
	if len(r.Lists) == 0 {
		return
	}
	fmt.Fprintf(b, "\nlists: server time of a dashboard page (the service call), %d runs each; budget %v at p99\n\n", listRuns, listBudget)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target  \tlist        \tcase                              \trows in table\titems\tp50 ms\tp99 ms\tbudget\t")
	for _, rw := range r.Lists {
		if rw.Skipped != "" {
			fmt.Fprintf(tw, "%-8s\tskipped\t\n", rw.Target)
			continue
		}
		within := "ok"
		if !rw.Within {
			within = "OVER"
		}
		fmt.Fprintf(tw, "%-8s\t%-12s\t%-34s\t%d\t%d\t%.2f\t%.2f\t%s\t\n", rw.Target, rw.List, rw.Case, rw.Rows, rw.Items, rw.P50ms, rw.P99ms, within)
	}
	tw.Flush()
	for _, rw := range r.Lists {
		if rw.Skipped != "" {
			fmt.Fprintf(b, "  %s skipped: %s\n", rw.Target, rw.Skipped)
		}
		if rw.LoadSec > 0 {
			fmt.Fprintf(b, "  %s: loading the request logs, events, deliveries and payments took %.0f s\n", rw.Target, rw.LoadSec)
		}
	}
	if len(r.Purges) == 0 {
		return
	}
	b.WriteString("\npurge of the oldest day (with the lists' indexes as they are: 0011, and 0019 for the request logs), then of the next day (with the indexes before 0011)\n\n")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target  \ttable       \tindexes    \tdeleted\tseconds\trows/s\t")
	for _, rw := range r.Purges {
		fmt.Fprintf(tw, "%-8s\t%-12s\t%-11s\t%d\t%.2f\t%.0f\t\n", rw.Target, rw.Table, rw.Indexes, rw.Deleted, rw.Seconds, rw.RowsPerSec)
	}
	tw.Flush()
	b.WriteString("  events: deleted counts events; their deliveries go first, in the same purge\n")
}

// loadAverage describes the load of the machine as the run starts: other
// work on it skews every row.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "load average at start: unknown"
	}
	return fmt.Sprintf("load average at start: %s %s %s (other work on the machine skews every row)", f[0], f[1], f[2])
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percent(v *float64) string {
	if v == nil {
		return "-"
	}
	if *v < 0.1 {
		return fmt.Sprintf("%.1f%%", *v*100)
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}

// times writes a ratio as a multiple, 0.43× or 2.10×.
func times(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f×", *v)
}

func count(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func mean(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", *v)
}

// printDeliveries writes the delivery-list table.
func (r *report) printDeliveries(b *strings.Builder) {
	if len(r.Deliveries) == 0 {
		return
	}
	fmt.Fprintf(b, "\ndelivery list: server time of one page (the service call the dashboard makes), one caller, %d calls at most\n\n", deliveryCalls)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target  \tcase                              \tdeliveries\trows\tcalls\tp50 ms\tp99 ms\tbudget\t")
	for _, rw := range r.Deliveries {
		switch {
		case rw.Skipped != "":
			fmt.Fprintf(tw, "%-8s\t%-34s\tskipped\t\n", rw.Target, "-")
		case rw.Error != "":
			fmt.Fprintf(tw, "%-8s\t%-34s\tfailed\t\n", rw.Target, rw.Case)
		default:
			within := "ok"
			if rw.P99ms > ms(listBudget) {
				within = "OVER"
			}
			fmt.Fprintf(tw, "%-8s\t%-34s\t%d\t%d\t%d\t%.2f\t%.2f\t%s\t\n", rw.Target, rw.Case, rw.Deliveries, rw.Rows, rw.Calls, rw.P50ms, rw.P99ms, within)
		}
	}
	tw.Flush()
	for _, rw := range r.Deliveries {
		if rw.LoadSeconds > 0 {
			fmt.Fprintf(b, "  %s: %d deliveries loaded in %.0f s\n", rw.Target, rw.Deliveries, rw.LoadSeconds)
		}
		if rw.Skipped != "" {
			fmt.Fprintf(b, "  %s skipped: %s\n", rw.Target, rw.Skipped)
		}
		if rw.Error != "" {
			fmt.Fprintf(b, "  %s %s: %s\n", rw.Target, rw.Case, rw.Error)
		}
	}
	fmt.Fprintf(b, "  budget: p99 within %s a page (issue 10)\n", listBudget)
}
