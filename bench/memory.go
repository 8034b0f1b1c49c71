package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// memory is the process's resident memory at the end of the run, and its
// peak, from /proc/self/status (Linux). The servers, the load generator and
// the receivers share the one process, so the figures are an upper bound
// on a checkoutd server's: one serve process holds one target, not all.
type memory struct {
	RSSMB  float64 `json:"rss_mb"`
	PeakMB float64 `json:"peak_mb"`
}

// memoryLimitMB is issue 13's bound on the server's resident memory at the
// end of a run.
const memoryLimitMB = 150

// readMemory reads the process's VmRSS and VmHWM; nil where /proc is not.
func readMemory() *memory {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil
	}
	defer f.Close()
	m := &memory{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		if err != nil {
			return nil
		}
		if name == "VmRSS" {
			m.RSSMB = kb / 1024
		} else {
			m.PeakMB = kb / 1024
		}
	}
	return m
}

// printMemory writes the memory line.
func (r *report) printMemory(b *strings.Builder) {
	if r.Memory == nil {
		return
	}
	verdict := "within"
	if r.Memory.RSSMB > memoryLimitMB {
		verdict = "OVER"
	}
	fmt.Fprintf(b, "\nmemory at the end of the run: RSS %.0f MB (%s the %d MB bound), peak %.0f MB; one process holds every target, the load generator and the receivers\n",
		r.Memory.RSSMB, verdict, memoryLimitMB, r.Memory.PeakMB)
}
