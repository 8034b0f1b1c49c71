package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// livePayment stores a live crypto payment of a new session of m, shaped
// as the live scan records them (no live network here): LTC, with what the
// node reported received and required; change sets the rest.
func (e *env) livePayment(m *checkout.Merchant, at time.Time, change func(p *checkout.Payment)) *checkout.Payment {
	e.t.Helper()
	return insertLivePayment(e.t, e.db, m, at, change)
}

// insertLivePayment is env.livePayment on any database.
func insertLivePayment(t *testing.T, db *store.DB, m *checkout.Merchant, at time.Time, change func(p *checkout.Payment)) *checkout.Payment {
	t.Helper()
	ctx := context.Background()
	s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeLive, Status: checkout.StatusOpen, Title: "Order",
		Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
		Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	p := checkout.NewPayment(s, checkout.MethodCrypto, at)
	p.Crypto = &checkout.CryptoDetails{Coin: "LTC", Address: "ltc1q" + p.ID[4:24], AmountBase: "20000000", TxHash: strings.Repeat("ab", 32),
		ReceivedBase: "20000000", RequiredBase: "20000000", Confirmations: 6, BroadcastAt: at.UnixMilli()}
	change(p)
	err := db.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.SessionInsert(ctx, s); err != nil {
			return err
		}
		return tx.PaymentInsert(ctx, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fail(code string) func(p *checkout.Payment) {
	return func(p *checkout.Payment) {
		msg := checkout.FailureMessage(code)
		p.Status, p.FailureCode, p.FailureMessage = checkout.PaymentFailed, &code, &msg
	}
}

// The live Payments page shows each payment with what a merchant needs to
// refund it: an overpaid payment's excess, an underpayment's shortfall and
// deadline, a dropped transaction, top-ups, and a clear "To refund" on
// exactly the refund-due ones, which its filter lists alone. Test mode and
// another store's payments never show, and a payment's page exists in its
// own store and mode only.
func TestPaymentsPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnvWith(t, db, "http://dash.example.test", func(c *app.Config) { c.Processors = pay.Registry{Test: pay.Simulators()} })
		ctx := context.Background()
		m, secret, ann := e.storeWithKey("ann@example.com")
		live := "/dashboard/stores/" + m.ID + "/live/payments"
		test := "/dashboard/stores/" + m.ID + "/test/payments"
		if p := e.get(live, ann); p.status != http.StatusOK || !strings.Contains(p.body, "No live payment yet") || strings.Contains(p.body, "to refund.") {
			t.Fatalf("the empty payments page = %d: %s", p.status, p.body)
		}

		at := e.clock.Now().Truncate(time.Millisecond)
		overpaid := e.livePayment(m, at.Add(1*time.Millisecond), func(p *checkout.Payment) {
			p.Crypto.ReceivedBase = "20012345" // 0.20012345 LTC for 0.2
			succeeded := at.Truncate(time.Second)
			p.Status, p.SucceededAt, p.Fee = checkout.PaymentSucceeded, &succeeded, 15
		})
		shortUntil := at.Add(30 * time.Minute)
		short := e.livePayment(m, at.Add(2*time.Millisecond), func(p *checkout.Payment) {
			p.Crypto.ReceivedBase, p.Crypto.ShortUntil = "15000000", shortUntil.UnixMilli()
			p.Crypto.TopUps = []checkout.CryptoTopUp{{TxHash: strings.Repeat("cd", 32), AmountBase: "5000000"}}
		})
		underpaid := e.livePayment(m, at.Add(3*time.Millisecond), func(p *checkout.Payment) {
			p.Crypto.ReceivedBase = "12000000"
			fail(checkout.FailUnderpaid)(p)
		})
		droppedAt := at.Add(-10 * time.Minute)
		dropped := e.livePayment(m, at.Add(4*time.Millisecond), func(p *checkout.Payment) { p.Crypto.DroppedAt = droppedAt.UnixMilli() })
		duplicate := e.livePayment(m, at.Add(5*time.Millisecond), fail(checkout.FailDuplicatePayment))
		replaced := e.livePayment(m, at.Add(6*time.Millisecond), fail(checkout.FailReplaced))

		bobStore, bob := e.signedInStore("bob@example.com")
		stranger := e.livePayment(bobStore, at, fail(checkout.FailSessionExpired))

		// A test-mode card payment, through the service.
		res := postCheckout(t, e.srv.URL, m.ID, secret, "")
		sessionID := res.body[strings.Index(res.body, `"id":"`)+6:]
		sessionID = sessionID[:strings.Index(sessionID, `"`)]
		out, err := e.svc.PayByCard(ctx, sessionID, pay.CardForm{Number: "4000000000000002", Expiry: "12/30", CVC: "123", Name: "Jo"})
		if err != nil || out.Payment.Status != checkout.PaymentFailed {
			t.Fatalf("PayByCard = %v, %v", out, err)
		}
		testPayment := out.Payment

		p := e.get(live, ann)
		if p.status != http.StatusOK {
			t.Fatalf("the live payments page = %d: %s", p.status, p.body)
		}
		body := p.body
		for _, want := range []string{
			overpaid.ID, short.ID, underpaid.ID, dropped.ID, duplicate.ID, replaced.ID, overpaid.SessionID,
			"$15.00", "crypto", "LTC", overpaid.Crypto.Address, strings.Repeat("ab", 32), strings.Repeat("cd", 32),
			"Received 0.20012345 LTC of 0.2 LTC", "<strong>Overpaid</strong> by 0.00012345 LTC",
			"Received 0.15 LTC of 0.2 LTC", "<strong>Short</strong> by 0.05 LTC, until", shortUntil.UTC().Format("2006-01-02 15:04:05 UTC"),
			"Received 0.12 LTC of 0.2 LTC",
			"<strong>Dropped</strong> from the network since", droppedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
			"<code>underpaid</code>", html.EscapeString(checkout.FailureMessage(checkout.FailUnderpaid)),
			"<code>duplicate_payment</code>", html.EscapeString(checkout.FailureMessage(checkout.FailDuplicatePayment)),
			"<code>replaced</code>",
			"2 payments are to refund.", "?show=to_refund",
			`aria-current="page">Payments</a>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the live payments page has no %q", want)
			}
		}
		if n := strings.Count(body, ">To refund</strong>"); n != 2 {
			t.Errorf("the live payments page marks %d payments To refund; want 2 (underpaid, duplicate_payment)", n)
		}
		for _, p := range []*checkout.Payment{underpaid, duplicate} {
			row := body[strings.Index(body, `payments/`+p.ID):]
			row = row[:strings.Index(row, "</tr>")]
			if !strings.Contains(row, ">To refund</strong>") {
				t.Errorf("the row of %s (%s) has no To refund mark", p.ID, *p.FailureCode)
			}
		}
		for _, id := range []string{stranger.ID, stranger.SessionID, testPayment.ID} {
			if strings.Contains(body, id) {
				t.Errorf("the live payments page shows %s, of another store or mode", id)
			}
		}
		// Newest first.
		if i, j := strings.Index(body, replaced.ID), strings.Index(body, overpaid.ID); i < 0 || j < 0 || i > j {
			t.Error("the live payments page is not newest first")
		}

		// The filter: to refund lists exactly the refund-due ones.
		p = e.get(live+"?show=to_refund", ann)
		for _, want := range []*checkout.Payment{underpaid, duplicate} {
			if !strings.Contains(p.body, want.ID) {
				t.Errorf("to refund misses %s", want.ID)
			}
		}
		for _, not := range []*checkout.Payment{overpaid, short, dropped, replaced, stranger} {
			if strings.Contains(p.body, not.ID) {
				t.Errorf("to refund shows %s (%s)", not.ID, not.Status)
			}
		}
		p = e.get(live+"?show=succeeded", ann)
		if !strings.Contains(p.body, overpaid.ID) || strings.Contains(p.body, underpaid.ID) || strings.Contains(p.body, short.ID) {
			t.Errorf("status succeeded: %s", p.body)
		}
		if p := e.get(live+"?show=paid", ann); p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="f-show-error"`) {
			t.Errorf("an unknown status = %d: %s", p.status, p.body)
		}
		if p := e.get(live+"?cursor=forged", ann); p.status != http.StatusBadRequest || !strings.Contains(p.body, "cursor") {
			t.Errorf("a forged cursor = %d: %s", p.status, p.body)
		}

		// Test mode: its own payment only, and nothing to refund.
		p = e.get(test, ann)
		if !strings.Contains(p.body, testPayment.ID) || !strings.Contains(p.body, "<code>card_declined</code>") || strings.Contains(p.body, overpaid.ID) ||
			strings.Contains(p.body, "to refund.") {
			t.Errorf("the test payments page: %s", p.body)
		}
		if p := e.get(test+"?show=to_refund", ann); !strings.Contains(p.body, "No test payment is to refund") {
			t.Errorf("test mode's to refund: %s", p.body)
		}

		// A payment's page.
		p = e.get(live+"/"+underpaid.ID, ann)
		for _, want := range []string{underpaid.ID, underpaid.SessionID, "<code>underpaid</code>", "To refund.", "the 0.12 LTC received",
			underpaid.Crypto.Address, "0.2 LTC", "0.12 LTC", "Short by"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the underpaid payment's page has no %q", want)
			}
		}
		p = e.get(live+"/"+overpaid.ID, ann)
		if !strings.Contains(p.body, "Overpaid by</dt><dd>0.00012345 LTC") || strings.Contains(p.body, "To refund") {
			t.Errorf("the overpaid payment's page: %s", p.body)
		}
		if p := e.get(live+"/"+short.ID, ann); !strings.Contains(p.body, "Short until") || !strings.Contains(p.body, "0.05 LTC") {
			t.Errorf("the short payment's page: %s", p.body)
		}
		if p := e.get(live+"/"+dropped.ID, ann); !strings.Contains(p.body, "Dropped since") {
			t.Errorf("the dropped payment's page: %s", p.body)
		}
		for _, path := range []string{test + "/" + underpaid.ID, live + "/" + stranger.ID, live + "/" + testPayment.ID, live + "/pay_nope",
			"/dashboard/stores/" + bobStore.ID + "/live/payments/" + underpaid.ID} {
			who := ann
			if strings.Contains(path, bobStore.ID) {
				who = bob
			}
			if p := e.get(path, who); p.status != http.StatusNotFound || strings.Contains(p.body, "ltc1q") {
				t.Errorf("GET %s = %d; want 404", path, p.status)
			}
		}
	})
}

// Only a member of the store sees its payments: another account gets the
// 404 of a store that does not exist, and no one signed out (or holding
// only an API key) gets past sign-in.
func TestPaymentsPageAccess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, secret, _ := e.storeWithKey("ann@example.com")
		p := e.livePayment(m, e.clock.Now(), fail(checkout.FailSessionCompleted))
		_, bob := e.signedInStore("bob@example.com")
		for _, path := range []string{"/dashboard/stores/" + m.ID + "/live/payments", "/dashboard/stores/" + m.ID + "/live/payments/" + p.ID} {
			if got := e.get(path, bob); got.status != http.StatusNotFound || strings.Contains(got.body, p.ID) {
				t.Errorf("GET %s as another store's member = %d; want 404", path, got.status)
			}
			wantRedirectToSignIn(t, "GET "+path+" signed out", e.get(path))
			got := e.do(http.MethodGet, path, nil, http.Header{"Authorization": {"Bearer " + secret}})
			wantRedirectToSignIn(t, "GET "+path+" with an API key", got)
		}
	})
}

// A long list pages by Older and Newest, filter kept, and the count above
// it stops at 100: "100 or more".
func TestPaymentsPagePages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, ann := e.signedInStore("ann@example.com")
		at := e.clock.Now()
		var ids []string // newest first
		for i := range service.MaxRefundDueCount + 1 {
			p := e.livePayment(m, at.Add(time.Duration(i)*time.Millisecond), fail(checkout.FailSessionExpired))
			ids = append([]string{p.ID}, ids...)
		}
		list := "/dashboard/stores/" + m.ID + "/live/payments?show=to_refund"
		p := e.get(list, ann)
		if !strings.Contains(p.body, "100 or more payments are to refund.") {
			t.Errorf("the count reads otherwise: %s", p.body)
		}
		var seen []string
		for range 5 {
			for _, id := range ids {
				if strings.Contains(p.body, `payments/`+id+`"`) {
					seen = append(seen, id)
				}
			}
			older := olderRE.FindStringSubmatch(p.body)
			if older == nil {
				break
			}
			next := html.UnescapeString(older[1])
			if !strings.Contains(next, "show=to_refund") {
				t.Errorf("the Older link %s drops the filter", next)
			}
			p = e.get(next, ann)
			if !strings.Contains(p.body, "Newest") {
				t.Error("a later page has no link to the newest")
			}
		}
		if !slices.Equal(seen, ids) {
			t.Errorf("the pages show %d payments; want the %d, newest first, each once", len(seen), len(ids))
		}
	})
}
