package dashboard

import (
	"math/big"
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The Payments page: the store's payments in the page's mode, newest
// first, every attempt of every session, and above all those to refund: a
// failed payment whose money was collected all the same (late or second
// crypto, an underpayment that was never made whole, a capture after the
// payment failed), each refunded from its own page (refunds.go; crypto,
// which checkoutd cannot send, through a link for the buyer's address and
// the merchant's wallet, refunds_crypto.go), the page showing what arrived
// (the coin, the address, the transactions).

const sectionPayments = "payments"

// showToRefund is the Show filter's value for the payments to refund; its
// other values are the statuses.
const showToRefund = "to_refund"

type paymentsView struct {
	Layout
	Show     string // the filter: "", showToRefund or a status
	Statuses []checkout.PaymentStatus
	Errors   map[string]string
	Rows     []paymentRow
	Pager    pager
	// RefundDue counts the payments to refund, up to
	// service.MaxRefundDueCount; RefundDueMore says there may be more.
	RefundDue     int
	RefundDueMore bool
}

// paymentRow is a payment as the pages show it: amounts formatted, the
// failure explained, a crypto payment's coins.
type paymentRow struct {
	*checkout.Payment
	Amount, Fee, Net, Refunded string
	// Failure explains FailureCode, "" unless the payment failed.
	Failure string
	// StatusHint says what a disputed or dispute_lost status means, ""
	// for the other statuses; Disputed is what a dispute holds (or took)
	// of the payment, its amount and fee, "" when none.
	StatusHint, Disputed string
	Crypto               *cryptoRow
}

// cryptoRow is what a crypto payment was sent with, in coins.
type cryptoRow struct {
	Coin    string // its code: "LTC"
	Address string
	// Quoted is the amount the session was quoted.
	Quoted string
	// Txs are the payment's transactions, the first then its top-ups,
	// each with what it paid (coins).
	Txs []cryptoTx
	// Received and Required are a live payment's, "" in test mode (which
	// pays the quote exactly); Excess what it paid beyond Required, and
	// Shortfall what it lacks, "" when none.
	Received, Required, Excess, Shortfall string
	// ShortUntil is when an underpayment fails unless the rest arrives;
	// DroppedAt since when its transaction has left the network. Zero
	// when not.
	ShortUntil, DroppedAt time.Time
	Confirmations         int
	BroadcastAt           time.Time
}

type cryptoTx struct{ Hash, Amount string }

func newPaymentRow(p *checkout.Payment) paymentRow {
	r := paymentRow{Payment: p, Amount: checkout.FormatAmount(p.Amount, p.Currency), Fee: checkout.FormatAmount(p.Fee, p.Currency),
		Net: checkout.FormatAmount(p.Net(), p.Currency), Refunded: checkout.FormatAmount(p.AmountRefunded, p.Currency)}
	if p.FailureCode != nil {
		r.Failure = checkout.FailureMessage(*p.FailureCode)
	}
	switch p.Status {
	case checkout.PaymentDisputed:
		r.StatusHint = "A dispute is open: its amount and fee are held until the card network decides."
	case checkout.PaymentDisputeLost:
		r.StatusHint = "The dispute was lost: its amount and fee were taken from the net."
	}
	if p.AmountDisputed > 0 || p.DisputeFee > 0 {
		r.Disputed = checkout.FormatAmount(p.AmountDisputed, p.Currency) + " and the " + checkout.FormatAmount(p.DisputeFee, p.Currency) + " fee"
	}
	if p.Crypto != nil {
		r.Crypto = newCryptoRow(p.Crypto)
	}
	return r
}

func newCryptoRow(d *checkout.CryptoDetails) *cryptoRow {
	c, _ := checkout.CoinByCode(d.Coin)
	coins := func(base string) string {
		if base == "" {
			return ""
		}
		return checkout.FormatCoin(base, c) + " " + d.Coin
	}
	bigCoins := func(n *big.Int) string {
		if n == nil {
			return ""
		}
		return coins(n.String())
	}
	r := &cryptoRow{Coin: d.Coin, Address: d.Address, Quoted: coins(d.AmountBase), Received: coins(d.ReceivedBase),
		Required: coins(d.RequiredBase), Excess: bigCoins(d.Excess()), Shortfall: bigCoins(d.Shortfall()),
		Confirmations: d.Confirmations, ShortUntil: unixMilli(d.ShortUntil), DroppedAt: unixMilli(d.DroppedAt),
		BroadcastAt: unixMilli(d.BroadcastAt)}
	for _, t := range d.Amounts() {
		r.Txs = append(r.Txs, cryptoTx{Hash: t.TxHash, Amount: coins(t.AmountBase)})
	}
	return r
}

// unixMilli is a time of the payment's details; zero for 0 (none).
func unixMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// HandlePayments serves GET .../payments.
func (d *Dashboard) HandlePayments() http.Handler {
	return d.storePage(checkout.ActionViewPayments, func(w http.ResponseWriter, r *http.Request, s *scope) {
		q := r.URL.Query()
		v := paymentsView{Layout: s.layout("Payments", sectionPayments), Show: q.Get("show"), Statuses: checkout.PaymentStatuses,
			Errors: map[string]string{}}
		f := service.PaymentFilter{Status: checkout.PaymentStatus(v.Show)}
		if v.Show == showToRefund {
			f = service.PaymentFilter{ToRefund: true}
		}
		status := http.StatusOK
		page, err := d.svc.ListPayments(r.Context(), s.checkoutScope(), f, q.Get("cursor"), 0)
		if errs, ok := fieldErrors(err); ok {
			// The status is the Show filter's.
			if msg, ok := errs["status"]; ok {
				errs["show"] = msg
				delete(errs, "status")
			}
			v.Errors, status = errs, http.StatusBadRequest
		} else if err != nil {
			d.fail(w, r, err)
			return
		}
		for _, p := range page.Items {
			v.Rows = append(v.Rows, newPaymentRow(p))
		}
		v.Pager = pagerFor(r, page.Next)
		n, err := d.svc.RefundDueCount(r.Context(), s.checkoutScope())
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v.RefundDue, v.RefundDueMore = n, n >= service.MaxRefundDueCount
		d.render(w, r, status, "payments", v)
	})
}

// shortHash shortens a transaction hash for a list, where the whole of it
// would crowd out the rest: its first and last 8 characters, enough to
// tell it in a wallet or an explorer; the payment's page has it whole.
func shortHash(h string) string {
	if len(h) <= 20 {
		return h
	}
	return h[:8] + "…" + h[len(h)-8:]
}

// paymentClass is the badge of a payment's status.
func paymentClass(s checkout.PaymentStatus) string {
	switch s {
	case checkout.PaymentSucceeded:
		return "good"
	case checkout.PaymentFailed, checkout.PaymentDisputed, checkout.PaymentDisputeLost:
		return "bad"
	case checkout.PaymentProcessing:
		return "warn"
	}
	return ""
}
