package server

import (
	"context"
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// handleHealthz answers while the process serves requests.
func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.WriteData(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// handleReadyz answers 200 when the database answers too, and 503
// service_unavailable when it does not.
func handleReadyz(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := svc.Store().Ping(ctx); err != nil {
			web.WriteError(w, r, &checkout.Error{Code: checkout.EUnavailable, Message: "The database does not answer.", Err: err})
			return
		}
		ready := readiness{Status: "ready", Database: "ok"}
		for _, c := range svc.CryptoStatus(ctx) {
			if c.Err != "" {
				web.Logger(r.Context()).WarnContext(r.Context(), "live crypto node does not answer: its payments wait for it", "coin", c.Coin, "err", c.Err)
			}
			if ready.Crypto == nil {
				ready.Crypto = map[string]nodeReadiness{}
			}
			ready.Crypto[c.Coin] = nodeReadinessOf(c)
		}
		web.WriteData(w, http.StatusOK, ready)
	})
}

// readiness is /readyz's answer. A live crypto node that does not answer
// leaves the process ready (card payments, the API and the dashboard work;
// that coin's payments wait for the node), and shows here.
type readiness struct {
	Database string                   `json:"database"`
	Status   string                   `json:"status"`
	Crypto   map[string]nodeReadiness `json:"crypto,omitempty"`
}

// nodeReadiness is how a live coin's node stands: "ok", "syncing" or
// "unreachable" (why is logged, not shown: /readyz is public), its tip,
// how many blocks it is behind its peers, and how many the watcher is
// behind it.
type nodeReadiness struct {
	Node    string `json:"node"`
	Tip     *int64 `json:"tip,omitempty"`
	Behind  *int64 `json:"behind,omitempty"`
	ScanLag *int64 `json:"scan_lag,omitempty"`
}

func nodeReadinessOf(c pay.CoinStatus) nodeReadiness {
	if c.Err != "" {
		return nodeReadiness{Node: "unreachable"}
	}
	r := nodeReadiness{Node: "ok", Tip: &c.Tip}
	if c.Syncing {
		r.Node = "syncing"
	}
	behind := max(c.Best-c.Tip, 0)
	r.Behind = &behind
	if !c.ScannedAt.IsZero() {
		lag := max(c.Tip-c.Scanned, 0)
		r.ScanLag = &lag
	}
	return r
}
