// Package gcfloor keeps Go's garbage collector from running every few
// milliseconds while the live heap is small.
//
// With GOGC at its default of 100, the collector begins a cycle when the
// heap has grown to twice what the last cycle found live, or to 4 MB. A
// checkoutd server keeps 2 to 3 MB live and, at its peak, allocates a few
// hundred megabytes a second (requests, responses, logs), so the collector
// ran 60 to 70 times a second: each cycle's two short stops of the world, a
// quarter of the processors while it marks, and the work it makes
// allocating goroutines do (assists) fell on the requests and on the
// webhook workers. A floor lets the heap grow to Floor bytes between cycles
// while the live heap is under half of it; from half, the collector runs
// as GOGC=100 would, so a big heap costs no more memory than it did.
//
// An operator who sets GOGC or GOMEMLIMIT keeps their setting: Start then
// does nothing.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultFloor is the heap a server may grow to between collections while
// its live heap is small: 32 MiB. Measured with the benchmark program
// (bench/README.md), against GOGC=100: SQLite retrieves and creates 5 to
// 25% faster, for about 8 MB more at the peak of resident memory. 64 MiB did no
// better.
const DefaultFloor = 32 << 20

// runtimeMinimum is the runtime's least heap goal at GOGC=100, 4 MB. The
// runtime scales it with the percent (at GOGC=800, no cycle begins before
// 32 MB), so a percent above floor over it would put the goal above the
// floor whatever the live heap: at GOGC=10000, 400 MB.
const runtimeMinimum = 4 << 20

// Percent returns the GOGC value that sets the next cycle's heap goal at
// floor bytes for a live heap of live bytes, and never less than 100, the
// default: the goal is live × (1 + percent/100), and at least the
// runtime's minimum scaled by the percent, which bounds the percent at
// floor/runtimeMinimum × 100 (800 for 32 MiB).
func Percent(live, floor uint64) int {
	most := floor * 100 / runtimeMinimum
	if live == 0 {
		return int(max(most, 100))
	}
	if live >= floor/2 {
		return 100
	}
	return int(max(min((floor-live)*100/live, most), 100))
}

// tuner sets the collector's percent after every cycle.
type tuner struct {
	floor   uint64
	stopped bool // under mu
	sample  []metrics.Sample
	percent int
}

// sentinel is an object nothing keeps: the cleanup attached to it runs
// after the collector's cycle that finds it unreachable. It holds a
// pointer so that it is not one of the tiny objects packed together, whose
// cleanups may never run.
type sentinel struct {
	_ *tuner
	_ [2]uintptr
}

// arm attaches the adjustment to a new sentinel, for the next cycle.
func (t *tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *tuner) {
		// Under mu, so that no adjustment follows a stop's restore.
		mu.Lock()
		defer mu.Unlock()
		if t.stopped {
			return
		}
		t.adjust()
		t.arm()
	}, t)
}

// adjust sets the percent for the live heap the last cycle found. It runs
// under mu.
func (t *tuner) adjust() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := Percent(t.sample[0].Value.Uint64(), t.floor); p != t.percent {
		t.percent = p
		debug.SetGCPercent(p)
	}
}

var (
	mu      sync.Mutex
	running *tuner
	users   int
	before  int
)

// Start keeps the heap goal at floor bytes or more (Percent) after every
// collection, until the returned stop is called; then the percent goes
// back to what it was. Starts while one runs share it (the tests serve
// several servers in one process). It does nothing when getenv has GOGC or
// GOMEMLIMIT set.
func Start(getenv func(string) string, floor uint64) (stop func()) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	users++
	if running == nil {
		t := &tuner{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: -1}
		before = debug.SetGCPercent(100)
		debug.SetGCPercent(before)
		t.adjust()
		t.arm()
		running = t
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if users--; users == 0 {
				running.stopped = true
				running = nil
				debug.SetGCPercent(before)
			}
		})
	}
}
