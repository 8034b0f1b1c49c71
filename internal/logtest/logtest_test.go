package logtest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/checkoutd/checkoutd/internal/logtest"
)

// Capture keeps debug records and every goroutine's lines whole.
func TestCapture(t *testing.T) {
	log, buf := logtest.Capture()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				log.Debug("line", "k", "v")
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines; want 800", len(lines))
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, "level=DEBUG msg=line k=v") {
			t.Fatalf("line %q", l)
		}
	}
}

// Logger writes to the test's log, and drops what comes after the test.
func TestLogger(t *testing.T) {
	var log interface{ Info(string, ...any) }
	t.Run("inner", func(t *testing.T) {
		l := logtest.Logger(t)
		l.Info("during the test")
		log = l
	})
	log.Info("after the test") // would panic if it reached t.Log
}
