package server_test

import (
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Health checks and scrapes that succeed are logged at debug, every other
// request at info.
func TestAccessLogLevels(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		h.do(request{method: "GET", path: "/healthz"})
		h.do(request{method: "GET", path: "/readyz"})
		h.do(request{method: "GET", path: "/nope"})
		h.get("cs_" + strings.Repeat("a", 64))
		want := map[string]string{"path=/healthz": "level=DEBUG", "path=/readyz": "level=DEBUG", "path=/nope": "level=INFO", "path=/v1/stores/": "level=INFO"}
		for _, line := range strings.Split(h.logBuf.String(), "\n") {
			if !strings.Contains(line, "msg=request") {
				continue
			}
			for path, level := range want {
				if strings.Contains(line, path) {
					if !strings.Contains(line, level) {
						t.Errorf("access log %q; want %s", line, level)
					}
					delete(want, path)
				}
			}
		}
		if len(want) > 0 {
			t.Errorf("no access log line for %v", want)
		}
	})
}
