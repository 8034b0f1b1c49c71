package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// trigger against a running service: the events happen through the API
// and the payment page, as a merchant's server and a buyer cause them.
func TestTrigger(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		svc := startService(t, db)
		base, m, ctx := svc.base, svc.store, context.Background()
		key := func(mode checkout.Mode) string { return svc.key(t, mode, checkout.PermCheckoutsWrite) }
		env := vars{"CHECKOUTD_SECRET": key(checkout.ModeTest)}
		events := func(typ, session string) int {
			es, err := db.EventList(ctx, checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: typ, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range es {
				if strings.Contains(string(e.Object), session) {
					n++
				}
			}
			return n
		}

		for _, tt := range []struct {
			typ, status string
			paid        bool
		}{
			{checkout.EventCheckoutCreated, "open", false},
			{checkout.EventCheckoutCompleted, "complete", true},
			{checkout.EventPaymentSucceeded, "complete", true},
			{checkout.EventPaymentFailed, "open", false},
			{checkout.EventPaymentDisputed, "complete", true},
		} {
			var res triggerResult
			out := mustCLI(t, env, "trigger", tt.typ, "--store", m.ID, "--base-url", base, "--json")
			decodeOne(t, out, &res)
			if res.Event != tt.typ || res.Status != tt.status || (res.PaymentID != "") != tt.paid {
				t.Errorf("trigger %s = %+v; want the session %s, paid %v", tt.typ, res, tt.status, tt.paid)
			}
			want := tt.typ
			if tt.typ == checkout.EventPaymentDisputed {
				want = checkout.EventPaymentSucceeded // the dispute opens when the payments job runs
			}
			if n := events(want, res.SessionID); n != 1 {
				t.Errorf("after trigger %s, %d %s events of session %s; want 1", tt.typ, n, want, res.SessionID)
			}
		}
		// payment.refunded pays, then refunds through the API: the key needs
		// refunds:write too.
		_, both, err := svc.app.Service.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite, checkout.PermRefundsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		var res triggerResult
		decodeOne(t, mustCLI(t, vars{"CHECKOUTD_SECRET": both}, "trigger", "payment.refunded", "--store", m.ID, "--base-url", base, "--json"), &res)
		if res.Status != "complete" || res.PaymentID == "" || res.RefundID == "" || events(checkout.EventPaymentRefunded, res.PaymentID) != 1 {
			t.Errorf("trigger payment.refunded = %+v, %d payment.refunded events; want the session paid, its payment refunded, one event",
				res, events(checkout.EventPaymentRefunded, res.PaymentID))
		}
		// payment.dispute_closed pays with the dispute card, waits for the
		// dispute to open (the payments job, the service's clock moved on
		// here), answers it with winning evidence through the API: the key
		// needs disputes:write too. A minute on, it closes won.
		_, answerer, err := svc.app.Service.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite, checkout.PermDisputesWrite}})
		if err != nil {
			t.Fatal(err)
		}
		triggerPoll = 10 * time.Millisecond
		paid := events(checkout.EventPaymentSucceeded, "")
		done := make(chan string, 1)
		go func() {
			out, _, err := cli(t, vars{"CHECKOUTD_SECRET": answerer}, "trigger", "payment.dispute_closed", "--store", m.ID, "--base-url", base, "--json")
			if err != nil {
				t.Errorf("trigger payment.dispute_closed = %v", err)
			}
			done <- out
		}()
		waitFor(t, "the dispute card's payment", guard, func() bool { return events(checkout.EventPaymentSucceeded, "") == paid+1 })
		svc.clock.Advance(checkout.DisputeDelay)
		if _, err := svc.app.Service.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		var disputed triggerResult
		decodeOne(t, <-done, &disputed)
		svc.clock.Advance(checkout.DisputeDecisionDelay)
		if _, err := svc.app.Service.ProcessAllDuePayments(ctx); err != nil {
			t.Fatal(err)
		}
		d, err := svc.app.Service.DisputeOfPayment(ctx, disputed.PaymentID)
		if disputed.DisputeID == "" || err != nil || d == nil || d.ID != disputed.DisputeID || d.Status != checkout.DisputeWon ||
			events(checkout.EventPaymentDisputeClosed, disputed.PaymentID) != 1 {
			t.Errorf("trigger payment.dispute_closed = %+v; dispute %+v, %v; want it answered, then won with one payment.dispute_closed", disputed, d, err)
		}
		out := mustCLI(t, env, "trigger", "checkout.completed", "--store", m.ID, "--base-url", base)
		if !strings.Contains(out, "paid it on the payment page with the test card 4242424242424242: the session is complete") {
			t.Errorf("trigger's text: %s", out)
		}

		// What it cannot cause, it says why; mistakes are usage errors.
		for _, tt := range []struct {
			args  []string
			env   vars
			usage bool
			want  string
		}{
			{[]string{"checkout.expired", "--store", m.ID}, env, false, "expires one hour after"},
			{[]string{"payment.dispute_closed", "--store", m.ID, "--base-url", base}, env, false, "needs disputes:write as well"},
			{[]string{"payment.refunded", "--store", m.ID, "--base-url", base}, env, false, "needs refunds:write as well"},
			{[]string{"webhook.test", "--store", m.ID}, env, false, "send-test"},
			{[]string{"checkout.paid", "--store", m.ID}, env, true, "unknown event type"},
			{[]string{"checkout.created"}, env, true, "--store"},
			{[]string{"checkout.created", "--store", m.ID}, vars{}, true, "CHECKOUTD_SECRET"},
			{[]string{"checkout.created", "--store", m.ID}, vars{"CHECKOUTD_SECRET": key(checkout.ModeLive)}, true, "test mode only"},
		} {
			_, _, err := cli(t, tt.env, append([]string{"trigger"}, tt.args...)...)
			_, isUsage := err.(usageError)
			if err == nil || isUsage != tt.usage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("trigger %q = %v; want a %s error saying %q", tt.args, err, map[bool]string{true: "usage", false: "plain"}[tt.usage], tt.want)
			}
		}
	})
}
