package server

import (
	"log/slog"
	"net/http"

	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/metrics"
	"github.com/checkoutd/checkoutd/openapi"
)

// addRoutes lists every door of the service.
func addRoutes(r *router, d Deps) {
	// The merchant API: JSON envelope, API-key auth, rate limit, request logs.
	merchant := func(h http.Handler) http.Handler {
		h = api.Limit(d.RateLimiter, h)
		h = api.LogRequests(d.RequestLogs, d.Now, h)
		return api.Authenticate(d.Service, d.AuthFailures, h)
	}
	r.handle("POST /v1/stores/{storeId}/checkouts", merchant(api.HandleCreateCheckout(d.Service)))
	r.handle("GET /v1/stores/{storeId}/checkouts/{checkoutId}", merchant(api.HandleGetCheckout(d.Service)))
	r.handle("GET /v1/stores/{storeId}/payments/{paymentId}", merchant(api.HandleGetPayment(d.Service)))
	r.handle("POST /v1/stores/{storeId}/payments/{paymentId}/refunds", merchant(api.HandleCreateRefund(d.Service)))
	r.handle("GET /v1/stores/{storeId}/refunds/{refundId}", merchant(api.HandleGetRefund(d.Service)))
	r.handle("POST /v1/stores/{storeId}/refunds/{refundId}/cancel", merchant(api.HandleCancelRefund(d.Service)))
	r.handle("GET /v1/stores/{storeId}/disputes/{disputeId}", merchant(api.HandleGetDispute(d.Service)))
	r.handle("POST /v1/stores/{storeId}/disputes/{disputeId}/evidence", merchant(api.HandleDisputeEvidence(d.Service)))
	// checkoutd listen's doors (docs/webhooks.md, Local development).
	r.handle("POST /v1/stores/{storeId}/listeners", merchant(api.HandleListen(d.Service)))
	r.handle("GET /v1/stores/{storeId}/listeners/{listenerId}/stream", merchant(api.HandleListenerStream(d.Service, d.Streams)))
	r.handle("POST /v1/stores/{storeId}/listeners/{listenerId}/deliveries/{deliveryId}", merchant(api.HandleListenerResult(d.Service)))
	r.handle("GET /v1/openapi.json", openapi.Handler())
	// Card acquirers' webhooks (docs/payments.md, Card acquirers): signed
	// by the acquirer with the store's secret, looked up, never trusted.
	r.handle("POST /webhooks/{acquirer}/{storeId}", api.HandleAcquirerWebhook(d.Service))

	// The hosted payment page (HTML; internal/page).
	pg := d.Page
	r.handle("GET /invoice/{id}", pg.HandleInvoice())
	r.handle("GET /invoice/{id}/status", pg.HandleStatus())
	r.handle("POST /invoice/{id}/card", pg.HandleCard())
	r.handle("POST /invoice/{id}/card/start", pg.HandleAcquirerStart())
	r.handle("GET /invoice/{id}/card/return", pg.HandleAcquirerReturn())
	r.handle("POST /invoice/{id}/crypto", pg.HandleCryptoQuote())
	r.handle("POST /invoice/{id}/crypto/simulate", pg.HandleCryptoSimulate())
	r.handle("POST /invoice/{id}/skins", pg.HandleSkins())
	r.handle("GET /invoice/", pg.HandleNotFound())
	// The crypto refund page, where a buyer gives their address.
	r.handle("GET /refund/{token}", pg.HandleRefund())
	r.handle("POST /refund/{token}", pg.HandleRefundAddress())
	r.handle("GET /refund/", pg.HandleRefundNotFound())
	r.handle("GET /assets/{name}", pg.HandleAsset())
	r.handle("GET /assets/acquirer/{file}", pg.HandleAcquirerAdapter())

	// The merchant dashboard (HTML; internal/dashboard). Every page but
	// sign-in and setup redirects to sign-in without a session; every POST
	// passes cross-origin protection and carries a form token.
	db := d.Dashboard
	r.handle("GET /dashboard/setup", db.HandleSetupPage())
	r.handle("POST /dashboard/setup", db.HandleSetup())
	r.handle("GET /dashboard/signin", db.HandleSignInPage())
	r.handle("POST /dashboard/signin", db.HandleSignIn())
	r.handle("POST /dashboard/signout", db.HandleSignOut())
	r.handle("GET /dashboard/invitation", db.HandleInvitationPage())
	r.handle("POST /dashboard/invitation", db.HandleJoin())
	r.handle("POST /dashboard/invitation/accept", db.HandleAcceptInvitation())
	r.handle("GET /dashboard", http.RedirectHandler("/dashboard/", http.StatusMovedPermanently))
	r.handle("GET /dashboard/{$}", db.HandleHome())
	r.handle("GET /dashboard/stores/new", db.HandleNewStorePage())
	r.handle("POST /dashboard/stores/new", db.HandleNewStore())
	r.handle("GET /dashboard/stores/{store}/{$}", db.HandleStoreRoot())
	r.handle("GET /dashboard/stores/{store}/{mode}/{$}", db.HandleStoreHome())
	r.handle("GET /dashboard/stores/{store}/{mode}/export/{file}", db.HandleExport())
	r.handle("GET /dashboard/stores/{store}/{mode}/sessions", db.HandleSessions())
	r.handle("GET /dashboard/stores/{store}/{mode}/sessions/{id}", db.HandleSession())
	r.handle("GET /dashboard/stores/{store}/{mode}/payments", db.HandlePayments())
	r.handle("GET /dashboard/stores/{store}/{mode}/payments/{id}", db.HandlePayment())
	r.handle("GET /dashboard/stores/{store}/{mode}/payments/{id}/refund", db.HandleRefundPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/payments/{id}/refund", db.HandleRefund())
	r.handle("POST /dashboard/stores/{store}/{mode}/refunds/{id}/cancel", db.HandleCancelRefund())
	r.handle("POST /dashboard/stores/{store}/{mode}/refunds/{id}/simulate-payout", db.HandleSimulateRefundPayout())
	r.handle("POST /dashboard/stores/{store}/{mode}/payments/{id}/dispute/review", db.HandleDisputeReview())
	r.handle("POST /dashboard/stores/{store}/{mode}/payments/{id}/dispute/evidence", db.HandleDisputeEvidence())
	r.handle("GET /dashboard/stores/{store}/{mode}/settings", db.HandleStoreSettingsPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/settings", db.HandleStoreSettings())
	r.handle("GET /dashboard/stores/{store}/{mode}/settings/crypto", db.HandleCrypto())
	r.handle("POST /dashboard/stores/{store}/{mode}/settings/crypto", db.HandleSetCrypto())
	r.handle("GET /dashboard/stores/{store}/{mode}/settings/crypto/{coin}/remove", db.HandleRemoveCryptoPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/settings/crypto/{coin}/remove", db.HandleRemoveCrypto())
	r.handle("GET /dashboard/stores/{store}/{mode}/settings/cards", db.HandleCards())
	r.handle("POST /dashboard/stores/{store}/{mode}/settings/cards", db.HandleSetCards())
	r.handle("GET /dashboard/stores/{store}/{mode}/settings/cards/{acquirer}/remove", db.HandleRemoveCardsPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/settings/cards/{acquirer}/remove", db.HandleRemoveCards())
	r.handle("GET /dashboard/stores/{store}/{mode}/settings/security", db.HandleSecurity())
	r.handle("GET /dashboard/stores/{store}/{mode}/team", db.HandleTeam())
	r.handle("POST /dashboard/stores/{store}/{mode}/team/invite", db.HandleInvite())
	r.handle("POST /dashboard/stores/{store}/{mode}/team/members/{account}/{action}", db.HandleMemberAction()) // role, remove
	r.handle("POST /dashboard/stores/{store}/{mode}/team/invitations/{id}/revoke", db.HandleRevokeInvitation())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/keys", db.HandleKeys())
	r.handle("POST /dashboard/stores/{store}/{mode}/developers/keys", db.HandleCreateKey())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/keys/{id}/revoke", db.HandleRevokeKeyPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/developers/keys/{id}/revoke", db.HandleRevokeKey())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/events", db.HandleEvents())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/events/{id}", db.HandleEvent())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/logs", db.HandleLogs())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/logs/{id}", db.HandleLog())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/webhooks", db.HandleWebhooks())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/webhooks/new", db.HandleNewEndpointPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/developers/webhooks/new", db.HandleNewEndpoint())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/webhooks/{id}", db.HandleEndpoint())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/webhooks/{id}/edit", db.HandleEditEndpointPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/developers/webhooks/{id}/edit", db.HandleEditEndpoint())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/webhooks/{id}/delete", db.HandleDeleteEndpointPage())
	r.handle("POST /dashboard/stores/{store}/{mode}/developers/webhooks/{id}/delete", db.HandleDeleteEndpoint())
	// test, disable, enable, secret (reveal), roll, retry-failed
	r.handle("POST /dashboard/stores/{store}/{mode}/developers/webhooks/{id}/{action}", db.HandleEndpointAction())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/deliveries", db.HandleDeliveries())
	r.handle("GET /dashboard/stores/{store}/{mode}/developers/deliveries/{id}", db.HandleDelivery())
	r.handle("POST /dashboard/stores/{store}/{mode}/developers/deliveries/{id}/resend", db.HandleResend())
	r.handle("GET /dashboard/assets/{name}", db.HandleAsset())
	r.handle("GET /dashboard/", db.HandleNotFound())

	// Operations.
	r.handle("GET /healthz", handleHealthz())
	r.handle("GET /readyz", handleReadyz(d.Service))
	if !d.HideMetrics {
		addMetricsRoutes(r, d.Metrics, d.Logger)
	}
}

// addMetricsRoutes lists the doors of the metrics: on the main listener
// unless the operator gives them one of their own (MetricsHandler).
func addMetricsRoutes(r *router, reg *metrics.Registry, log *slog.Logger) {
	r.handle("GET /metrics", reg.Handler(log))
}
