package main

import (
	"path/filepath"
	"testing"
	"time"
)

// serve sets the collector's heap floor (internal/gcfloor), which shows as
// a GOGC above 100 while the heap is small; an operator's GOGC or
// GOMEMLIMIT is left as they set it.
func TestServeSetsTheCollectorsFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	tests := []struct {
		name string
		env  []string
		want func(float64) bool
	}{
		{"default", nil, func(p float64) bool { return p > 100 }},
		{"GOGC set", []string{"GOGC=150"}, func(p float64) bool { return p == 150 }},
		{"GOMEMLIMIT set", []string{"GOMEMLIMIT=1GiB"}, func(p float64) bool { return p == 100 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startProcessEnv(t, tt.env, "--data-dir", filepath.Join(t.TempDir(), "data"))
			// The floor is set at start and again after each collection;
			// a scrape allocates, so scraping until it shows lets
			// collections happen.
			var got float64
			waitFor(t, "go_gc_gogc_percent as wanted", time.Minute, func() bool {
				got = scrapeServe(t, "http://"+p.addr+"/metrics").Value("go_gc_gogc_percent")
				return tt.want(got)
			})
			// And it stays so.
			for range 20 {
				if got = scrapeServe(t, "http://"+p.addr+"/metrics").Value("go_gc_gogc_percent"); !tt.want(got) {
					t.Fatalf("go_gc_gogc_percent = %v later", got)
				}
			}
		})
	}
}
