package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// paymentTests are the conformance tests of payments and crypto quotes.
var paymentTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Payment/RoundTrip", testPaymentRoundTrip},
	{"Payment/NotFound", testPaymentNotFound},
	{"Payment/Update", testPaymentUpdate},
	{"Payment/ListBySession", testPaymentListBySession},
	{"Payment/ListDue", testPaymentListDue},
	{"Payment/CountFailed", testPaymentCountFailed},
	{"Payment/OneCapturedPerSession", testPaymentOneCaptured},
	{"Payment/OnePerTransaction", testPaymentOnePerTransaction},
	{"CryptoQuote/FirstStands", testCryptoQuoteFirstStands},
}

// newPayment returns a processing payment of s created at created, not
// stored. Times are whole milliseconds, as the store keeps them.
func newPayment(s *checkout.Session, method checkout.PaymentMethod, created time.Time, f func(p *checkout.Payment)) *checkout.Payment {
	p := checkout.NewPayment(s, method, created)
	p.CreatedAt, p.UpdatedAt = time.UnixMilli(created.UnixMilli()), time.UnixMilli(created.UnixMilli())
	if f != nil {
		f(p)
	}
	return p
}

func insertPayments(t *testing.T, db *store.DB, ps ...*checkout.Payment) {
	t.Helper()
	inTx(t, db, func(tx checkout.Tx) error {
		for _, p := range ps {
			if err := tx.PaymentInsert(context.Background(), p); err != nil {
				return err
			}
		}
		return nil
	})
}

func cryptoPayment(s *checkout.Session, txHash string, created time.Time) *checkout.Payment {
	return newPayment(s, checkout.MethodCrypto, created, func(p *checkout.Payment) {
		p.Crypto = &checkout.CryptoDetails{Coin: "ETH", Address: "0xabc", AmountBase: "100000000000000000000000000",
			TxHash: txHash, Confirmations: 4, BroadcastAt: created.UnixMilli()}
	})
}

func testPaymentRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	due := time.UnixMilli(base.Add(2*time.Minute).UnixMilli() + 7)
	cardP := newPayment(s, checkout.MethodCard, base.Add(1234*time.Millisecond), func(p *checkout.Payment) {
		p.CardBrand, p.CardLast4, p.BuyerCountry, p.CustomerName = ptr("visa"), ptr("4242"), ptr("US"), ptr("Jo Ünïcode")
		p.ReceiptEmail, p.DueAt, p.DisputeOnSuccess = ptr("jo@example.com"), &due, true
	})
	crypto := cryptoPayment(s, "0xtx", base.Add(time.Second))
	skins := newPayment(s, checkout.MethodSkins, base.Add(2*time.Second), func(p *checkout.Payment) {
		p.Skins = &checkout.SkinsDetails{TradeID: "trade_1", Items: []checkout.SkinItem{{ID: "skin_1", Name: "AWP | Asiimov", Value: 1600}},
			Value: 1600, HoldUntil: base.Add(7 * 24 * time.Hour).Unix()}
	})
	acquired := newPayment(s, checkout.MethodCard, base.Add(3*time.Second), func(p *checkout.Payment) {
		p.Mode, p.Acquirer = checkout.ModeLive, &checkout.AcquirerRef{Name: "stripe", ID: "pi_1", ChargeID: "ch_1", Status: "succeeded"}
	})
	insertPayments(t, db, cardP, crypto, skins, acquired)
	for _, want := range []*checkout.Payment{cardP, crypto, skins, acquired} {
		got, err := db.PaymentGet(ctx, want.ID)
		if err != nil {
			t.Fatalf("PaymentGet(%s) = %v", want.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("PaymentGet(%s) =\n%+v\nwant\n%+v", want.ID, got, want)
		}
	}
}

func testPaymentNotFound(t *testing.T, db *store.DB) {
	ctx := context.Background()
	if _, err := db.PaymentGet(ctx, "pay_nope"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("PaymentGet of an unknown id = %v; want not_found", err)
	}
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if _, err := tx.PaymentGetForUpdate(ctx, "pay_nope"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("PaymentGetForUpdate of an unknown id = %v; want not_found", err)
		}
		if _, err := tx.PaymentGetByTxHash(ctx, "cs_nope", "0xnope"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("PaymentGetByTxHash of an unknown transaction = %v; want not_found", err)
		}
		p := &checkout.Payment{ID: "pay_nope", Status: checkout.PaymentFailed}
		if err := tx.PaymentUpdate(ctx, p); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("PaymentUpdate of an unknown payment = %v; want not_found", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CryptoQuoteGet(ctx, "cs_nope", "BTC"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("CryptoQuoteGet of an unknown session = %v; want not_found", err)
	}
}

func testPaymentUpdate(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	due := time.UnixMilli(base.Add(time.Minute).UnixMilli())
	p := newPayment(s, checkout.MethodCard, base, func(p *checkout.Payment) { p.DueAt = &due })
	insertPayments(t, db, p)
	inTx(t, db, func(tx checkout.Tx) error {
		got, err := tx.PaymentGetForUpdate(ctx, p.ID)
		if err != nil {
			return err
		}
		if err := got.Succeed(checkout.DefaultPricing, base.Add(3*time.Second)); err != nil {
			return err
		}
		got.UpdatedAt = time.UnixMilli(base.Add(3 * time.Second).UnixMilli())
		got.CardBrand, got.BuyerCountry, got.ReceiptEmail = ptr("mastercard"), ptr("DE"), ptr("new@example.com")
		got.Acquirer = &checkout.AcquirerRef{Name: "stripe", ID: "pi_2", ChargeID: "ch_2", Status: "succeeded"}
		p = got
		return tx.PaymentUpdate(ctx, got)
	})
	got, err := db.PaymentGet(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Errorf("after PaymentUpdate =\n%+v\nwant\n%+v", got, p)
	}
	if got.Status != checkout.PaymentSucceeded || got.Fee != 74 || got.DueAt != nil || got.SucceededAt == nil {
		t.Errorf("updated payment: %s, fee %d, due %v, succeeded %v", got.Status, got.Fee, got.DueAt, got.SucceededAt)
	}
}

func testPaymentListBySession(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	other := insertSession(t, db, newSession(m, nil))
	var want []string
	for i := range 5 {
		p := newPayment(s, checkout.MethodCard, base.Add(time.Duration(5-i)*time.Millisecond), nil)
		insertPayments(t, db, p)
		want = append([]string{p.ID}, want...) // inserted newest first
	}
	insertPayments(t, db, newPayment(other, checkout.MethodCard, base, nil))
	got, err := db.PaymentListBySession(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range got {
		ids = append(ids, p.ID)
	}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("PaymentListBySession = %v; want oldest first %v", ids, want)
	}
	if none, err := db.PaymentListBySession(ctx, "cs_nope"); err != nil || len(none) != 0 {
		t.Errorf("PaymentListBySession of a session without payments = %v, %v; want none", none, err)
	}
}

func testPaymentListDue(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	at := func(d time.Duration) *time.Time { t := time.UnixMilli(base.Add(d).UnixMilli()); return &t }
	later := newPayment(s, checkout.MethodCard, base, func(p *checkout.Payment) { p.DueAt = at(2 * time.Minute) })
	now := newPayment(s, checkout.MethodCard, base, func(p *checkout.Payment) { p.DueAt = at(time.Minute) })
	earliest := newPayment(s, checkout.MethodCard, base, func(p *checkout.Payment) { p.DueAt = at(time.Second) })
	notDue := newPayment(s, checkout.MethodCard, base, nil)
	insertPayments(t, db, later, now, earliest, notDue)
	ids := func(ps []*checkout.Payment) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	for _, tt := range []struct {
		now   time.Time
		limit int
		want  []string
	}{
		{base, 10, nil},
		{base.Add(time.Second), 10, []string{earliest.ID}},
		{base.Add(time.Minute - time.Millisecond), 10, []string{earliest.ID}},
		{base.Add(time.Minute), 10, []string{earliest.ID, now.ID}},
		{base.Add(time.Hour), 10, []string{earliest.ID, now.ID, later.ID}},
		{base.Add(time.Hour), 2, []string{earliest.ID, now.ID}},
	} {
		got, err := db.PaymentListDue(ctx, tt.now, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(got), tt.want) {
			t.Errorf("PaymentListDue(%v, %d) = %v; want %v", tt.now.Sub(base), tt.limit, ids(got), tt.want)
		}
	}
}

func testPaymentCountFailed(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	failed := func(method checkout.PaymentMethod) *checkout.Payment {
		return newPayment(s, method, base, func(p *checkout.Payment) { p.Fail(checkout.FailCardDeclined, base) })
	}
	insertPayments(t, db, failed(checkout.MethodCard), failed(checkout.MethodCard), failed(checkout.MethodSkins),
		newPayment(s, checkout.MethodCard, base, nil))
	inTx(t, db, func(tx checkout.Tx) error {
		for method, want := range map[checkout.PaymentMethod]int{checkout.MethodCard: 2, checkout.MethodSkins: 1, checkout.MethodCrypto: 0} {
			n, err := tx.PaymentCountFailed(ctx, s.ID, method)
			if err != nil || n != want {
				t.Errorf("PaymentCountFailed(%s) = %d, %v; want %d", method, n, err, want)
			}
		}
		return nil
	})
}

// testPaymentOneCaptured: the database itself refuses a second captured
// payment of a session, by insert or by update.
func testPaymentOneCaptured(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	succeeded := func() *checkout.Payment {
		return newPayment(s, checkout.MethodCard, base, func(p *checkout.Payment) { p.Succeed(checkout.DefaultPricing, base) })
	}
	first := succeeded()
	insertPayments(t, db, first)
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.PaymentInsert(ctx, succeeded()) }); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("inserting a second captured payment = %v; want conflict", err)
	}
	second := newPayment(s, checkout.MethodCard, base, nil)
	insertPayments(t, db, second)
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		second.Succeed(checkout.DefaultPricing, base)
		return tx.PaymentUpdate(ctx, second)
	})
	if !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("capturing a second payment by update = %v; want conflict", err)
	}
	// A disputed (still captured) first payment keeps its place.
	err = db.InTx(ctx, func(tx checkout.Tx) error {
		first.OpenDispute(checkout.DefaultDisputePlan, 1500, base)
		return tx.PaymentUpdate(ctx, first)
	})
	if err != nil {
		t.Errorf("disputing the captured payment = %v", err)
	}
	// Failed payments are not captured: any number of them.
	insertPayments(t, db, newPayment(s, checkout.MethodCard, base, func(p *checkout.Payment) { p.Fail(checkout.FailCardDeclined, base) }),
		newPayment(s, checkout.MethodCard, base, func(p *checkout.Payment) { p.Fail(checkout.FailCardDeclined, base) }))
}

// testPaymentOnePerTransaction: a session holds one payment per crypto
// transaction; another session may be paid by the same transaction.
func testPaymentOnePerTransaction(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	other := insertSession(t, db, newSession(m, nil))
	p := cryptoPayment(s, "0xtx", base)
	insertPayments(t, db, p, cryptoPayment(other, "0xtx", base), cryptoPayment(s, "0xother", base))
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.PaymentInsert(ctx, cryptoPayment(s, "0xtx", base)) }); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("a second payment of one transaction = %v; want conflict", err)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		got, err := tx.PaymentGetByTxHash(ctx, s.ID, "0xtx")
		if err != nil || got.ID != p.ID || !reflect.DeepEqual(got, p) {
			t.Errorf("PaymentGetByTxHash = %+v, %v; want %+v", got, err, p)
		}
		if _, err := tx.PaymentGetByTxHash(ctx, s.ID, "0xnone"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("PaymentGetByTxHash of another transaction = %v; want not_found", err)
		}
		return nil
	})
	// Card payments have no transaction, any number of them.
	insertPayments(t, db, newPayment(s, checkout.MethodCard, base, nil), newPayment(s, checkout.MethodCard, base, nil))
}

func testCryptoQuoteFirstStands(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	s := insertSession(t, db, newSession(m, nil))
	first := &checkout.CryptoQuote{SessionID: s.ID, Coin: "BTC", Address: "tb1qfirst", AmountBase: "25000", CreatedAt: time.UnixMilli(base.UnixMilli())}
	second := &checkout.CryptoQuote{SessionID: s.ID, Coin: "BTC", Address: "tb1qsecond", AmountBase: "30000", CreatedAt: time.UnixMilli(base.Add(time.Second).UnixMilli())}
	sol := &checkout.CryptoQuote{SessionID: s.ID, Coin: "SOL", Address: "So1", AmountBase: "100000000", CreatedAt: time.UnixMilli(base.UnixMilli())}
	for _, q := range []*checkout.CryptoQuote{first, second, sol} {
		inTx(t, db, func(tx checkout.Tx) error { return tx.CryptoQuoteInsert(ctx, q) })
	}
	for _, want := range []*checkout.CryptoQuote{first, sol} {
		got, err := db.CryptoQuoteGet(ctx, s.ID, want.Coin)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("CryptoQuoteGet(%s) = %+v, %v; want %+v", want.Coin, got, err, want)
		}
	}
}
