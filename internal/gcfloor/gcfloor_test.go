package gcfloor_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/gcfloor"
)

func TestPercent(t *testing.T) {
	const floor = 32 << 20
	tests := []struct {
		live uint64
		want int
	}{
		{0, 800},       // nothing live yet: the runtime's minimum, scaled, is the floor
		{1 << 10, 800}, // bounded: at 3100 the runtime's minimum would be 124 MiB
		{1 << 20, 800},
		{3 << 20, 800},     // 966 would put the runtime's minimum at 38 MiB
		{4 << 20, 700},     // 4 MiB live: the goal is 32 MiB
		{8 << 20, 300},     // 8 MiB: 32 MiB
		{floor/2 - 1, 100}, // just under half: 100 (rounded down from 100.00001)
		{floor / 2, 100},   // half: as GOGC=100
		{floor, 100},       // above: as GOGC=100, the goal twice the live heap
		{1 << 30, 100},
	}
	for _, tt := range tests {
		if got := gcfloor.Percent(tt.live, floor); got != tt.want {
			t.Errorf("Percent(%d, %d) = %d; want %d", tt.live, floor, got, tt.want)
		}
	}
}

// gogc reads the collector's percent as the runtime has it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitGOGC runs collections until the percent is want, for at most a
// minute: the adjustment runs in the runtime's cleanup goroutine after a
// cycle, not within runtime.GC.
func waitGOGC(t *testing.T, want func(uint64) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !want(gogc()) {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC stayed %d", gogc())
		}
		runtime.GC()
		runtime.Gosched()
	}
}

func TestStartRaisesTheGoalAndStopRestores(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	noEnv := func(string) string { return "" }
	stop := gcfloor.Start(noEnv, 64<<20)
	// A test binary's live heap is a few MB: far under half of 64 MiB.
	waitGOGC(t, func(p uint64) bool { return p > 100 })
	// A second user shares the tuner; its stop leaves the first's running.
	stop2 := gcfloor.Start(noEnv, 64<<20)
	stop2()
	stop2()
	if p := gogc(); p <= 100 {
		t.Fatalf("GOGC = %d after the second user stopped; want the floor kept", p)
	}
	stop()
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC = %d after stop; want 100 again", p)
	}
	// No adjustment after the stop, however many cycles.
	for range 5 {
		runtime.GC()
	}
	if p := gogc(); p != 100 {
		t.Fatalf("GOGC = %d after stop and 5 cycles; want 100", p)
	}
}

func TestStartLeavesTheOperatorsSetting(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		stop := gcfloor.Start(func(k string) string {
			if k == name {
				return "150"
			}
			return ""
		}, 64<<20)
		for range 3 {
			runtime.GC()
		}
		if p := gogc(); p != 150 {
			t.Errorf("%s set: GOGC = %d; want the operator's 150 left alone", name, p)
		}
		stop()
	}
}

// The goal Percent sets is never above the floor for a live heap under
// half of it, counting the runtime's minimum scaled by the percent; and
// from half, it is twice the live heap, as GOGC=100.
func TestPercentGoal(t *testing.T) {
	const floor = 32 << 20
	for live := uint64(0); live <= 2*floor; live += 64 << 10 {
		p := uint64(gcfloor.Percent(live, floor))
		goal := max(live+live*p/100, 4<<20*p/100)
		switch {
		case live < floor/2 && goal > floor:
			t.Fatalf("live %d: percent %d, goal %d; want at most the floor %d", live, p, goal, floor)
		case live < floor/9 && goal < floor-(1<<20):
			t.Fatalf("live %d: percent %d, goal %d; want about the floor %d", live, p, goal, floor)
		case live >= floor/2 && p != 100:
			t.Fatalf("live %d: percent %d; want 100", live, p)
		}
	}
}
