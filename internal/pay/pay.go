// Package pay holds the payment processors behind the hosted page: one
// interface per method (cards, crypto networks, skins trading platforms),
// and the test-mode simulators that ship with checkoutd.
//
// A live processor is added by implementing the method's interface against
// the provider's API and setting it in the live Processors that serve
// passes to the service (cmd/checkoutd/serve.go); docs/payments.md says
// how. Live mode never falls back to a simulator: a method without a live
// processor is not offered on live sessions.
package pay

import (
	"context"
	"math/big"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Processors are the processors of one mode. A nil one is a method the mode
// does not offer.
type Processors struct {
	Card   CardProcessor
	Crypto CryptoNetwork
	Skins  SkinsPlatform
}

// Methods lists the methods p offers, in the page's order.
func (p Processors) Methods() []checkout.PaymentMethod {
	var ms []checkout.PaymentMethod
	for _, m := range checkout.PaymentMethods {
		if p.Offers(m) {
			ms = append(ms, m)
		}
	}
	return ms
}

// Offers reports whether p has a processor for method m.
func (p Processors) Offers(m checkout.PaymentMethod) bool {
	switch m {
	case checkout.MethodCard:
		return p.Card != nil
	case checkout.MethodCrypto:
		return p.Crypto != nil
	case checkout.MethodSkins:
		return p.Skins != nil
	}
	return false
}

// Registry holds the processors of both modes.
type Registry struct {
	Test Processors
	Live Processors
}

// For returns the processors of mode.
func (r Registry) For(mode checkout.Mode) Processors {
	if mode.Live() {
		return r.Live
	}
	return r.Test
}

// Card is what a buyer typed into the card form. It lives only for the
// length of a charge: it is never stored, logged or put in an error.
type Card struct {
	Number   string // digits only
	ExpMonth int    // 1 to 12
	ExpYear  int    // four digits
	CVC      string
	Name     string
}

// Last4 returns the last four digits of the number.
func (c Card) Last4() string {
	if len(c.Number) < 4 {
		return c.Number
	}
	return c.Number[len(c.Number)-4:]
}

// String keeps a card out of logs even when one is printed by mistake.
func (c Card) String() string { return "card ending " + c.Last4() }

// GoString does the same for %#v.
func (c Card) GoString() string { return c.String() }

// CardCharge asks a card processor to collect a payment.
type CardCharge struct {
	// PaymentID identifies the charge to the processor, which must treat a
	// second charge with the same id as the same charge (idempotency).
	PaymentID           string
	Amount              int64
	Currency            string
	StatementDescriptor string
	Card                Card
}

// CardResult is a processor's answer to a charge.
type CardResult struct {
	Approved bool
	// FailureCode says why a charge was not approved: one of the
	// checkout.Fail* card codes.
	FailureCode string
	Brand       string // visa, mastercard, ...
	Country     string // ISO 3166-1 alpha-2 of the issuer, "" when unknown
	// Dispute is the simulator's: a dispute opens a moment after this
	// charge (the dispute test cards), as DisputePlan says
	// (checkout.DefaultDisputePlan when nil).
	Dispute     bool
	DisputePlan *checkout.DisputePlan
}

// RefundRequest asks a processor to give back part or all of a payment:
// a card processor to the card, a skins platform the items to the buyer.
type RefundRequest struct {
	// RefundID identifies the refund to the processor, which must treat a
	// second request with the same id as the same refund (idempotency): a
	// refund whose answer was lost is asked again, never made twice.
	RefundID string
	Payment  *checkout.Payment
	Amount   int64 // minor units of the payment's currency
}

// RefundResult is a processor's answer to a refund.
type RefundResult struct {
	Succeeded bool
	// FailureCode says why a refund failed: one of the
	// checkout.RefundFail* codes.
	FailureCode string
}

// Refunder gives back payments' money.
type Refunder interface {
	// Refund gives back r.Amount of r.Payment. An error means the outcome
	// is unknown (the processor could not be reached, or did not answer):
	// the refund stays pending, and the payments job asks again with the
	// same RefundID.
	Refund(ctx context.Context, r RefundRequest) (RefundResult, error)
}

// CardProcessor charges cards, and refunds the charges.
type CardProcessor interface {
	Refunder
	// Charge collects c. An error means the outcome is unknown (the
	// processor could not be reached, or did not answer): the payment stays
	// processing and is settled later through Lookup.
	Charge(ctx context.Context, c CardCharge) (CardResult, error)
	// Lookup returns the outcome of an earlier charge; found is false when
	// the processor never received it.
	Lookup(ctx context.Context, paymentID string) (res CardResult, found bool, err error)
}

// QuoteRequest asks a crypto network for an address and an amount.
type QuoteRequest struct {
	SessionID string
	Mode      checkout.Mode
	Coin      checkout.Coin
	Amount    int64 // minor units of Currency
	Currency  string
	// Address is the address a live quote pays to, derived by the service
	// from the store's key (a LiveCryptoNetwork watches it); "" in test
	// mode, where the network picks one.
	Address string
}

// Quote is where and how much a buyer pays in a coin.
type Quote struct {
	Address string
	Amount  *big.Int // base units of the coin
}

// CryptoNetwork quotes addresses and watches transactions.
type CryptoNetwork interface {
	Quote(ctx context.Context, r QuoteRequest) (Quote, error)
	// Confirmations returns how many confirmations p's transaction has at
	// now.
	Confirmations(ctx context.Context, p *checkout.Payment, now time.Time) (int, error)
}

// LiveCryptoNetwork is a crypto network on real chains (package
// livecrypto): addresses come from the stores' keys, payments from the
// nodes, which the service scans.
type LiveCryptoNetwork interface {
	CryptoNetwork
	// Offers reports whether the network takes coin (its node is
	// configured).
	Offers(coin string) bool
	// Network is the chain of coin's node (main, test or regtest), which a
	// store's key for the coin must be made for.
	Network(coin string) string
	// Depth is how many confirmations a payment in coin needs.
	Depth(coin string) int
	// Prepare readies coin for a quote; the service calls it before the
	// quote's database transaction (it may use the database itself).
	Prepare(ctx context.Context, coin string) error
	// Price returns amount minor units of currency in base units of coin
	// at the rate now, rounded up. The service prices a quote before its
	// database transaction: a rate source may take a while to answer.
	Price(ctx context.Context, coin checkout.Coin, amount int64, currency string) (*big.Int, error)
	// Gone says whether the node no longer has txid, nor expects to mine
	// it, and why: GoneDropped (replaced by a fee bump, or evicted),
	// GoneConflicted (the chain spent its coins elsewhere) or GoneMissing
	// (unknown to the node); "" while it is in the mempool or a block.
	Gone(ctx context.Context, coin, txid string) (string, error)
	// Status says how each coin's node stands, for /readyz and metrics.
	Status(ctx context.Context) []CoinStatus
	// Watch has coin's node watch address (again: it is idempotent), as
	// Quote does; for the quotes still open when a process starts.
	Watch(ctx context.Context, coin, address string) error
	// Scan returns the transactions that paid watched addresses since the
	// last committed scan (after a restart, since the first: recording is
	// idempotent), each output of each once at least. The caller calls
	// commit once it has recorded them all, and the next scan starts after
	// them; until then, the next scan reports them again.
	Scan(ctx context.Context) (rs []Received, commit func(context.Context) error, err error)
}

// Why a transaction is gone (LiveCryptoNetwork.Gone).
const (
	GoneDropped    = "dropped"
	GoneConflicted = "conflicted"
	GoneMissing    = "missing"
)

// CoinStatus is how a live coin's node stands.
type CoinStatus struct {
	Coin string
	// Err says why the node did not answer; "" when it did.
	Err string
	// Tip is the node's best block height, Best the best height it has
	// heard of from its peers (Best-Tip is how far behind it is), Syncing
	// whether it is still catching up.
	Tip, Best int64
	Syncing   bool
	// Scanned is the tip height of this process's last scan of the node,
	// and ScannedAt when it ran (zero before the first): Tip-Scanned is how
	// far the watcher is behind the node.
	Scanned   int64
	ScannedAt time.Time
}

// Received is a transaction output paying a watched address, as a scan
// found it: in the mempool or in a block.
type Received struct {
	Coin    string
	TxID    string
	Vout    int
	Address string
	Amount  *big.Int // base units
}

// TradeRequest asks a skins platform to trade a buyer's items.
type TradeRequest struct {
	// PaymentID identifies the trade to the platform, which must treat a
	// second trade with the same id as the same trade (idempotency): a
	// retry returns the first trade and never sends a second offer.
	PaymentID string
	SessionID string
	ItemIDs   []string
	Total     int64
	Currency  string
	Now       time.Time
}

// Trade is an accepted trade offer.
type Trade struct {
	ID        string
	Items     []checkout.SkinItem
	Value     int64
	HoldUntil time.Time
}

// SkinsPlatform trades game items, and gives them back when a payment is
// refunded (whole: Refund's amount is the payment's).
type SkinsPlatform interface {
	Refunder
	// Inventory lists the buyer's items, valued in minor units of currency.
	Inventory(ctx context.Context, sessionID string, total int64, currency string) ([]checkout.SkinItem, error)
	// Trade sends a trade offer for the items and returns it once the
	// buyer accepted it. A definite refusal, nothing traded, is a
	// validation_failed *checkout.Error (the items are not the buyer's or
	// are worth less than the total): see Refused. Any other error means
	// the outcome is unknown (a time-out, the network, a crash after the
	// platform accepted): the payment stays processing and is settled
	// later through Lookup.
	Trade(ctx context.Context, r TradeRequest) (Trade, error)
	// Lookup returns the trade made for a payment id; found is false when
	// the platform never made one.
	Lookup(ctx context.Context, paymentID string) (t Trade, found bool, err error)
	// Settled reports whether a trade held to its end stands (it was not
	// reversed during the hold).
	Settled(ctx context.Context, p *checkout.Payment) (bool, error)
}

// Refused reports whether an error of SkinsPlatform.Trade is a definite
// refusal, after which nothing was traded; any other error leaves the
// trade's outcome unknown.
func Refused(err error) bool {
	return checkout.IsCode(err, checkout.EValidationFailed)
}
