package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRun keeps the program compiling and working: a very short run on
// SQLite. It checks what was measured, never how fast.
func TestRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	dir := t.TempDir()
	args := []string{"-only", "bare,sqlite", "-duration", "100ms", "-warmup", "0s", "-concurrency", "2", "-pool", "5", "-dir", dir, "-json",
		"-endpoints", "2", "-backlog", "10", "-event-rate", "100", "-scale", "30,20", "-deliveries", "400", "-lists", "2000",
		"-claim-history", "1000", "-cpuprofile", filepath.Join(dir, "cpu.prof"), "-trace", filepath.Join(dir, "trace.out"), "-profile-row", "deliver"}
	if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("run(%q) = %v; stdout:\n%s\nstderr:\n%s", args, err, &stdout, &stderr)
	}
	var rep struct {
		Rows       []row         `json:"rows"`
		Hooks      []hookRow     `json:"webhooks"`
		Scale      []scaleRow    `json:"scale"`
		Deliveries []deliveryRow `json:"delivery_lists"`
		Lists      []listRow     `json:"lists"`
		Purges     []purgeRow    `json:"purges"`
		Setup      []string      `json:"setup"`
		BareBeside []besideRow   `json:"bare_beside"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode the JSON report: %v\n%s", err, &stdout)
	}
	// Bare is measured again beside each of SQLite's rows, and SQLite's
	// ratios are over bare's rate around them.
	var beside []string
	for _, b := range rep.BareBeside {
		beside = append(beside, b.Op+" after "+b.After)
		if b.RPS <= 0 {
			t.Errorf("bare beside %+v; want a rate", b)
		}
	}
	if want := []string{"create after sqlite", "retrieve after sqlite"}; !slices.Equal(beside, want) {
		t.Errorf("bare beside = %q; want %q", beside, want)
	}
	for _, r := range rep.Rows {
		if r.Target == "sqlite" && (r.BareRPS == nil || r.VsBare == nil || r.BareMoved == nil) {
			t.Errorf("row %s %s: bare_rps %v, vs_bare %v, bare_moved %v; want all three", r.Target, r.Op, r.BareRPS, r.VsBare, r.BareMoved)
		}
	}
	// -profile-row deliver profiles and traces the drain alone, each in a
	// file of its own.
	if fi, err := os.Stat(filepath.Join(dir, "cpu-sqlite-deliver.prof")); err != nil || fi.Size() == 0 {
		t.Errorf("the drain's profile: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "trace-sqlite-deliver.out")); err != nil || !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("the drain's execution trace: %v; want a file that starts as Go's traces do", err)
	}
	for _, name := range []string{"cpu.prof", "trace.out", "cpu-sqlite-create.prof", "trace-sqlite-create.out"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s written; -profile-row deliver profiles and traces the drain alone", name)
		}
	}
	// The collector is set as serve sets it, and the report says so.
	if !slices.ContainsFunc(rep.Setup, func(s string) bool { return strings.Contains(s, "heap floor of 32 MiB") }) {
		t.Errorf("setup = %q; want a line on the collector's heap floor", rep.Setup)
	}
	var got []string
	for _, r := range rep.Rows {
		got = append(got, r.Target+" "+r.Op)
		if r.Errors != 0 || r.Skipped != "" || (r.Target == "sqlite" && (r.LogsDropped == nil || *r.LogsDropped != 0)) {
			t.Errorf("row %+v; want no errors, nothing skipped, no request logs dropped", r)
		}
	}
	if want := []string{"bare create", "bare retrieve", "sqlite create", "sqlite retrieve"}; !slices.Equal(got, want) {
		t.Errorf("rows = %q; want %q", got, want)
	}
	got = nil
	for _, r := range rep.Hooks {
		got = append(got, r.Target+" "+r.Op)
		if r.Lost != 0 || r.Again != 0 || r.Skipped != "" || r.Deliveries == 0 {
			t.Errorf("webhook row %+v; want deliveries, none lost or sent again", r)
		}
		if r.Target == "sqlite" && r.Op == "deliver" && r.Deliveries != 10*2 {
			t.Errorf("drain delivered %d; want the backlog's 20", r.Deliveries)
		}
		if r.Target == "sqlite" && r.Op == "listen" && r.Deliveries != 10 {
			t.Errorf("listen forwarded %d; want the backlog's 10", r.Deliveries)
		}
	}
	if want := []string{"bare deliver", "bare one", "sqlite deliver", "sqlite first-attempt", "sqlite first-attempt, creates at peak", "sqlite listen", "sqlite claim", "sqlite claim-history"}; !slices.Equal(got, want) {
		t.Errorf("webhook rows = %q; want %q", got, want)
	}
	got = nil
	for _, r := range rep.Scale {
		got = append(got, fmt.Sprintf("%s %d", r.Target, r.Sessions))
		if r.Errors != 0 || r.DBBytes <= 0 || r.Requests == 0 {
			t.Errorf("scale row %+v; want requests, no errors and a size", r)
		}
	}
	if want := []string{"sqlite 20", "sqlite 30"}; !slices.Equal(got, want) {
		t.Errorf("scale rows = %q; want %q", got, want)
	}
	if len(rep.Deliveries) < 10 {
		t.Errorf("%d delivery-list rows; want one per case", len(rep.Deliveries))
	}
	for _, r := range rep.Deliveries {
		if r.Target != "sqlite" || r.Error != "" || r.Skipped != "" || r.Calls == 0 || r.Deliveries != 400 || (r.Case == "first page" && r.Rows != 50) {
			t.Errorf("delivery-list row %+v; want calls without error (a first page of 50)", r)
		}
	}
	if len(rep.Lists) < 20 {
		t.Errorf("%d lists rows; want one per case", len(rep.Lists))
	}
	for _, r := range rep.Lists {
		if r.Target != "sqlite" || r.Skipped != "" || r.Rows != 2000 || r.P50ms <= 0 {
			t.Errorf("lists row %+v; want a sqlite row timed over 2000 rows", r)
		}
		if r.Case == "first page" && r.Items != 50 {
			t.Errorf("lists row %+v; want a first page of 50", r)
		}
		// The payments that succeeded of the 2000: all but the 1 in 10
		// declined and the 1 in 100 processing.
		if r.List == "home" && r.Case == "figures, last 30 days" && r.Items != 1780 {
			t.Errorf("lists row %+v; want the home's 1780 payments", r)
		}
	}
	if len(rep.Purges) != 4 {
		t.Errorf("purge rows = %+v; want 4", rep.Purges)
	}
	for _, r := range rep.Purges {
		if r.Deleted == 0 {
			t.Errorf("purge row %+v; want rows deleted", r)
		}
	}
}

// TestRunStripeMock measures stripe-mock beside bare and SQLite, briefly, with
// the binary that CHECKOUTD_BENCH_STRIPE_MOCK names: building it takes too
// long for a test. It checks that its rows ran and that checkoutd's carry
// their ratio to it.
func TestRunStripeMock(t *testing.T) {
	bin := os.Getenv("CHECKOUTD_BENCH_STRIPE_MOCK")
	if bin == "" {
		t.Skip("set CHECKOUTD_BENCH_STRIPE_MOCK to a stripe-mock " + stripeMockVersion + " binary " +
			"(GOBIN=DIR go install " + stripeMockModule + "@" + stripeMockVersion + ")")
	}
	args := []string{"-only", "bare,stripe-mock,sqlite", "-webhooks=false", "-stripe-mock", bin,
		"-duration", "100ms", "-warmup", "0s", "-concurrency", "2", "-pool", "5", "-dir", t.TempDir(), "-json"}
	rows := runRows(t, args)
	var got []string
	for _, r := range rows {
		got = append(got, r.Target+" "+r.Op)
		if r.Errors != 0 || r.Skipped != "" || r.Requests == 0 {
			t.Errorf("row %+v; want requests, no errors, nothing skipped", r)
		}
		if wantRatio := r.Target == "sqlite"; (r.VsStripeMock != nil) != wantRatio {
			t.Errorf("row %s %s: vs_stripe_mock %v; want it only on checkoutd's rows", r.Target, r.Op, r.VsStripeMock)
		}
	}
	want := []string{"bare create", "bare retrieve", "stripe-mock create", "stripe-mock retrieve", "sqlite create", "sqlite retrieve"}
	if !slices.Equal(got, want) {
		t.Errorf("rows = %q; want %q", got, want)
	}
}

// TestStripeMockSkipped checks that a stripe-mock that cannot start is a
// skipped row that says why, and that the rest of the table stands.
func TestStripeMockSkipped(t *testing.T) {
	dir := t.TempDir()
	exits := filepath.Join(dir, "exits")
	if err := os.WriteFile(exits, []byte("#!/bin/sh\necho 'cannot load the OpenAPI spec'\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ bin, reason string }{
		{filepath.Join(dir, "missing"), "cannot start stripe-mock"},
		{exits, "cannot load the OpenAPI spec"},
	}
	for _, tt := range tests {
		args := []string{"-only", "bare,stripe-mock", "-webhooks=false", "-stripe-mock", tt.bin,
			"-duration", "50ms", "-warmup", "0s", "-concurrency", "2", "-pool", "5", "-json"}
		rows := runRows(t, args)
		var got []string
		for _, r := range rows {
			got = append(got, r.Target+" "+r.Op)
			if r.Target == "stripe-mock" && !strings.Contains(r.Skipped, tt.reason) {
				t.Errorf("-stripe-mock %s: skipped %q; want it to say %q", tt.bin, r.Skipped, tt.reason)
			}
		}
		if want := []string{"bare create", "bare retrieve", "stripe-mock "}; !slices.Equal(got, want) {
			t.Errorf("-stripe-mock %s: rows = %q; want %q", tt.bin, got, want)
		}
	}
}

// TestRunCluster measures creates on a pg_auto_failover cluster beside
// single-node PostgreSQL, briefly, when CHECKOUTD_BENCH_CLUSTER=1: the
// cluster takes 10 to 20 s to start, more on a busy machine: too slow for
// every test run. It
// checks that the rows ran and that the cluster's carries its ratios.
func TestRunCluster(t *testing.T) {
	if os.Getenv("CHECKOUTD_BENCH_CLUSTER") != "1" {
		t.Skip("set CHECKOUTD_BENCH_CLUSTER=1 to start a pg_auto_failover cluster (as root or postgres, with PostgreSQL at CHECKOUTD_TEST_DATABASE)")
	}
	args := []string{"-only", "postgres,cluster", "-webhooks=false", "-duration", "200ms", "-warmup", "0s", "-concurrency", "2", "-pool", "5", "-json"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, os.Getenv, &stdout, &stderr); err != nil {
		t.Fatalf("run(%q) = %v; stdout:\n%s\nstderr:\n%s", args, err, &stdout, &stderr)
	}
	var rep struct {
		Rows    []row          `json:"rows"`
		Cluster *clusterReport `json:"cluster"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode the JSON report: %v\n%s", err, &stdout)
	}
	var got []string
	for _, r := range rep.Rows {
		got = append(got, r.Target+" "+r.Op)
		if r.Errors != 0 || r.Skipped != "" || r.Requests == 0 {
			t.Errorf("row %+v; want requests, no errors, nothing skipped", r)
		}
	}
	if want := []string{"postgres create", "postgres retrieve", "cluster create"}; !slices.Equal(got, want) {
		t.Errorf("rows = %q; want %q", got, want)
	}
	if c := rep.Cluster; c == nil || c.SingleAfter == nil || c.SingleMoved == nil || c.VsSingle == nil || c.VsSingleP50 == nil || c.VsSingleP99 == nil {
		t.Errorf("cluster = %+v; want single-node measured after it, and the ratios", c)
	}
}

// TestClusterSkipped checks that without pg_autoctl the cluster's row says
// so and is skipped, and the run does not fail.
func TestClusterSkipped(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no pg_autoctl on it
	rows := runRows(t, []string{"-only", "cluster", "-webhooks=false", "-duration", "50ms", "-warmup", "0s", "-concurrency", "2", "-json"})
	if len(rows) != 1 || rows[0].Target != "cluster" || !strings.Contains(rows[0].Skipped, "pg_autoctl not installed") {
		t.Errorf("rows = %+v; want the cluster's, skipped because pg_autoctl is not installed", rows)
	}
}

// TestClusterRatios checks the cluster's ratios: over the mean of
// single-node PostgreSQL's create row and its create measured after the
// cluster's, or over the one measured, and the mark when the two differ by
// more than maxDrift.
func TestClusterRatios(t *testing.T) {
	tests := []struct {
		name          string
		row, after    float64 // single-node's rates; 0: not measured
		single, ratio float64 // -1: none
		marked        bool
	}{
		{"both", 1000, 900, 950, 500.0 / 950, false},
		{"moved", 1000, 700, 850, 500.0 / 850, true},
		{"row alone", 1000, 0, 1000, 0.5, false},
		{"after alone", 0, 800, 800, 500.0 / 800, false},
		{"none", 0, 0, -1, -1, false},
	}
	for _, tt := range tests {
		r := &report{cfg: &config{}, Cluster: &clusterReport{}}
		if tt.row > 0 {
			r.Rows = append(r.Rows, row{Target: "postgres", Op: "create", RPS: tt.row, P50ms: 4, P99ms: 10})
		} else {
			r.Rows = append(r.Rows, row{Target: "postgres", Skipped: "unreachable"})
		}
		r.Rows = append(r.Rows, row{Target: "cluster", Op: "create", RPS: 500, P50ms: 8, P99ms: 40})
		if tt.after > 0 {
			r.Cluster.SingleAfter = &figures{RPS: tt.after, P50ms: 4, P99ms: 10}
		} else {
			r.Cluster.SingleSkipped = "unreachable"
		}
		var out strings.Builder
		if err := r.print(&out); err != nil {
			t.Fatal(err)
		}
		c := r.Cluster
		if tt.single < 0 {
			if c.Single != nil || c.VsSingle != nil || !strings.Contains(out.String(), "no single-node PostgreSQL measured") {
				t.Errorf("%s: single %+v, vs single %v; want none, and the table to say so\n%s", tt.name, c.Single, c.VsSingle, &out)
			}
			continue
		}
		if c.Single == nil || c.Single.RPS != tt.single || math.Abs(ratio(c.VsSingle)-tt.ratio) > 1e-9 {
			t.Errorf("%s: single %+v, vs single %v; want %v, %v", tt.name, c.Single, ratio(c.VsSingle), tt.single, tt.ratio)
		}
		if ratio(c.VsSingleP50) != 2 || ratio(c.VsSingleP99) != 4 {
			t.Errorf("%s: vs single p50 %v, p99 %v; want 2, 4", tt.name, ratio(c.VsSingleP50), ratio(c.VsSingleP99))
		}
		if got := strings.Contains(out.String(), "×!"); got != tt.marked {
			t.Errorf("%s: marked %v; want %v\n%s", tt.name, got, tt.marked, &out)
		}
		if !strings.Contains(out.String(), "cluster / postgres") {
			t.Errorf("%s: no ratio line\n%s", tt.name, &out)
		}
	}
}

// runRows runs bench with args, which must hold -json, and returns the
// rows of its API table.
func runRows(t *testing.T, args []string) []row {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("run(%q) = %v; stdout:\n%s\nstderr:\n%s", args, err, &stdout, &stderr)
	}
	var rep struct {
		Rows []row `json:"rows"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode the JSON report: %v\n%s", err, &stdout)
	}
	return rep.Rows
}

// TestRatios checks the ratios of the API table: every row's to bare, and
// only checkoutd's to stripe-mock.
func TestRatios(t *testing.T) {
	r := &report{Rows: []row{
		{Target: "bare", Op: "create", RPS: 1000, order: 1},
		{Target: "stripe-mock", Op: "create", RPS: 400, order: 2},
		{Target: "sqlite", Op: "create", RPS: 200, order: 3},
		{Target: "postgres", Skipped: "unreachable"},
		{Target: "sqlite", Op: "retrieve", RPS: 300, order: 4}, // neither bare nor stripe-mock retrieved
	}}
	r.ratios()
	tests := []struct {
		vsBare, vsPeer float64 // -1: none
	}{{1, -1}, {0.4, -1}, {0.2, 0.5}, {-1, -1}, {-1, -1}}
	for i, tt := range tests {
		rw := r.Rows[i]
		if got := ratio(rw.VsBare); got != tt.vsBare {
			t.Errorf("%s %s: vs bare %v; want %v", rw.Target, rw.Op, got, tt.vsBare)
		}
		if got := ratio(rw.VsStripeMock); got != tt.vsPeer {
			t.Errorf("%s %s: vs stripe-mock %v; want %v", rw.Target, rw.Op, got, tt.vsPeer)
		}
	}
}

// TestRatiosBeside checks that with bare measured beside the rows, a row's
// ratio is over the mean of bare's measurements of its operation just
// before and just after it, and that the table marks a row whose two
// differ by more than maxDrift.
func TestRatiosBeside(t *testing.T) {
	r := &report{cfg: &config{}}
	add := func(target, op string, rps float64) {
		r.Rows = append(r.Rows, row{Target: target, Op: op, RPS: rps, Requests: int(rps), order: r.next()})
	}
	add("bare", "create", 1000)
	add("bare", "retrieve", 2000)
	add("sqlite", "create", 200)
	r.beside("create", &result{latencies: make([]time.Duration, 800), window: time.Second})
	add("sqlite", "retrieve", 500)
	r.beside("retrieve", &result{latencies: make([]time.Duration, 3000), window: time.Second})
	add("postgres", "create", 100)
	r.beside("create", &result{latencies: make([]time.Duration, 820), window: time.Second})
	add("postgres", "retrieve", 600) // no bare after it: bare before alone
	var out strings.Builder
	if err := r.print(&out); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		bare, vsBare, moved float64 // -1: none
	}{{-1, 1, -1}, {-1, 1, -1}, {900, 200.0 / 900, -0.2}, {2500, 0.2, 0.5}, {810, 100.0 / 810, 0.025}, {3000, 0.2, -1}}
	for i, tt := range tests {
		rw := r.Rows[i]
		if got := ratio(rw.BareRPS); got != tt.bare {
			t.Errorf("%s %s: bare %v; want %v", rw.Target, rw.Op, got, tt.bare)
		}
		if got := ratio(rw.VsBare); math.Abs(got-tt.vsBare) > 1e-9 {
			t.Errorf("%s %s: vs bare %v; want %v", rw.Target, rw.Op, got, tt.vsBare)
		}
		if got := ratio(rw.BareMoved); math.Abs(got-tt.moved) > 1e-9 {
			t.Errorf("%s %s: bare moved %v; want %v", rw.Target, rw.Op, got, tt.moved)
		}
	}
	if got := r.BareBeside[1]; got.Op != "retrieve" || got.After != "sqlite" || got.RPS != 3000 {
		t.Errorf("second bare beside = %+v; want retrieve after sqlite at 3000", got)
	}
	// Only sqlite retrieve's bare moved past 20%: marked, and explained.
	lines := strings.Split(out.String(), "\n")
	marked := slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.Contains(l, "%!") })
	if len(marked) != 1 || !strings.Contains(marked[0], "sqlite") || !strings.Contains(marked[0], "retrieve") {
		t.Errorf("rows marked unreliable: %q; want sqlite retrieve's alone\n%s", marked, &out)
	}
	if !strings.Contains(out.String(), "!: bare's rate just before and just after") {
		t.Errorf("no note on the mark:\n%s", &out)
	}
}

// ratio is *v, or -1 for none.
func ratio(v *float64) float64 {
	if v == nil {
		return -1
	}
	return *v
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		args    []string
		targets []string
		pg      string
	}{
		{nil, []string{"bare", "stripe-mock", "sqlite", "postgres", "cluster"}, "postgres://env"},
		{[]string{"-only", "postgres,bare,postgres"}, []string{"bare", "postgres"}, "postgres://env"},
		{[]string{"-only", "sqlite,stripe-mock,bare"}, []string{"bare", "stripe-mock", "sqlite"}, "postgres://env"},
		{[]string{"-only", "cluster,postgres"}, []string{"postgres", "cluster"}, "postgres://env"},
		{[]string{"-postgres", "postgres://flag"}, []string{"bare", "stripe-mock", "sqlite", "postgres", "cluster"}, "postgres://flag"},
		{[]string{"-trace", "trace.out", "-profile-row", "create"}, []string{"bare", "stripe-mock", "sqlite", "postgres", "cluster"}, "postgres://env"},
		{[]string{"-cpuprofile", "cpu.prof", "-profile-row", "peak"}, []string{"bare", "stripe-mock", "sqlite", "postgres", "cluster"}, "postgres://env"},
	}
	getenv := func(k string) string {
		if k == "CHECKOUTD_TEST_DATABASE" {
			return "postgres://env"
		}
		return ""
	}
	for _, tt := range tests {
		cfg, err := parseConfig(tt.args, getenv, &bytes.Buffer{})
		if err != nil {
			t.Errorf("parseConfig(%q) = %v", tt.args, err)
			continue
		}
		if !slices.Equal(cfg.targets, tt.targets) || cfg.postgresURL != tt.pg {
			t.Errorf("parseConfig(%q) = targets %q, postgres %q; want %q, %q", tt.args, cfg.targets, cfg.postgresURL, tt.targets, tt.pg)
		}
	}
	for _, args := range [][]string{{"-only", "mysql"}, {"-concurrency", "0"}, {"extra"}, {"-scale", "10,x"}, {"-scale", "0"},
		{"-endpoints", "0"}, {"-endpoints", "17"}, {"-deliveries", "-1"}, {"-backlog", "0"}, {"-event-rate", "0"}, {"-event-rate", "1001"},
		{"-lists", "-1"}, {"-lists", "999"}, {"-claim-history", "-1"}, {"-profile-row", "create"},
		{"-cpuprofile", "cpu.prof", "-profile-row", "drain"}} {
		if _, err := parseConfig(args, getenv, &bytes.Buffer{}); err == nil {
			t.Errorf("parseConfig(%q) = nil error; want one", args)
		}
	}
}

// -profile-row peak profiles and traces the first attempts measured while
// the creates run at their peak, and no other row.
func TestProfilePeak(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-only", "sqlite", "-duration", "100ms", "-warmup", "0s", "-concurrency", "2", "-pool", "5", "-dir", dir,
		"-endpoints", "1", "-backlog", "5", "-event-rate", "100", "-bare-beside=false",
		"-cpuprofile", filepath.Join(dir, "cpu.prof"), "-trace", filepath.Join(dir, "trace.out"), "-profile-row", "peak"}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, &stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".prof") || strings.HasSuffix(e.Name(), ".out") {
			got = append(got, e.Name())
		}
	}
	if want := []string{"cpu-sqlite-peak.prof", "trace-sqlite-peak.out"}; !slices.Equal(got, want) {
		t.Errorf("files written = %q; want %q", got, want)
	}
}

// A row's profile is named after the file -cpuprofile gives, its target
// and its operation.
func TestProfileFile(t *testing.T) {
	for _, tt := range []struct{ path, want string }{
		{"cpu.prof", "cpu-sqlite-create.prof"},
		{"/tmp/out/cpu", "/tmp/out/cpu-sqlite-create"},
	} {
		if got := profileFile(tt.path, "sqlite", "create"); got != tt.want {
			t.Errorf("profileFile(%s) = %s; want %s", tt.path, got, tt.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	r := &result{}
	for i := 1; i <= 200; i++ {
		r.latencies = append(r.latencies, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		p    float64
		want int
	}{{50, 100}, {99, 198}, {100, 200}, {0.1, 1}}
	for _, tt := range tests {
		if got := r.percentile(tt.p); got != time.Duration(tt.want)*time.Millisecond {
			t.Errorf("percentile(%v) of 1..200 ms = %v; want %v", tt.p, got, time.Duration(tt.want)*time.Millisecond)
		}
	}
	if got := (&result{}).percentile(50); got != 0 {
		t.Errorf("percentile(50) of nothing = %v; want 0", got)
	}
}

// TestBesideFails checks that bare measured beside a row fails when its
// requests fail, rather than lowering every ratio over it.
func TestBesideFails(t *testing.T) {
	cfg := &config{concurrency: 2, pool: 3, duration: 50 * time.Millisecond}
	var stderr bytes.Buffer
	b, err := startBeside(context.Background(), cfg, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := b.measure(context.Background(), "retrieve"); err != nil || res.rps() == 0 {
		t.Fatalf("measure on a running bare = %v, %v; want a rate", res, err)
	}
	if err := b.t.close(); err != nil { // the handler stops: every request fails
		t.Fatal(err)
	}
	for _, op := range []string{"create", "retrieve"} {
		if _, err := b.measure(context.Background(), op); err == nil || !strings.Contains(err.Error(), "requests failed") {
			t.Errorf("measure %s on a stopped bare = %v; want the failures", op, err)
		}
	}
	b.client.CloseIdleConnections()
}
