package server

import (
	"context"
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
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
		web.WriteData(w, http.StatusOK, map[string]string{"status": "ready", "database": "ok"})
	})
}
