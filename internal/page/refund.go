package page

import (
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The refund page: where the buyer of a crypto payment gives the address
// the merchant's refund goes to (docs/payments.md, Crypto refunds). Its
// address holds the link's token, which says where money goes, so the
// access log never shows it (internal/server's accessLog), and it sends no
// referrer.

// refundPath is the refund page of a link token.
func refundPath(token string) string { return "/refund/" + token }

// refundView is the refund page.
type refundView struct {
	Test     bool
	Merchant *checkout.Merchant
	Amount   string // the refund, in the payment's currency
	Coin     checkout.Coin
	// Stage is awaiting_address, awaiting_payout, confirming, succeeded
	// or closed (canceled, expired, failed).
	Stage string
	// AmountCoin is what the buyer receives, in coins: known up front at
	// the payment's rate, once the address is given at the current one.
	AmountCoin    string
	AtPaymentRate bool
	Expires       string // until when the link takes an address
	Address       string
	TxHash        string
	Closed        string // why the link takes nothing, when Stage is closed
	CSRF          string
	Path          string
	Typed         string // the address as typed, shown again with Error
	Error         string
	Notice        string // why a post was not taken
}

// HandleRefund serves GET /refund/{token}: the refund in its stage.
func (p *Page) HandleRefund() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		link, err := p.svc.RefundByLink(r.Context(), r.PathValue("token"))
		if err != nil {
			p.refundFail(w, r, err)
			return
		}
		p.renderRefund(w, r, http.StatusOK, p.refundView(w, r, link))
	})
}

// HandleRefundAddress serves POST /refund/{token}: the buyer's address.
// Taken, the page shows what the merchant will send (303, so a reload
// does not post again); a wrong address comes back with the reason beside
// the field, as typed; a link that takes no address now shows why.
func (p *Page) HandleRefundAddress() http.Handler {
	return p.checkedForm("/refund/", func(w http.ResponseWriter, r *http.Request) {
		token := r.PathValue("token")
		address := r.PostFormValue("address")
		_, err := p.svc.GiveRefundAddress(r.Context(), token, address)
		if err == nil {
			http.Redirect(w, r, refundPath(token), http.StatusSeeOther)
			return
		}
		code := checkout.ErrorCode(err)
		if code != checkout.EValidationFailed && code != checkout.ERefundLinkClosed {
			p.refundFail(w, r, err)
			return
		}
		link, lerr := p.svc.RefundByLink(r.Context(), token)
		if lerr != nil {
			p.refundFail(w, r, lerr)
			return
		}
		v := p.refundView(w, r, link)
		status := http.StatusBadRequest
		if code == checkout.ERefundLinkClosed {
			status, v.Notice = http.StatusConflict, checkout.ErrorMessage(err)
		} else {
			v.Typed, v.Error = address, checkout.ErrorMessage(err)
		}
		p.renderRefund(w, r, status, v)
	})
}

// HandleRefundNotFound serves the refund page's 404 for any other path
// under /refund/.
func (p *Page) HandleRefundNotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.refundFail(w, r, checkout.Errorf(checkout.ENotFound, "No such refund link."))
	})
}

// refundView is link as its page shows it now.
func (p *Page) refundView(w http.ResponseWriter, r *http.Request, link *service.RefundLink) *refundView {
	ref, c := link.Refund, link.Refund.Crypto
	now := p.svc.Now()
	v := &refundView{
		Test: !ref.Mode.Live(), Merchant: link.Merchant, Coin: link.Coin,
		Amount:        checkout.FormatAmount(ref.Amount, ref.Currency),
		AtPaymentRate: c.Rate == checkout.RateOfPayment,
		Expires:       time.UnixMilli(c.LinkExpiresAt).UTC().Format("2 January 2006, 15:04 UTC"),
		Address:       c.Address, TxHash: c.TxHash,
		Path: refundPath(ref.LinkToken),
	}
	switch {
	case ref.Status == checkout.RefundSucceeded:
		v.Stage = "succeeded"
	case ref.Status != checkout.RefundPending:
		v.Stage, v.Closed = "closed", "This refund was canceled, and nothing was sent. Ask "+link.Merchant.Name+" if you expected it."
	case c.Address == "" && ref.RefundLinkBlock(now) != nil:
		v.Stage, v.Closed = "closed", "This link has expired, and nothing was sent. Ask "+link.Merchant.Name+" for another."
	default:
		v.Stage = c.Stage()
	}
	if c.AmountBase != "" {
		v.AmountCoin = checkout.FormatCoin(c.AmountBase, link.Coin)
	} else if v.AtPaymentRate {
		if base, err := checkout.PriceAtPayment(link.Payment, ref.Amount); err == nil {
			v.AmountCoin = checkout.FormatCoin(base.String(), link.Coin)
		}
	}
	if v.Stage == checkout.StageAwaitingAddress {
		v.CSRF = csrfToken(w, r, "/refund/")
	}
	return v
}

// refundFail answers err on the refund page: the page's own 404 for a
// link of no refund, else as the payment page does.
func (p *Page) refundFail(w http.ResponseWriter, r *http.Request, err error) {
	if checkout.IsCode(err, checkout.ENotFound) {
		setSecurityHeaders(w, "")
		p.execute(w, r, http.StatusNotFound, "error", errorView{Status: http.StatusNotFound, NotFound: true, What: "refund"})
		return
	}
	p.fail(w, r, err)
}

func (p *Page) renderRefund(w http.ResponseWriter, r *http.Request, status int, v *refundView) {
	setSecurityHeaders(w, "")
	p.execute(w, r, status, "refund", v)
}
