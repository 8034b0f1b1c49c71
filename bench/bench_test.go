package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestRun keeps the program compiling and working: a very short run on
// SQLite. It checks what was measured, never how fast.
func TestRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"-only", "bare,sqlite", "-duration", "100ms", "-warmup", "0s", "-concurrency", "2", "-pool", "5", "-dir", t.TempDir(), "-json",
		"-endpoints", "2", "-backlog", "10", "-event-rate", "100", "-scale", "30,20", "-deliveries", "400", "-lists", "2000"}
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
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decode the JSON report: %v\n%s", err, &stdout)
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
	if want := []string{"bare deliver", "bare one", "sqlite deliver", "sqlite first-attempt", "sqlite listen"}; !slices.Equal(got, want) {
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

func TestParseConfig(t *testing.T) {
	tests := []struct {
		args    []string
		targets []string
		pg      string
	}{
		{nil, []string{"bare", "sqlite", "postgres"}, "postgres://env"},
		{[]string{"-only", "postgres,bare,postgres"}, []string{"bare", "postgres"}, "postgres://env"},
		{[]string{"-postgres", "postgres://flag"}, []string{"bare", "sqlite", "postgres"}, "postgres://flag"},
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
		{"-lists", "-1"}, {"-lists", "999"}} {
		if _, err := parseConfig(args, getenv, &bytes.Buffer{}); err == nil {
			t.Errorf("parseConfig(%q) = nil error; want one", args)
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
