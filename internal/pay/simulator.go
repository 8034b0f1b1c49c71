package pay

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Simulators returns the test-mode processors: test cards, a simulated
// crypto network and a simulated skins platform.
func Simulators() Processors {
	return Processors{Card: NewTestCards(), Crypto: TestNetwork{}, Skins: NewTestSkins()}
}

// testCardOutcomes are DESIGN.md section 7's test cards.
var testCardOutcomes = map[string]CardResult{
	"4242424242424242": {Approved: true},
	"5555555555554444": {Approved: true},
	"4000000000000002": {FailureCode: checkout.FailCardDeclined},
	"4000000000009995": {FailureCode: checkout.FailInsufficientFunds},
	"4000000000000069": {FailureCode: checkout.FailExpiredCard},
	"4000000000000127": {FailureCode: checkout.FailIncorrectCVC},
	"4000000000000119": {FailureCode: checkout.FailProcessingError},
	"4000000000000259": {Approved: true, Dispute: true},
	"4000000000002685": {Approved: true, Dispute: true, DisputePlan: &checkout.DisputePlan{Reason: checkout.DisputeProductNotReceived, Status: checkout.DisputeNeedsResponse}},
	"4000000000001976": {Approved: true, Dispute: true, DisputePlan: &checkout.DisputePlan{Reason: checkout.DisputeGeneral, Status: checkout.DisputeUnderReview}},
	"4000000000005126": {Approved: true}, // its refunds fail (TestRefundFailsLast4)
}

// TestRefundFailsLast4 ends the test card whose charges succeed and whose
// refunds fail: 4000 0000 0000 5126, as in Stripe's test mode.
const TestRefundFailsLast4 = "5126"

// TestCards is the test-mode card processor: the outcome is the test card's,
// and every other number is declined with test_mode_live_card. Nothing is
// charged. It remembers its charges so that Lookup answers for them, as a
// real processor would.
type TestCards struct {
	mu      sync.Mutex
	charges map[string]CardResult
	refunds map[string]RefundResult
}

// NewTestCards returns a test card processor.
func NewTestCards() *TestCards {
	return &TestCards{charges: map[string]CardResult{}, refunds: map[string]RefundResult{}}
}

// Charge returns the test card's outcome.
func (t *TestCards) Charge(ctx context.Context, c CardCharge) (CardResult, error) {
	res, ok := testCardOutcomes[c.Card.Number]
	if !ok {
		res = CardResult{FailureCode: checkout.FailTestModeLiveCard}
	}
	res.Brand = CardBrand(c.Card.Number)
	res.Country = "US"
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := t.charges[c.PaymentID]; ok {
		return prev, nil // the same charge again
	}
	t.charges[c.PaymentID] = res
	return res, nil
}

// Lookup returns a charge this processor made.
func (t *TestCards) Lookup(ctx context.Context, paymentID string) (CardResult, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	res, ok := t.charges[paymentID]
	return res, ok, nil
}

// Refund gives a charge's money back to the test card: at once, except
// that the card ending TestRefundFailsLast4 is closed and its refunds fail
// with expired_or_canceled_card. A refund asked again with its id answers
// as it did the first time.
func (t *TestCards) Refund(ctx context.Context, r RefundRequest) (RefundResult, error) {
	return remember(&t.mu, &t.refunds, r.RefundID, func() RefundResult {
		if r.Payment.CardLast4 != nil && *r.Payment.CardLast4 == TestRefundFailsLast4 {
			return RefundResult{FailureCode: checkout.RefundFailExpiredOrCanceledCard}
		}
		return RefundResult{Succeeded: true}
	}), nil
}

// remember returns what results holds for id, or makes it with make and
// keeps it: a simulator's answer to a request asked again.
func remember(mu *sync.Mutex, results *map[string]RefundResult, id string, make func() RefundResult) RefundResult {
	mu.Lock()
	defer mu.Unlock()
	if res, ok := (*results)[id]; ok {
		return res
	}
	if *results == nil {
		*results = map[string]RefundResult{}
	}
	res := make()
	(*results)[id] = res
	return res
}

// TestPrices are the simulated network's fixed prices of one coin, in US
// dollars. Test mode takes every currency at par with the dollar: the
// amounts are for trying the flow, not for accounting.
var TestPrices = map[string]int64{"BTC": 60_000, "LTC": 80, "ETH": 3_000, "SOL": 150}

// TestNetwork is the simulated crypto network of test mode. Addresses are
// derived from the session and coin, on the coins' test networks (tb1…,
// tltc1…), so that no real wallet can pay them; confirmations follow the
// service's clock at each coin's block time.
type TestNetwork struct{}

// Quote returns the session's test address and the amount at TestPrices.
func (TestNetwork) Quote(ctx context.Context, r QuoteRequest) (Quote, error) {
	dollars, ok := TestPrices[r.Coin.Code]
	if !ok {
		return Quote{}, fmt.Errorf("no test price for %s", r.Coin.Code)
	}
	price := dollars * pow10i(checkout.CurrencyExponent(r.Currency))
	return Quote{
		Address: testAddress(r.SessionID, r.Coin.Code),
		Amount:  checkout.CoinAmount(r.Amount, r.Coin, price),
	}, nil
}

// Confirmations counts blocks since the broadcast at the coin's block time.
func (TestNetwork) Confirmations(ctx context.Context, p *checkout.Payment, now time.Time) (int, error) {
	if p.Crypto == nil {
		return 0, fmt.Errorf("payment %s is not a crypto payment", p.ID)
	}
	c, ok := checkout.CoinByCode(p.Crypto.Coin)
	if !ok {
		return 0, fmt.Errorf("payment %s: unknown coin %s", p.ID, p.Crypto.Coin)
	}
	return c.ConfirmationsAt(time.UnixMilli(p.Crypto.BroadcastAt), now), nil
}

// TestTxHash returns the hash of the simulated transaction paying a quote.
func TestTxHash(q *checkout.CryptoQuote) string {
	sum := derive("tx", q.SessionID, q.Coin, q.Address)
	if q.Coin == "ETH" {
		return "0x" + hex.EncodeToString(sum)
	}
	return hex.EncodeToString(sum)
}

const bech32Chars = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
const base58Chars = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

func testAddress(sessionID, coin string) string {
	sum := derive("address", sessionID, coin)
	switch coin {
	case "BTC":
		return "tb1q" + encodeWith(sum, bech32Chars, 38)
	case "LTC":
		return "tltc1q" + encodeWith(sum, bech32Chars, 38)
	case "ETH":
		return "0x" + hex.EncodeToString(sum[:20])
	default: // SOL: 32 bytes in base58
		return encodeWith(sum, base58Chars, 44)
	}
}

// derive is an HMAC of the parts, a stable pseudo-random 32 bytes.
func derive(parts ...string) []byte {
	m := hmac.New(sha256.New, []byte("checkoutd test network"))
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// encodeWith writes n characters of alphabet drawn from b as one big number.
func encodeWith(b []byte, alphabet string, n int) string {
	x := new(big.Int).SetBytes(b)
	base := big.NewInt(int64(len(alphabet)))
	out := make([]byte, n)
	mod := new(big.Int)
	for i := range out {
		x.QuoRem(x, base, mod)
		out[i] = alphabet[mod.Int64()]
	}
	return string(out)
}

func pow10i(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// testSkins are the simulated inventory: names and values as thousandths of
// the session's total, so that some items alone fall short and some
// combinations cover it.
var testSkins = []struct {
	name     string
	permille int64
}{
	{"Sticker | Crown (Foil)", 50},
	{"Glock-18 | Water Elemental (Minimal Wear)", 120},
	{"USP-S | Kill Confirmed (Field-Tested)", 200},
	{"AWP | Asiimov (Battle-Scarred)", 300},
	{"AK-47 | Redline (Field-Tested)", 450},
	{"M4A4 | Howl (Well-Worn)", 600},
	{"Karambit | Doppler (Factory New)", 800},
	{"Butterfly Knife | Fade (Factory New)", 1100},
}

// TestSkins is the simulated skins platform of test mode: every buyer has
// the same eight items, valued against the session's total; trades are
// accepted at once and held for checkout.SkinsTradeHold, then stand. It
// remembers its trades by payment id, so that a retried trade is the same
// trade and Lookup answers for them, as a real platform would.
type TestSkins struct {
	mu      sync.Mutex
	trades  map[string]Trade
	refunds map[string]RefundResult
}

// NewTestSkins returns a simulated skins platform.
func NewTestSkins() *TestSkins {
	return &TestSkins{trades: map[string]Trade{}, refunds: map[string]RefundResult{}}
}

// Inventory returns the simulated items.
func (*TestSkins) Inventory(ctx context.Context, sessionID string, total int64, currency string) ([]checkout.SkinItem, error) {
	items := make([]checkout.SkinItem, len(testSkins))
	for i, s := range testSkins {
		id := derive("skin", sessionID, s.name)
		items[i] = checkout.SkinItem{
			ID:    "skin_" + hex.EncodeToString(id[:8]),
			Name:  s.name,
			Value: max((total*s.permille+999)/1000, 1),
		}
	}
	return items, nil
}

// Trade accepts a trade of the buyer's items worth at least the total. A
// trade with the payment id of an earlier one returns that one.
func (t *TestSkins) Trade(ctx context.Context, r TradeRequest) (Trade, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if prev, ok := t.trades[r.PaymentID]; ok && r.PaymentID != "" {
		return prev, nil // the same trade again
	}
	inv, err := t.Inventory(ctx, r.SessionID, r.Total, r.Currency)
	if err != nil {
		return Trade{}, err
	}
	if len(r.ItemIDs) == 0 {
		return Trade{}, checkout.Errorf(checkout.EValidationFailed, "Pick the items to trade.")
	}
	var tr Trade
	seen := map[string]bool{}
	for _, id := range r.ItemIDs {
		i := slices.IndexFunc(inv, func(it checkout.SkinItem) bool { return it.ID == id })
		if i < 0 || seen[id] {
			return Trade{}, checkout.Errorf(checkout.EValidationFailed, "The items picked are not in your inventory.")
		}
		seen[id] = true
		tr.Items = append(tr.Items, inv[i])
		tr.Value += inv[i].Value
	}
	if tr.Value < r.Total {
		return Trade{}, checkout.Errorf(checkout.EValidationFailed, "The items picked are worth %s; pick items worth at least %s.",
			checkout.FormatAmount(tr.Value, r.Currency), checkout.FormatAmount(r.Total, r.Currency))
	}
	id := derive("trade", r.SessionID, fmt.Sprint(r.ItemIDs), fmt.Sprint(r.Now.UnixNano()))
	tr.ID = fmt.Sprintf("trade_%d", binary.BigEndian.Uint64(id[:8])>>1)
	tr.HoldUntil = r.Now.Add(checkout.SkinsTradeHold)
	if r.PaymentID != "" {
		if t.trades == nil {
			t.trades = map[string]Trade{}
		}
		t.trades[r.PaymentID] = tr
	}
	return tr, nil
}

// Lookup returns the trade this platform made for a payment.
func (t *TestSkins) Lookup(ctx context.Context, paymentID string) (Trade, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tr, ok := t.trades[paymentID]
	return tr, ok, nil
}

// Refund sends a payment's items back to the buyer: the simulated buyer
// accepts at once. A payment of no trade, or a refund of less than the
// whole payment, is declined: items cannot go back in part.
func (t *TestSkins) Refund(ctx context.Context, r RefundRequest) (RefundResult, error) {
	return remember(&t.mu, &t.refunds, r.RefundID, func() RefundResult {
		if r.Payment.Skins == nil || r.Amount != r.Payment.Amount {
			return RefundResult{FailureCode: checkout.RefundFailDeclined}
		}
		return RefundResult{Succeeded: true}
	}), nil
}

// Settled reports that a simulated trade stood through its hold.
func (*TestSkins) Settled(ctx context.Context, p *checkout.Payment) (bool, error) { return true, nil }
