package app_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/metrics/metricstest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// nodes stands in for the live crypto nodes: it answers Status, counting
// the calls (each a round of node RPCs in the real network), and nothing
// else (the embedded interface is nil).
type nodes struct {
	pay.LiveCryptoNetwork
	calls atomic.Int64
}

func (n *nodes) Status(context.Context) []pay.CoinStatus {
	n.calls.Add(1)
	return []pay.CoinStatus{
		{Coin: "BTC", Tip: 100, Best: 103, Scanned: 98, ScannedAt: time.Now()},
		{Coin: "LTC", Err: "connection refused"},
	}
}

// A scrape asks the live crypto nodes how they stand once, for the four
// series it makes of the answer: the client collects families concurrently,
// and a cache miss in each would be four rounds of node RPCs.
func TestMetricsCryptoNodes(t *testing.T) {
	n := &nodes{}
	a := app.New(app.Config{Store: storetest.Open(t, "sqlite"), Logger: logtest.Logger(t),
		Processors: pay.Registry{Live: pay.Processors{Crypto: n}}})
	t.Cleanup(a.Close)
	srv := httptest.NewServer(a.Handler)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m, err := metricstest.Parse(string(b))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, b)
	}
	if got := n.calls.Load(); got != 1 {
		t.Errorf("node status asked %d times in one scrape; want 1", got)
	}
	for _, tt := range []struct {
		name, coin string
		want       float64
		present    bool
	}{
		{"checkoutd_crypto_node_up", "BTC", 1, true},
		{"checkoutd_crypto_node_up", "LTC", 0, true},
		{"checkoutd_crypto_node_height", "BTC", 100, true},
		{"checkoutd_crypto_node_height", "LTC", 0, false},
		{"checkoutd_crypto_node_behind_blocks", "BTC", 3, true},
		{"checkoutd_crypto_node_behind_blocks", "LTC", 0, false},
		{"checkoutd_crypto_scan_lag_blocks", "BTC", 2, true},
		{"checkoutd_crypto_scan_lag_blocks", "LTC", 0, false},
	} {
		got, count := m.Sum(tt.name, "coin", tt.coin)
		if got != tt.want || (count == 1) != tt.present {
			t.Errorf("%s{coin=%q} = %v (%d series); want %v, present %v", tt.name, tt.coin, got, count, tt.want, tt.present)
		}
	}
	for _, name := range []string{"checkoutd_crypto_node_up", "checkoutd_crypto_node_height", "checkoutd_crypto_node_behind_blocks", "checkoutd_crypto_scan_lag_blocks"} {
		if m.Types[name] != "gauge" || m.Help[name] == "" {
			t.Errorf("%s: TYPE %q HELP %q", name, m.Types[name], m.Help[name])
		}
	}
}
