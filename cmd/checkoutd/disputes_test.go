package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
)

// disputedPayment makes a store on db, pays a session of 1500 with the
// dispute test card number, and opens its dispute as the payments job
// does; it returns the store's and the payment's ids.
func disputedPayment(t *testing.T, db database, number string) (storeID, paymentID string) {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Now())
	svc := service.New(service.Config{Store: db.open(t), Now: clk.Now, Processors: pay.Registry{Test: pay.Simulators()}})
	id := paidPaymentWith(t, svc, number)
	clk.Advance(checkout.DisputeDelay)
	if _, err := svc.ProcessAllDuePayments(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Store().PaymentGet(ctx, id)
	if err != nil || p.Status != checkout.PaymentDisputed {
		t.Fatalf("payment = %+v, %v; want disputed", p, err)
	}
	return p.MerchantID, p.ID
}

// checkoutd disputes list shows a store's open disputes, get shows one by
// its id or its payment's, answer sends evidence as the operating system's
// user; bad evidence and a second answer are refused, saying why.
func TestDisputesAnswer(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		store, pay := disputedPayment(t, db, "4000000000002685")
		cmd := func(args ...string) []string { return append(append([]string{"disputes"}, args...), db.flags...) }

		var list struct{ Data []checkout.DisputeJSON }
		decodeOne(t, mustCLI(t, vars{}, cmd("list", "--store", store, "--json")...), &list)
		if len(list.Data) != 1 || list.Data[0].PaymentID != pay || list.Data[0].Status != checkout.DisputeNeedsResponse ||
			list.Data[0].Reason != checkout.DisputeProductNotReceived || list.Data[0].Fee != 1500 {
			t.Fatalf("disputes list = %+v", list.Data)
		}
		id := list.Data[0].ID
		var got checkout.DisputeJSON
		decodeOne(t, mustCLI(t, vars{}, cmd("get", pay, "--json")...), &got)
		if got.ID != id || got.Evidence != nil || got.SubmittedBy != nil {
			t.Errorf("disputes get PAY_ID = %+v; want %s, no evidence yet", got, id)
		}

		for _, tt := range []struct {
			args  []string
			usage bool
			want  string
		}{
			{[]string{"answer", id}, false, "at least one of the texts"},
			{[]string{"answer", id, "--note", "mine"}, false, "at least one of the texts"},
			{[]string{"answer", id, "--text", "a\x00b"}, false, "uncategorized_text"},
			{[]string{"answer", "dp_" + strings.Repeat("0", 32), "--text", "x"}, false, "No such dispute"},
			{[]string{"answer", "pay_" + strings.Repeat("0", 32), "--text", "x"}, false, "has no dispute"},
			{[]string{"answer"}, true, "usage: checkoutd disputes answer"},
			{[]string{"list"}, false, "store"},
			{[]string{"list", "--store", store, "--mode", "prod"}, true, "--mode"},
		} {
			_, _, err := cli(t, vars{}, cmd(tt.args...)...)
			_, usage := err.(usageError)
			if err == nil || usage != tt.usage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("disputes %q = %v (usage %v); want an error saying %q", tt.args, err, usage, tt.want)
			}
		}

		out := words(mustCLI(t, vars{}, cmd("answer", id, "--product-description", "A sword.", "--text", "winning_evidence", "--note", "call back")...))
		if !strings.Contains(out, "status: under_review") || !strings.Contains(out, "evidence sent:") || !strings.Contains(out, "by cli ") {
			t.Errorf("disputes answer printed:\n%s", out)
		}
		decodeOne(t, mustCLI(t, vars{}, cmd("get", id, "--json")...), &got)
		if got.Status != checkout.DisputeUnderReview || got.Evidence == nil || got.Evidence.ProductDescription != "A sword." || got.Evidence.Note != "call back" ||
			got.SubmittedBy == nil || got.SubmittedBy.Type != checkout.ActorCLI {
			t.Errorf("disputes get after the answer = %+v", got)
		}
		if _, _, err := cli(t, vars{}, cmd("answer", id, "--text", "more")...); err == nil || !strings.Contains(err.Error(), "evidence already") {
			t.Errorf("a second answer = %v; want it refused, the evidence sent already", err)
		}
	})
}

// checkoutd stores dispute-fee sets a store's dispute fee, or the default
// again; a dispute opened after it is charged the fee; bad values are
// usage errors.
func TestStoresDisputeFee(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "JPY")
		var out struct {
			Fee        *int64 `json:"dispute_fee"`
			InCurrency int64  `json:"dispute_fee_in_store_currency"`
		}
		decodeOne(t, mustCLI(t, vars{}, append([]string{"stores", "dispute-fee", "--store", s.ID, "--fee", "default", "--json"}, db.flags...)...), &out)
		if out.Fee != nil || out.InCurrency != 15 {
			t.Errorf("the default for a JPY store = %+v; want 15", out)
		}
		decodeOne(t, mustCLI(t, vars{}, append([]string{"stores", "dispute-fee", "--store", s.ID, "--fee", "2000", "--json"}, db.flags...)...), &out)
		if out.Fee == nil || *out.Fee != 2000 || out.InCurrency != 2000 {
			t.Errorf("a fee of 2000 = %+v", out)
		}
		m, err := db.open(t).MerchantGet(context.Background(), s.ID)
		if err != nil || m.Pricing.DisputeFee != 2000 || m.Pricing.CardBasisPoints != checkout.DefaultPricing.CardBasisPoints {
			t.Errorf("the store's pricing = %+v, %v; want the fee set, the rest kept", m.Pricing, err)
		}
		for _, tt := range []struct {
			fee   string
			usage bool
			want  string
		}{
			{"-5", true, "--fee"}, {"ten", true, "--fee"}, {"100001", false, "dispute fee must be 0 to 100000"},
		} {
			_, _, err := cli(t, vars{}, append([]string{"stores", "dispute-fee", "--store", s.ID, "--fee", tt.fee}, db.flags...)...)
			_, usage := err.(usageError)
			if err == nil || usage != tt.usage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("--fee %s = %v (usage %v); want an error saying %q", tt.fee, err, usage, tt.want)
			}
		}
	})
}
