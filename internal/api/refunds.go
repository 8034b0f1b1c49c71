package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// PaymentJSON is a payment as the API returns it: as events carry it, with
// what refunds under way hold, its refunds, oldest first, and its dispute.
type PaymentJSON struct {
	*checkout.PaymentJSON
	AmountRefunding int64                  `json:"amount_refunding"`
	Refunds         []*checkout.RefundJSON `json:"refunds"`
	Dispute         *checkout.DisputeJSON  `json:"dispute"`
}

// NewPaymentJSON returns p with its refunds and dispute (nil when none) as
// the API shows them, crypto refunds' links under checkoutBaseURL.
func NewPaymentJSON(p *checkout.Payment, rs []*checkout.Refund, d *checkout.Dispute, checkoutBaseURL string) *PaymentJSON {
	j := &PaymentJSON{PaymentJSON: p.View(), AmountRefunding: p.AmountRefunding, Refunds: make([]*checkout.RefundJSON, len(rs))}
	for i, r := range rs {
		j.Refunds[i] = r.View(checkoutBaseURL)
	}
	if d != nil {
		j.Dispute = d.View()
	}
	return j
}

// HandleCreateRefund serves POST
// /v1/stores/{storeId}/payments/{paymentId}/refunds: refunds:write, an
// optional body ({"amount", "reason"}; none refunds all that is left),
// Idempotency-Key. It answers 201 with the refund, whatever its processor
// said: succeeded, failed (with why), or pending while the processor has
// not answered.
func HandleCreateRefund(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := scopedParams(r, key, checkout.PermRefundsWrite, "paymentId", checkout.PrefixPayment)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		idemKey, err := idempotencyKey(r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		var body []byte
		if r.ContentLength != 0 || r.Header.Get("Content-Type") != "" {
			if body, err = readBody(w, r); err != nil {
				web.WriteError(w, r, err)
				return
			}
		}
		params, err := checkout.ParseRefundRequest(body)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		out, err := svc.RefundPayment(withOrigin(r, key), service.RefundRequest{
			Scope:     checkout.Scope{MerchantID: storeID, Mode: key.Mode},
			PaymentID: r.PathValue("paymentId"), Params: params,
			By:             checkout.Actor{Kind: checkout.ActorAPIKey, ID: key.ID},
			IdempotencyKey: idemKey,
		})
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		if out.Replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		web.WriteData(w, http.StatusCreated, out.Refund.View(svc.CheckoutBaseURL()))
	})
}

// HandleGetPayment serves GET /v1/stores/{storeId}/payments/{paymentId}:
// the payment with its refunds, for a key that may read payments
// (checkouts:read or refunds:write).
func HandleGetPayment(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := scopedParams(r, key, "", "paymentId", checkout.PrefixPayment)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		scope := checkout.Scope{MerchantID: storeID, Mode: key.Mode}
		p, err := svc.PaymentIn(r.Context(), scope, r.PathValue("paymentId"))
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		rs, err := svc.Refunds(r.Context(), p.ID)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		d, err := svc.DisputeOfPayment(r.Context(), p.ID)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, NewPaymentJSON(p, rs, d, svc.CheckoutBaseURL()))
	})
}

// HandleGetDispute serves GET /v1/stores/{storeId}/disputes/{disputeId},
// for a key that may read payments.
func HandleGetDispute(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := scopedParams(r, key, "", "disputeId", checkout.PrefixDispute)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		d, err := svc.DisputeIn(r.Context(), checkout.Scope{MerchantID: storeID, Mode: key.Mode}, r.PathValue("disputeId"))
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, d.View())
	})
}

// HandleDisputeEvidence serves POST
// /v1/stores/{storeId}/disputes/{disputeId}/evidence: disputes:write, the
// evidence as a JSON object of its texts. It answers 200 with the dispute,
// under review.
func HandleDisputeEvidence(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := scopedParams(r, key, checkout.PermDisputesWrite, "disputeId", checkout.PrefixDispute)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		e, err := checkout.ParseDisputeEvidence(body)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		d, err := svc.SubmitDisputeEvidence(withOrigin(r, key), service.DisputeEvidenceRequest{
			Scope: checkout.Scope{MerchantID: storeID, Mode: key.Mode}, DisputeID: r.PathValue("disputeId"), Evidence: e,
			By: checkout.Actor{Kind: checkout.ActorAPIKey, ID: key.ID},
		})
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, d.View())
	})
}

// HandleGetRefund serves GET /v1/stores/{storeId}/refunds/{refundId}, for a
// key that may read payments (checkouts:read or refunds:write).
func HandleGetRefund(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := scopedParams(r, key, "", "refundId", checkout.PrefixRefund)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		ref, err := svc.RefundIn(r.Context(), checkout.Scope{MerchantID: storeID, Mode: key.Mode}, r.PathValue("refundId"))
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, ref.View(svc.CheckoutBaseURL()))
	})
}

// HandleCancelRefund serves POST
// /v1/stores/{storeId}/refunds/{refundId}/cancel: refunds:write, no body.
// It answers 200 with the refund, canceled: a crypto refund whose payout
// has not been seen. Any other is 409 refund_not_cancelable; a canceled
// one is answered as it is, so that a retry after a lost answer succeeds.
func HandleCancelRefund(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := scopedParams(r, key, checkout.PermRefundsWrite, "refundId", checkout.PrefixRefund)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		out, err := svc.CancelRefund(r.Context(), checkout.Scope{MerchantID: storeID, Mode: key.Mode}, r.PathValue("refundId"))
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, out.Refund.View(svc.CheckoutBaseURL()))
	})
}

// scopedParams checks the path parameters (the store's, and the named id's
// shape: prefix and 32 lower-case hex), that the key belongs to the store,
// and that it carries perm, or may read payments when perm is "". It
// returns the store id in its canonical form.
func scopedParams(r *http.Request, key *checkout.APIKey, perm checkout.Permission, idParam, prefix string) (string, error) {
	storeID, err := pathParams(r, false)
	if err == nil && !validHexID(r.PathValue(idParam), prefix) {
		v := checkout.Violation{Code: "invalid_format", Param: idParam,
			Message: idParam + " must be " + prefix + " and 32 lower-case hex characters."}
		err = &checkout.Error{Code: checkout.EValidationFailed, Message: v.Message, Param: v.Param, Details: []checkout.Violation{v}}
	}
	if err != nil {
		return "", err
	}
	if err := requireStore(key, storeID); err != nil {
		return "", err
	}
	if perm != "" {
		return storeID, requirePermission(key, perm)
	}
	if !key.CanReadPayments() {
		return "", &checkout.Error{Code: checkout.EPermissionDenied,
			Message: "This API key may not read payments: it needs checkouts:read (or checkouts:write) or refunds:write."}
	}
	return storeID, nil
}

// validHexID reports whether id is prefix and 32 lower-case hex digits.
func validHexID(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || len(rest) != 32 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// withOrigin is r's context carrying who changes something through the API,
// for the audit trail: the key, from the TCP peer's address and with the
// request's User-Agent.
func withOrigin(r *http.Request, key *checkout.APIKey) context.Context {
	return service.WithOrigin(r.Context(), service.Origin{Actor: checkout.Actor{Kind: checkout.ActorAPIKey, ID: key.ID},
		ClientAddress: web.AddressOf(r.RemoteAddr), UserAgent: r.UserAgent()})
}
