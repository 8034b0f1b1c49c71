package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
)

// paidPayment makes a store and a session of 1500 on db, pays it with the
// test card number, and returns the payment's id.
func paidPayment(t *testing.T, db database, number string) string {
	t.Helper()
	return paidPaymentWith(t, service.New(service.Config{Store: db.open(t), Processors: pay.Registry{Test: pay.Simulators()}}), number)
}

// paidPaymentWith is paidPayment through svc.
func paidPaymentWith(t *testing.T, svc *service.Service, number string) string {
	t.Helper()
	ctx := context.Background()
	m, err := svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.CreateSession(ctx, service.CreateSessionParams{Key: k, StoreID: m.ID, Params: p})
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ ID string }
	json.Unmarshal(res.Data, &s)
	out, err := svc.PayByCard(ctx, s.ID, pay.CardForm{Number: number, Expiry: "12/30", CVC: "123", Name: "Jo Buyer"})
	if err != nil || out.Payment.Status != checkout.PaymentSucceeded {
		t.Fatalf("PayByCard = %+v, %v", out, err)
	}
	return out.Payment.ID
}

// paidCryptoPayment makes a store and a session of 1500 on db, pays it in
// test-mode LTC, confirmed, and returns the service (on a clock two hours
// back, so that a refund link made now has not expired) and the payment's id.
func paidCryptoPayment(t *testing.T, db database) (*service.Service, string) {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Now().Add(-2 * time.Hour))
	svc := service.New(service.Config{Store: db.open(t), Now: clk.Now, Processors: pay.Registry{Test: pay.Simulators()}})
	m, err := svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		t.Fatal(err)
	}
	params, _ := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))
	res, err := svc.CreateSession(ctx, service.CreateSessionParams{Key: k, StoreID: m.ID, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ ID string }
	json.Unmarshal(res.Data, &s)
	if _, err := svc.CryptoQuote(ctx, s.ID, "LTC"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SimulateCryptoPayment(ctx, s.ID, "LTC"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if _, err := svc.ProcessAllDuePayments(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Store().SessionGet(ctx, s.ID)
	if err != nil || got.PaymentID == nil {
		t.Fatalf("the session paid in LTC = %+v, %v", got, err)
	}
	return svc, *got.PaymentID
}

// checkoutd payments refund refunds part of a payment, then the rest, as
// the operator (the OS user); payments get shows the payment with its
// refunds; bad input is refused, saying what is wrong, and changes nothing.
func TestPaymentsRefund(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		id := paidPayment(t, db, "4242424242424242")
		cmd := func(args ...string) []string { return append(append([]string{"payments"}, args...), db.flags...) }

		var r checkout.RefundJSON
		decodeOne(t, mustCLI(t, vars{}, cmd("refund", id, "--amount", "500", "--reason", "requested_by_customer", "--json")...), &r)
		if r.Object != "refund" || r.Status != checkout.RefundSucceeded || r.Amount != 500 || r.PaymentID != id || r.Reason == nil ||
			*r.Reason != checkout.ReasonRequestedByCustomer || r.RequestedBy.Type != checkout.ActorCLI || r.RequestedBy.Name == nil {
			t.Errorf("payments refund --json = %+v", r)
		}
		out := words(mustCLI(t, vars{}, cmd("refund", id)...))
		for _, want := range []string{"status: succeeded", "amount: $10.00", "refunded: $15.00", "left to refund: $0.00", r.ID + " succeeded $5.00 requested_by_customer cli"} {
			if !strings.Contains(out, want) {
				t.Errorf("payments refund's text lacks %q:\n%s", want, out)
			}
		}
		var p struct {
			checkout.PaymentJSON
			Refunds []checkout.RefundJSON `json:"refunds"`
		}
		decodeOne(t, mustCLI(t, vars{}, cmd("get", id, "--json")...), &p)
		if p.Status != checkout.PaymentRefunded || p.AmountRefunded != 1500 || len(p.Refunds) != 2 || p.Refunds[0].ID != r.ID || p.Refunds[1].Amount != 1000 {
			t.Errorf("payments get --json = %+v", p)
		}

		other := paidPayment(t, db, "4242424242424242")
		for _, tt := range []struct {
			args  []string
			usage bool
			want  string
		}{
			{[]string{"refund", id}, false, "refunded in full"},
			{[]string{"refund", other, "--amount", "0"}, false, "at least 1"},
			{[]string{"refund", other, "--amount", "1501"}, false, "more than the 1500 left"},
			{[]string{"refund", other, "--reason", "changed_mind"}, false, "requested_by_customer, duplicate or fraudulent"},
			{[]string{"refund", "pay_" + strings.Repeat("0", 32)}, false, "No such payment"},
			{[]string{"refund", "nonsense"}, false, "No such payment"},
			{[]string{"refund"}, true, "usage: checkoutd payments refund PAY_ID"},
			{[]string{"refund", other, "--amount", "ten"}, true, "invalid value"},
			{[]string{"get"}, true, "usage: checkoutd payments get PAY_ID"},
			{[]string{"void", other}, true, "has no subcommand"},
		} {
			_, errOut, err := cli(t, vars{}, cmd(tt.args...)...)
			_, isUsage := err.(usageError)
			if err == nil || isUsage != tt.usage || !strings.Contains(err.Error()+errOut, tt.want) {
				t.Errorf("payments %v = %v (usage %v; stderr %q); want an error saying %q, usage %v", tt.args, err, isUsage, errOut, tt.want, tt.usage)
			}
		}
		var untouched struct{ checkout.PaymentJSON }
		decodeOne(t, mustCLI(t, vars{}, cmd("get", other, "--json")...), &untouched)
		if untouched.Status != checkout.PaymentSucceeded || untouched.AmountRefunded != 0 {
			t.Errorf("after the refused refunds, the payment = %+v; want untouched", untouched)
		}
	})
}

// A refund the test card's processor refuses (4000 0000 0000 5126) is
// printed failed, with the reason.
func TestPaymentsRefundFails(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		id := paidPayment(t, db, "4000000000005126")
		out := words(mustCLI(t, vars{}, append([]string{"payments", "refund", id}, db.flags...)...))
		if !strings.Contains(out, "status: failed") || !strings.Contains(out, "failure: expired_or_canceled_card") || !strings.Contains(out, "left to refund: $15.00") {
			t.Errorf("a refused refund's text:\n%s", out)
		}
	})
}

// words is text with every run of white space one space: columns aligned
// by a tab writer, compared without their padding.
func words(text string) string { return strings.Join(strings.Fields(text), " ") }

// checkoutd payments refund of a crypto payment prints the buyer's link
// under --checkout-base-url; once the buyer gives an address, simulate-payout
// pays it in test mode; cancel-refund cancels another before its payout,
// and refuses a refund paid out, or a card's.
func TestPaymentsCryptoRefund(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		ctx := context.Background()
		svc, id := paidCryptoPayment(t, db)
		cmd := func(args ...string) []string { return append(append([]string{"payments"}, args...), db.flags...) }

		out := words(mustCLI(t, vars{}, cmd("refund", id, "--amount", "500", "--checkout-base-url", "https://pay.example")...))
		if !strings.Contains(out, "status: pending") || !strings.Contains(out, "Send the buyer this link") || !strings.Contains(out, "https://pay.example/refund/") {
			t.Errorf("payments refund of a crypto payment:\n%s", out)
		}
		var first checkout.RefundJSON
		decodeOne(t, mustCLI(t, vars{}, cmd("refund", id, "--amount", "500", "--rate", "current", "--json")...), &first)
		if first.Crypto == nil || first.Crypto.Rate != checkout.RateCurrent || !strings.HasPrefix(first.Crypto.LinkURL, "http://127.0.0.1:8080/refund/") {
			t.Fatalf("payments refund --rate current --json = %+v", first.Crypto)
		}
		token := first.Crypto.LinkURL[strings.LastIndex(first.Crypto.LinkURL, "/")+1:]
		if _, err := svc.GiveRefundAddress(ctx, token, "tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7klfsuq0"); err != nil {
			t.Fatal(err)
		}
		var paid checkout.RefundJSON
		decodeOne(t, mustCLI(t, vars{}, cmd("simulate-payout", first.ID, "--json")...), &paid)
		if paid.Crypto == nil || paid.Crypto.Stage != checkout.StageConfirming || paid.Crypto.TxHash == nil {
			t.Errorf("payments simulate-payout = %+v", paid.Crypto)
		}

		rs, err := svc.Refunds(ctx, id)
		if err != nil || len(rs) != 2 {
			t.Fatalf("refunds = %d, %v", len(rs), err)
		}
		out = words(mustCLI(t, vars{}, cmd("cancel-refund", rs[0].ID)...))
		if !strings.Contains(out, "status: canceled") {
			t.Errorf("payments cancel-refund:\n%s", out)
		}
		card := paidPaymentWith(t, svc, "4242424242424242")
		var cardRefund checkout.RefundJSON
		decodeOne(t, mustCLI(t, vars{}, cmd("refund", card, "--json")...), &cardRefund)
		for _, tt := range []struct {
			args  []string
			usage bool
			want  string
		}{
			{[]string{"cancel-refund", first.ID}, false, "cannot be canceled: it is pending, confirming"},
			{[]string{"cancel-refund", cardRefund.ID}, false, "cannot be canceled: it is succeeded"},
			{[]string{"cancel-refund", "re_" + strings.Repeat("0", 32)}, false, "No such refund"},
			{[]string{"simulate-payout", first.ID}, false, "awaits no payout"},
			{[]string{"simulate-payout", cardRefund.ID}, false, "Only a test-mode crypto refund"},
			{[]string{"cancel-refund"}, true, "usage: checkoutd payments cancel-refund RE_ID"},
			{[]string{"refund", card, "--rate", "current"}, false, "rate applies to refunds of crypto payments only"},
		} {
			_, errOut, err := cli(t, vars{}, cmd(tt.args...)...)
			_, isUsage := err.(usageError)
			if err == nil || isUsage != tt.usage || !strings.Contains(err.Error()+errOut, tt.want) {
				t.Errorf("payments %v = %v (usage %v; stderr %q); want an error saying %q, usage %v", tt.args, err, isUsage, errOut, tt.want, tt.usage)
			}
		}
	})
}
