package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/checkoutd/checkoutd/internal/metrics"
)

// BenchmarkInstrument is what the HTTP metrics cost a request: a handler
// that only notes its route, bare and inside instrument, run in parallel as
// the server runs requests (go test -run - -bench Instrument -cpu 1,2
// ./internal/server). The difference of the two is the cost.
func BenchmarkInstrument(b *testing.B) {
	routes := []string{"/v1/stores/{storeId}/checkouts", "/v1/stores/{storeId}/checkouts/{checkoutId}"}
	handlers := func(wrap func(http.Handler) http.Handler) []http.Handler {
		var hs []http.Handler
		for _, route := range routes {
			hs = append(hs, wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				noteRoute(r, route)
				w.WriteHeader(http.StatusCreated)
			})))
		}
		return hs
	}
	run := func(b *testing.B, hs []http.Handler) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w, r := httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/stores/s/checkouts", nil)
			for i := 0; pb.Next(); i++ {
				hs[i%len(hs)].ServeHTTP(w, r)
			}
		})
	}
	b.Run("bare", func(b *testing.B) {
		run(b, handlers(func(h http.Handler) http.Handler { return h }))
	})
	b.Run("instrumented", func(b *testing.B) {
		m := newHTTPMetrics(metrics.NewRegistry())
		run(b, handlers(func(h http.Handler) http.Handler { return instrument(m, h) }))
	})
}
