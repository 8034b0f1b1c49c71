package dashboard

import (
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Crypto refunds on a payment's page (checkout/refund_crypto.go): checkoutd
// holds no private key, so a crypto refund is made pending with a link for
// the buyer's address, and the merchant pays it from their wallet. Each
// crypto refund's row says where it stands and what to do: while it awaits
// the buyer's address, the link to send them (until when it takes one);
// while it awaits the payout, the exact coins to send and where; while its
// payout confirms, the transaction; once it succeeded, what was sent where.
//
// Cancel refund (service.CancelRefund) is offered until the payout is
// seen; Simulate payout (service.SimulateRefundPayout) in test mode while
// the payout is awaited, standing in for the merchant's wallet. Both are
// form posts that go back to the payment's page, which tells what they
// did; a refund of another store or mode is the 404 page, and one that
// cannot be canceled or paid out now is the payment's page saying why.

// cryptoRefundRow is how a crypto refund is paid, as the payment's page
// shows it.
type cryptoRefundRow struct {
	// Stage is where a pending refund stands (checkout.Stage*), or
	// checkout.StageDone once it succeeded or was canceled.
	Stage string
	Coin  string
	Rate  string // the rate's label
	// LinkURL is the buyer's link, taking an address until LinkExpiresAt.
	LinkURL       string
	LinkExpiresAt time.Time
	// Address, CoinAmount ("0.00012", as a wallet takes it), Coins
	// ("0.00012 BTC") and TxHash are the payout's, "" until the buyer
	// gives the address and the payout is seen.
	Address, CoinAmount, Coins, TxHash string
	// Confirmations is how many the payout needs.
	Confirmations int
	// Expired is whether a canceled refund was canceled by its link's
	// expiry, not by the merchant.
	Expired bool
	// Test is whether the refund is of test mode, whose payout is
	// simulated.
	Test bool
}

func newCryptoRefundRow(r *checkout.Refund, checkoutBaseURL string) *cryptoRefundRow {
	v := r.View(checkoutBaseURL).Crypto
	c := &cryptoRefundRow{Stage: v.Stage, Coin: v.Coin, Rate: rateLabel(v.Rate), LinkURL: v.LinkURL,
		LinkExpiresAt: time.UnixMilli(r.Crypto.LinkExpiresAt), Confirmations: v.Confirmations, Test: !r.Mode.Live()}
	if v.Address != nil {
		c.Address = *v.Address
		c.Coins = *v.AmountBase + " base units of " + v.Coin // a coin this server does not know
		if v.AmountCoin != nil {
			c.CoinAmount = *v.AmountCoin
			c.Coins = c.CoinAmount + " " + v.Coin
		}
	}
	if v.TxHash != nil {
		c.TxHash = *v.TxHash
	}
	c.Expired = r.Status == checkout.RefundCanceled && c.Address == "" && !r.UpdatedAt.Before(c.LinkExpiresAt)
	return c
}

// StageText says in words where the refund stands.
func (c *cryptoRefundRow) StageText() string {
	switch c.Stage {
	case checkout.StageAwaitingAddress:
		return "Waiting for the buyer's address"
	case checkout.StageAwaitingPayout:
		return "Waiting for your payout"
	case checkout.StageConfirming:
		return "Payout seen, confirming"
	}
	return ""
}

// Cancelable is whether the refund may still be canceled: its payout not
// seen.
func (c *cryptoRefundRow) Cancelable() bool {
	return c.Stage == checkout.StageAwaitingAddress || c.Stage == checkout.StageAwaitingPayout
}

// Simulable is whether the page offers to simulate the payout: a test-mode
// refund awaiting it.
func (c *cryptoRefundRow) Simulable() bool { return c.Test && c.Stage == checkout.StageAwaitingPayout }

// HandleCancelRefund serves POST .../refunds/{id}/cancel: cancels a crypto
// refund whose payout has not been seen, through service.CancelRefund, and
// goes to its payment's page, which says it was canceled. One canceled
// already (a second click) goes there too.
func (d *Dashboard) HandleCancelRefund() http.Handler {
	return d.storeAction(checkout.ActionRefund, func(w http.ResponseWriter, r *http.Request, s *scope) {
		id := r.PathValue("id")
		out, err := d.svc.CancelRefund(r.Context(), s.checkoutScope(), id)
		if err != nil {
			d.cryptoRefundRefused(w, r, s, id, "Nothing was canceled", err)
			return
		}
		http.Redirect(w, r, s.path("payments/"+out.Refund.PaymentID)+"?refund="+out.Refund.ID+"#refunds", http.StatusSeeOther)
	})
}

// HandleSimulateRefundPayout serves POST .../refunds/{id}/simulate-payout:
// in test mode, pays a crypto refund awaiting its payout as the merchant's
// wallet would (service.SimulateRefundPayout), and goes to its payment's
// page, where the payout confirms on the coin's timescale. A refund whose
// payout was simulated already (a second click) goes there too.
func (d *Dashboard) HandleSimulateRefundPayout() http.Handler {
	return d.storeAction(checkout.ActionRefund, func(w http.ResponseWriter, r *http.Request, s *scope) {
		id := r.PathValue("id")
		rf, err := d.svc.SimulateRefundPayout(r.Context(), s.checkoutScope(), id)
		if checkout.IsCode(err, checkout.ERefundLinkClosed) && s.mode == checkout.ModeTest {
			// In test mode, only the simulation pays a refund out: one
			// paid out already was paid by an earlier click.
			if cur, gerr := d.svc.RefundIn(r.Context(), s.checkoutScope(), id); gerr == nil && cur.Crypto != nil && cur.Crypto.TxHash != "" {
				rf, err = cur, nil
			}
		}
		if err != nil {
			d.cryptoRefundRefused(w, r, s, id, "No payout was simulated", err)
			return
		}
		http.Redirect(w, r, s.path("payments/"+rf.PaymentID)+"?refund="+rf.ID+"#refunds", http.StatusSeeOther)
	})
}

// cryptoRefundRefused answers a Cancel refund or Simulate payout that did
// nothing: a refund not of the scope is the 404 page; one that cannot be
// canceled or paid out now is its payment's page (409), saying what
// nothing was done and where the refund stands. Any other error is a
// failure.
func (d *Dashboard) cryptoRefundRefused(w http.ResponseWriter, r *http.Request, s *scope, id, nothing string, err error) {
	switch checkout.ErrorCode(err) {
	case checkout.ERefundNotCancelable, checkout.ERefundLinkClosed, checkout.EPaymentNotRefundable:
	default:
		d.failOrNotFound(w, r, s, err)
		return
	}
	rf, gerr := d.svc.RefundIn(r.Context(), s.checkoutScope(), id)
	if gerr != nil {
		d.failOrNotFound(w, r, s, gerr)
		return
	}
	p, gerr := d.svc.PaymentIn(r.Context(), s.checkoutScope(), rf.PaymentID)
	if gerr != nil {
		d.failOrNotFound(w, r, s, gerr)
		return
	}
	// refund_link_closed is the buyer's page's code, which the API's
	// status table leaves out: the dashboard says 409 Conflict itself.
	d.renderPayment(w, r, s, http.StatusConflict, p, paymentState{refundRefusal: nothing + ": " + refundStandsMessage(rf)})
}

// refundStandsMessage says where refund r stands, for a Cancel refund or
// a Simulate payout it cannot take.
func refundStandsMessage(r *checkout.Refund) string {
	switch {
	case r.Crypto == nil:
		return "refund " + r.ID + " is not a crypto refund."
	case r.Status == checkout.RefundSucceeded:
		return "refund " + r.ID + " succeeded already: its coins were sent to the buyer."
	case r.Status == checkout.RefundCanceled:
		return "refund " + r.ID + " was canceled already."
	case r.Status != checkout.RefundPending:
		return "refund " + r.ID + " is " + string(r.Status) + "."
	case r.Crypto.Stage() == checkout.StageAwaitingAddress:
		return "refund " + r.ID + " is waiting for the buyer's address: there is nothing to pay yet."
	case r.Crypto.Stage() == checkout.StageConfirming:
		return "the payout of refund " + r.ID + " was seen already (transaction " + r.Crypto.TxHash + "): the coins are on their way to the buyer."
	case r.Mode.Live():
		return "refund " + r.ID + " is of live mode: pay it from your wallet."
	}
	return "refund " + r.ID + " is waiting for your payout."
}
