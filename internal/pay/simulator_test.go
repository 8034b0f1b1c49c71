package pay_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

var ctx = context.Background()

func charge(t *testing.T, p pay.CardProcessor, id, number string) pay.CardResult {
	t.Helper()
	res, err := p.Charge(ctx, pay.CardCharge{PaymentID: id, Amount: 3999, Currency: "USD", Card: pay.Card{Number: number}})
	if err != nil {
		t.Fatalf("Charge(%s) = %v", number, err)
	}
	return res
}

// TestTestCards checks DESIGN.md section 7's table of test cards.
func TestTestCards(t *testing.T) {
	tests := []struct {
		number  string
		want    pay.CardResult
		comment string
	}{
		{"4242424242424242", pay.CardResult{Approved: true, Brand: "visa", Country: "US"}, "succeeds (visa)"},
		{"5555555555554444", pay.CardResult{Approved: true, Brand: "mastercard", Country: "US"}, "succeeds (mastercard)"},
		{"4000000000000002", pay.CardResult{FailureCode: checkout.FailCardDeclined, Brand: "visa", Country: "US"}, "declined"},
		{"4000000000009995", pay.CardResult{FailureCode: checkout.FailInsufficientFunds, Brand: "visa", Country: "US"}, "insufficient funds"},
		{"4000000000000069", pay.CardResult{FailureCode: checkout.FailExpiredCard, Brand: "visa", Country: "US"}, "expired card"},
		{"4000000000000127", pay.CardResult{FailureCode: checkout.FailIncorrectCVC, Brand: "visa", Country: "US"}, "incorrect CVC"},
		{"4000000000000119", pay.CardResult{FailureCode: checkout.FailProcessingError, Brand: "visa", Country: "US"}, "processing error"},
		{"4000000000000259", pay.CardResult{Approved: true, Dispute: true, Brand: "visa", Country: "US"}, "succeeds, then disputed"},
		{"4111111111111111", pay.CardResult{FailureCode: checkout.FailTestModeLiveCard, Brand: "visa", Country: "US"}, "any other number"},
		{"378282246310005", pay.CardResult{FailureCode: checkout.FailTestModeLiveCard, Brand: "amex", Country: "US"}, "any other number"},
	}
	p := pay.NewTestCards()
	for _, tt := range tests {
		id := "pay_" + tt.number
		if got := charge(t, p, id, tt.number); got != tt.want {
			t.Errorf("%s (%s): Charge = %+v; want %+v", tt.number, tt.comment, got, tt.want)
		}
		got, found, err := p.Lookup(ctx, id)
		if err != nil || !found || got != tt.want {
			t.Errorf("%s: Lookup = %+v, %v, %v; want the charge's outcome", tt.number, got, found, err)
		}
	}
	if _, found, err := p.Lookup(ctx, "pay_never"); found || err != nil {
		t.Errorf("Lookup of a charge never made = found %v, %v; want not found", found, err)
	}
}

// TestTestCardsIdempotent: a charge made again with the same payment id is
// the same charge, whatever card it carries.
func TestTestCardsIdempotent(t *testing.T) {
	p := pay.NewTestCards()
	first := charge(t, p, "pay_1", "4000000000000002")
	if again := charge(t, p, "pay_1", "4242424242424242"); again != first {
		t.Errorf("second charge of pay_1 = %+v; want the first's %+v", again, first)
	}
}

func TestProcessors(t *testing.T) {
	sim := pay.Simulators()
	if got := sim.Methods(); !slices.Equal(got, []checkout.PaymentMethod{checkout.MethodCard, checkout.MethodCrypto, checkout.MethodSkins}) {
		t.Errorf("Simulators().Methods() = %v", got)
	}
	r := pay.Registry{Test: sim, Live: pay.Processors{Crypto: pay.TestNetwork{}}}
	if got := r.For(checkout.ModeLive).Methods(); !slices.Equal(got, []checkout.PaymentMethod{checkout.MethodCrypto}) {
		t.Errorf("live methods = %v; want crypto alone", got)
	}
	if r.For(checkout.ModeLive).Offers(checkout.MethodCard) || !r.For(checkout.ModeTest).Offers(checkout.MethodCard) {
		t.Errorf("Offers(card): live %v, test %v", r.For(checkout.ModeLive).Offers(checkout.MethodCard), r.For(checkout.ModeTest).Offers(checkout.MethodCard))
	}
	if (pay.Processors{}).Methods() != nil || (pay.Processors{}).Offers("cash") {
		t.Errorf("empty processors offer something")
	}
}

const session1 = "cs_" + "1111111111111111111111111111111111111111111111111111111111111111"
const session2 = "cs_" + "2222222222222222222222222222222222222222222222222222222222222222"

func quote(t *testing.T, code, sessionID string, amount int64, currency string) pay.Quote {
	t.Helper()
	c, _ := checkout.CoinByCode(code)
	q, err := pay.TestNetwork{}.Quote(ctx, pay.QuoteRequest{SessionID: sessionID, Mode: checkout.ModeTest, Coin: c, Amount: amount, Currency: currency})
	if err != nil {
		t.Fatalf("Quote(%s) = %v", code, err)
	}
	return q
}

func TestTestNetworkQuote(t *testing.T) {
	tests := []struct {
		coin     string
		amount   int64
		currency string
		want     string
		prefix   string
	}{
		{"BTC", 3999, "USD", "66650", "tb1q"},      // $39.99 at $60,000
		{"BTC", 1, "USD", "17", "tb1q"},            // 16.67 satoshi, rounded up
		{"LTC", 3999, "USD", "49987500", "tltc1q"}, // at $80
		{"ETH", 3999, "USD", "13330000000000000", "0x"},
		{"SOL", 3999, "USD", "266600000", ""},
		{"BTC", 1500, "JPY", "2500000", "tb1q"}, // at par: ¥1,500 at ¥60,000
		{"BTC", 1500, "KWD", "2500", "tb1q"},    // 1.500 KWD at 60,000.000 KWD
	}
	for _, tt := range tests {
		q := quote(t, tt.coin, session1, tt.amount, tt.currency)
		if q.Amount.String() != tt.want || !strings.HasPrefix(q.Address, tt.prefix) {
			t.Errorf("Quote(%s, %d %s) = %s to %s; want %s to %s…", tt.coin, tt.amount, tt.currency, q.Amount, q.Address, tt.want, tt.prefix)
		}
	}
	// Addresses are the session's and the coin's, and stable.
	if a, b := quote(t, "BTC", session1, 3999, "USD").Address, quote(t, "BTC", session1, 5000, "USD").Address; a != b {
		t.Errorf("one session's BTC address changed: %s, %s", a, b)
	}
	if a, b := quote(t, "BTC", session1, 3999, "USD").Address, quote(t, "BTC", session2, 3999, "USD").Address; a == b {
		t.Errorf("two sessions share the address %s", a)
	}
	sol := quote(t, "SOL", session1, 3999, "USD").Address
	if len(sol) != 44 || strings.ContainsAny(sol, "0OIl") {
		t.Errorf("SOL address %q is not 44 characters of base58", sol)
	}
	if eth := quote(t, "ETH", session1, 3999, "USD").Address; len(eth) != 42 {
		t.Errorf("ETH address %q is not 0x and 40 hex", eth)
	}
	if _, err := (pay.TestNetwork{}).Quote(ctx, pay.QuoteRequest{Coin: checkout.Coin{Code: "DOGE"}, Amount: 100, Currency: "USD"}); err == nil {
		t.Errorf("Quote of a coin without a test price succeeded")
	}
}

// TestTestNetworkConfirmations moves the network's clock across each
// block of each coin: confirmations follow the service's time, never the
// wall clock.
func TestTestNetworkConfirmations(t *testing.T) {
	broadcast := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range checkout.Coins {
		p := &checkout.Payment{ID: "pay_1", Crypto: &checkout.CryptoDetails{Coin: c.Code, BroadcastAt: broadcast.UnixMilli()}}
		for k := 0; k <= c.Confirmations; k++ {
			at := broadcast.Add(time.Duration(k) * c.BlockTime)
			got, err := pay.TestNetwork{}.Confirmations(ctx, p, at)
			if err != nil || got != k {
				t.Errorf("%s at block %d: %d, %v; want %d", c.Code, k, got, err, k)
			}
			if k > 0 {
				if got, _ := (pay.TestNetwork{}).Confirmations(ctx, p, at.Add(-time.Millisecond)); got != k-1 {
					t.Errorf("%s just before block %d: %d; want %d", c.Code, k, got, k-1)
				}
			}
		}
	}
	if _, err := (pay.TestNetwork{}).Confirmations(ctx, &checkout.Payment{ID: "pay_card"}, broadcast); err == nil {
		t.Errorf("Confirmations of a card payment succeeded")
	}
	if _, err := (pay.TestNetwork{}).Confirmations(ctx, &checkout.Payment{ID: "pay_x", Crypto: &checkout.CryptoDetails{Coin: "DOGE"}}, broadcast); err == nil {
		t.Errorf("Confirmations of an unknown coin succeeded")
	}
}

func TestTestTxHash(t *testing.T) {
	btc := pay.TestTxHash(&checkout.CryptoQuote{SessionID: session1, Coin: "BTC", Address: "tb1qx"})
	eth := pay.TestTxHash(&checkout.CryptoQuote{SessionID: session1, Coin: "ETH", Address: "0xabc"})
	if len(btc) != 64 || !strings.HasPrefix(eth, "0x") || len(eth) != 66 {
		t.Errorf("TestTxHash: BTC %q, ETH %q", btc, eth)
	}
	if again := pay.TestTxHash(&checkout.CryptoQuote{SessionID: session1, Coin: "BTC", Address: "tb1qx"}); again != btc {
		t.Errorf("TestTxHash is not stable: %s, %s", btc, again)
	}
}

func TestTestSkinsInventory(t *testing.T) {
	inv, err := pay.NewTestSkins().Inventory(ctx, session1, 3999, "USD")
	if err != nil {
		t.Fatal(err)
	}
	// Thousandths of the total, rounded up.
	want := []int64{200, 480, 800, 1200, 1800, 2400, 3200, 4399}
	var got []int64
	ids := map[string]bool{}
	for _, it := range inv {
		got = append(got, it.Value)
		ids[it.ID] = true
		if !strings.HasPrefix(it.ID, "skin_") || it.Name == "" {
			t.Errorf("item %+v", it)
		}
	}
	if !slices.Equal(got, want) || len(ids) != len(inv) {
		t.Errorf("values = %v, %d distinct ids; want %v and 8", got, len(ids), want)
	}
	small, _ := pay.NewTestSkins().Inventory(ctx, session1, 1, "USD")
	for _, it := range small {
		if it.Value < 1 {
			t.Errorf("item worth %d of a total of 1; want at least 1", it.Value)
		}
	}
	other, _ := pay.NewTestSkins().Inventory(ctx, session2, 3999, "USD")
	if other[0].ID == inv[0].ID {
		t.Errorf("two sessions' inventories share item ids")
	}
}

func TestTestSkinsTrade(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	inv, _ := pay.NewTestSkins().Inventory(ctx, session1, 3999, "USD")
	trade := func(ids ...string) (pay.Trade, error) {
		return pay.NewTestSkins().Trade(ctx, pay.TradeRequest{SessionID: session1, ItemIDs: ids, Total: 3999, Currency: "USD", Now: now})
	}
	for name, ids := range map[string][]string{
		"nothing":           nil,
		"not the buyer's":   {"skin_0000000000000000"},
		"another session's": {"skin_x"},
		"one item twice":    {inv[6].ID, inv[6].ID},
	} {
		if _, err := trade(ids...); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("trade of %s = %v; want validation_failed", name, err)
		}
	}
	// 30% + 45% + 20% = 95% of the total: refused with both amounts.
	_, err := trade(inv[3].ID, inv[4].ID, inv[2].ID)
	if !checkout.IsCode(err, checkout.EValidationFailed) || !strings.Contains(checkout.ErrorMessage(err), "$38.00") || !strings.Contains(checkout.ErrorMessage(err), "$39.99") {
		t.Errorf("short trade = %v; want validation_failed naming $38.00 and $39.99", err)
	}
	// 110%: accepted, held for 7 days.
	tr, err := trade(inv[7].ID)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Value != 4399 || len(tr.Items) != 1 || !tr.HoldUntil.Equal(now.Add(checkout.SkinsTradeHold)) || !strings.HasPrefix(tr.ID, "trade_") {
		t.Errorf("trade = %+v; want the item worth 4399 held until %v", tr, now.Add(checkout.SkinsTradeHold))
	}
	if checkout.SkinsTradeHold != 7*24*time.Hour {
		t.Errorf("SkinsTradeHold = %v; want 7 days", checkout.SkinsTradeHold)
	}
	if ok, err := pay.NewTestSkins().Settled(ctx, &checkout.Payment{}); !ok || err != nil {
		t.Errorf("Settled = %v, %v; want a simulated trade to stand", ok, err)
	}
}

// TestTestSkinsTradeIdempotent: a trade retried with the same payment id
// (the answer was lost on the way back) is the same trade, never a second
// one, and Lookup finds it; a payment id never traded is not found.
func TestTestSkinsTradeIdempotent(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	skins := pay.NewTestSkins()
	inv, _ := skins.Inventory(ctx, session1, 3999, "USD")
	req := pay.TradeRequest{PaymentID: "pay_1", SessionID: session1, ItemIDs: []string{inv[7].ID}, Total: 3999, Currency: "USD", Now: now}
	first, err := skins.Trade(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Now = now.Add(time.Minute)
	req.ItemIDs = []string{inv[6].ID, inv[5].ID}
	again, err := skins.Trade(ctx, req)
	if err != nil || again.ID != first.ID || !again.HoldUntil.Equal(first.HoldUntil) || len(again.Items) != 1 {
		t.Errorf("retried trade = %+v, %v; want the first %+v", again, err, first)
	}
	got, found, err := skins.Lookup(ctx, "pay_1")
	if err != nil || !found || got.ID != first.ID {
		t.Errorf("Lookup(pay_1) = %+v, %v, %v; want the trade", got, found, err)
	}
	if _, found, err := skins.Lookup(ctx, "pay_2"); found || err != nil {
		t.Errorf("Lookup(pay_2) = %v, %v; want not found", found, err)
	}
	// A refused trade is not recorded: the key may trade later.
	req.PaymentID, req.ItemIDs = "pay_3", []string{inv[0].ID}
	if _, err := skins.Trade(ctx, req); !pay.Refused(err) {
		t.Errorf("short trade = %v; want a refusal", err)
	}
	if _, found, _ := skins.Lookup(ctx, "pay_3"); found {
		t.Errorf("a refused trade was recorded")
	}
	if pay.Refused(context.DeadlineExceeded) || pay.Refused(nil) {
		t.Errorf("a time-out or no error counts as a refusal")
	}
}
