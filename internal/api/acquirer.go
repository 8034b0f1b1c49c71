package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// maxAcquirerWebhookBytes bounds an acquirer's webhook body. Stripe's
// events are a few kilobytes; a dispute's with its evidence stays far below
// this.
const maxAcquirerWebhookBytes = 512 << 10

// HandleAcquirerWebhook serves POST /webhooks/{acquirer}/{storeId}: a card
// acquirer's webhook for a store (service.AcquirerWebhook). It carries no
// API key: the acquirer signs it with the store's webhook secret, and
// even a signed one is only a hint to look up. It answers 200 once what it
// names is looked up and written; 401 invalid_signature when the
// signature did not check out (it was still looked up), so that the
// acquirer shows the merchant a misconfigured secret; 404 for a store
// without that acquirer; 503 when the acquirer did not answer the lookup,
// so that it sends the event again.
func HandleAcquirerWebhook(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAcquirerWebhookBytes))
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			web.WriteError(w, r, checkout.Errorf(checkout.EPayloadTooLarge, "The webhook's body is larger than %d bytes.", maxAcquirerWebhookBytes))
			return
		}
		if err != nil {
			web.WriteError(w, r, checkout.Errorf(checkout.EValidationFailed, "The webhook's body could not be read."))
			return
		}
		verified, err := svc.AcquirerWebhook(r.Context(), r.PathValue("acquirer"), r.PathValue("storeId"), body, r.Header)
		if pay.Unavailable(err) {
			err = checkout.Errorf(checkout.EUnavailable, "The card acquirer did not answer a lookup. Send the event again later.")
		}
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		if !verified {
			web.WriteError(w, r, checkout.Errorf(checkout.EInvalidSignature,
				"The webhook's signature did not check out with the store's webhook signing secret."))
			return
		}
		web.WriteData(w, http.StatusOK, struct {
			Received bool `json:"received"`
		}{true})
	})
}
