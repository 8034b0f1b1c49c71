package storetest

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// paymentListTests are the conformance tests of the dashboard's Payments
// list: pages, the status filter, the payments to refund, and the scope.
var paymentListTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Payment/ListPages", testPaymentListPages},
	{"Payment/ListRefundDue", testPaymentListRefundDue},
	{"Payment/ListRefundDueUpdated", testPaymentListRefundDueUpdated},
}

// failureCodes are every failure code of checkout, to check the refund list
// against Payment.RefundDue one by one.
var failureCodes = []string{
	checkout.FailCardDeclined, checkout.FailInsufficientFunds, checkout.FailExpiredCard, checkout.FailIncorrectCVC,
	checkout.FailProcessingError, checkout.FailTestModeLiveCard, checkout.FailSessionExpired, checkout.FailSessionCompleted,
	checkout.FailDuplicatePayment, checkout.FailTradeReversed, checkout.FailCapturedAfterFailure, checkout.FailConfirmationTimeout,
	checkout.FailUnderpaid, checkout.FailReplaced, checkout.FailDoubleSpent, checkout.FailDropped, checkout.FailAuthenticationFailed, checkout.FailAbandoned,
}

// listPayment stores a payment of a new session of m in mode, created at
// created, in status (with failure code code when it failed).
func listPayment(t *testing.T, db *store.DB, m *checkout.Merchant, mode checkout.Mode, created time.Time, status checkout.PaymentStatus, code string) *checkout.Payment {
	t.Helper()
	s := insertSession(t, db, newSession(m, func(s *checkout.Session) { s.Mode = mode }))
	p := newPayment(s, checkout.MethodCrypto, created, func(p *checkout.Payment) {
		p.Crypto = &checkout.CryptoDetails{Coin: "LTC", Address: "ltc1q" + p.ID[4:12], AmountBase: "5000000", TxHash: "tx" + p.ID,
			ReceivedBase: "4000000", RequiredBase: "5000000", Confirmations: 6}
		switch status {
		case checkout.PaymentFailed:
			p.Status, p.FailureCode, p.FailureMessage = status, ptr(code), ptr(checkout.FailureMessage(code))
		case checkout.PaymentSucceeded:
			at := created.Truncate(time.Second)
			p.Status, p.SucceededAt = status, &at
		}
	})
	insertPayments(t, db, p)
	return p
}

func paymentIDs(ps []*checkout.Payment) []string {
	ids := []string{}
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	return ids
}

// listAll reads every page of p, of size p.Limit, each after the last
// payment of the one before.
func listAll(t *testing.T, db *store.DB, p checkout.PaymentListParams) []string {
	t.Helper()
	got := []string{}
	for range 100 {
		page, err := db.PaymentList(context.Background(), p)
		if err != nil {
			t.Fatalf("PaymentList(%+v) = %v", p, err)
		}
		got = append(got, paymentIDs(page)...)
		if len(page) < p.Limit {
			return got
		}
		last := page[len(page)-1]
		p.After = checkout.Cursor{At: last.CreatedAt, ID: last.ID}
	}
	t.Fatalf("PaymentList(%+v): more than 100 pages", p)
	return nil
}

// Pages of every size visit each of the scope's payments once, newest
// first and by id within a millisecond, whether a page ends inside a
// millisecond or between two, with and without a filter; the store's other
// mode and another store's payments, made at the same times, never show.
func testPaymentListPages(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	stranger := newMerchant(t, db, "Other", base)
	kinds := []struct {
		status checkout.PaymentStatus
		code   string
	}{
		{checkout.PaymentSucceeded, ""},
		{checkout.PaymentFailed, checkout.FailUnderpaid},
		{checkout.PaymentProcessing, ""},
		{checkout.PaymentFailed, checkout.FailReplaced},
		{checkout.PaymentFailed, checkout.FailSessionExpired},
	}
	var stored []*checkout.Payment
	for i := range 13 {
		k := kinds[i%len(kinds)]
		at := base.Add(time.Duration(i/3) * time.Millisecond) // three per millisecond
		stored = append(stored, listPayment(t, db, m, checkout.ModeTest, at, k.status, k.code))
		listPayment(t, db, m, checkout.ModeLive, at, k.status, k.code)
		listPayment(t, db, stranger, checkout.ModeTest, at, k.status, k.code)
	}
	want := slices.Clone(stored)
	slices.SortFunc(want, func(a, b *checkout.Payment) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	filters := []struct {
		name  string
		p     checkout.PaymentListParams
		match func(p *checkout.Payment) bool
	}{
		{"all", checkout.PaymentListParams{}, func(*checkout.Payment) bool { return true }},
		{"failed", checkout.PaymentListParams{Status: checkout.PaymentFailed}, func(p *checkout.Payment) bool { return p.Status == checkout.PaymentFailed }},
		{"succeeded", checkout.PaymentListParams{Status: checkout.PaymentSucceeded}, func(p *checkout.Payment) bool { return p.Status == checkout.PaymentSucceeded }},
		{"refunded: none", checkout.PaymentListParams{Status: checkout.PaymentRefunded}, func(*checkout.Payment) bool { return false }},
		{"to refund", checkout.PaymentListParams{RefundDue: true}, (*checkout.Payment).RefundDue},
		{"to refund and failed", checkout.PaymentListParams{RefundDue: true, Status: checkout.PaymentFailed}, (*checkout.Payment).RefundDue},
		{"to refund and succeeded: none", checkout.PaymentListParams{RefundDue: true, Status: checkout.PaymentSucceeded}, func(*checkout.Payment) bool { return false }},
	}
	for _, f := range filters {
		var wantIDs []string
		for _, p := range want {
			if f.match(p) {
				wantIDs = append(wantIDs, p.ID)
			}
		}
		if wantIDs == nil {
			wantIDs = []string{}
		}
		for _, size := range []int{1, 2, 3, 5, 13, 14} {
			p := f.p
			p.MerchantID, p.Mode, p.Limit = m.ID, checkout.ModeTest, size
			if got := listAll(t, db, p); !reflect.DeepEqual(got, wantIDs) {
				t.Errorf("%s: PaymentList by pages of %d = %v; want %v", f.name, size, got, wantIDs)
			}
		}
	}

	// A page holds whole payments, as stored.
	page, err := db.PaymentList(ctx, checkout.PaymentListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Limit: 1})
	if err != nil || len(page) != 1 || !reflect.DeepEqual(page[0], want[0]) {
		t.Errorf("PaymentList first page = %+v, %v; want %+v", page, err, want[0])
	}
	// The live mode has its own; a store without payments, none.
	live, err := db.PaymentList(ctx, checkout.PaymentListParams{MerchantID: m.ID, Mode: checkout.ModeLive, Limit: 50})
	if err != nil || len(live) != 13 || slices.ContainsFunc(live, func(p *checkout.Payment) bool { return p.Mode != checkout.ModeLive || p.MerchantID != m.ID }) {
		t.Errorf("PaymentList(live) = %d payments, %v; want the 13 live ones of the store", len(live), err)
	}
	empty := newMerchant(t, db, "Empty", base)
	if none, err := db.PaymentList(ctx, checkout.PaymentListParams{MerchantID: empty.ID, Mode: checkout.ModeTest}); err != nil || len(none) != 0 {
		t.Errorf("PaymentList of a store without payments = %v, %v; want none", paymentIDs(none), err)
	}
	// A cursor between two payments of one millisecond: the page starts with
	// the smaller ids of that millisecond, then the older ones.
	p := checkout.PaymentListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Limit: 50, After: checkout.Cursor{At: want[4].CreatedAt, ID: want[4].ID}}
	if got, err := db.PaymentList(ctx, p); err != nil || !reflect.DeepEqual(paymentIDs(got), paymentIDs(want[5:])) {
		t.Errorf("PaymentList after %s = %v, %v; want %v", want[4].ID, paymentIDs(got), err, paymentIDs(want[5:]))
	}
}

// The refund list holds exactly the failed payments whose code is one of
// Payment.RefundDue's, and the count counts them, up to its bound; another
// mode's and another store's are never counted.
func testPaymentListRefundDue(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	stranger := newMerchant(t, db, "Other", base)
	var wantIDs []string
	for i, code := range failureCodes {
		p := listPayment(t, db, m, checkout.ModeLive, base.Add(time.Duration(i)*time.Millisecond), checkout.PaymentFailed, code)
		if p.RefundDue() {
			wantIDs = append([]string{p.ID}, wantIDs...)
		}
		listPayment(t, db, m, checkout.ModeTest, p.CreatedAt, checkout.PaymentFailed, code)
		listPayment(t, db, stranger, checkout.ModeLive, p.CreatedAt, checkout.PaymentFailed, code)
	}
	listPayment(t, db, m, checkout.ModeLive, base, checkout.PaymentSucceeded, "")
	listPayment(t, db, m, checkout.ModeLive, base, checkout.PaymentProcessing, "")
	if len(wantIDs) != 5 {
		t.Fatalf("%d failure codes are refund-due; want the 5 of checkout.Payment.RefundDue", len(wantIDs))
	}
	got, err := db.PaymentList(ctx, checkout.PaymentListParams{MerchantID: m.ID, Mode: checkout.ModeLive, RefundDue: true})
	if err != nil || !reflect.DeepEqual(paymentIDs(got), wantIDs) {
		t.Errorf("PaymentList(to refund) = %v, %v; want %v", paymentIDs(got), err, wantIDs)
	}
	for _, c := range []struct{ limit, want int }{{100, 5}, {5, 5}, {3, 3}} {
		if n, err := db.PaymentCountRefundDue(ctx, m.ID, checkout.ModeLive, c.limit); err != nil || n != c.want {
			t.Errorf("PaymentCountRefundDue(limit %d) = %d, %v; want %d", c.limit, n, err, c.want)
		}
	}
	if n, err := db.PaymentCountRefundDue(ctx, newMerchant(t, db, "Empty", base).ID, checkout.ModeLive, 100); err != nil || n != 0 {
		t.Errorf("PaymentCountRefundDue of a store without payments = %d, %v; want 0", n, err)
	}
}

// A payment that becomes due after it was stored (a dropped transaction
// that confirms after all: flagged captured_after_failure) joins the refund
// list; the list reads what PaymentUpdate wrote.
func testPaymentListRefundDueUpdated(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := newMerchant(t, db, "Acme", base)
	p := listPayment(t, db, m, checkout.ModeLive, base, checkout.PaymentFailed, checkout.FailDropped)
	list := func() []string {
		got, err := db.PaymentList(ctx, checkout.PaymentListParams{MerchantID: m.ID, Mode: checkout.ModeLive, RefundDue: true})
		if err != nil {
			t.Fatal(err)
		}
		return paymentIDs(got)
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("PaymentList(to refund) with a dropped payment = %v; want none", got)
	}
	inTx(t, db, func(tx checkout.Tx) error {
		got, err := tx.PaymentGetForUpdate(ctx, p.ID)
		if err != nil {
			return err
		}
		if err := got.FlagCapturedAfterFailure(time.UnixMilli(base.Add(time.Hour).UnixMilli())); err != nil {
			return err
		}
		return tx.PaymentUpdate(ctx, got)
	})
	if got := list(); !reflect.DeepEqual(got, []string{p.ID}) {
		t.Errorf("PaymentList(to refund) after the flag = %v; want [%s]", got, p.ID)
	}
}
