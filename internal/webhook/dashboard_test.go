package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// signatures counts the v1= of a signature header.
func signatures(header string) int { return strings.Count(header, ",v1=") }

// secretHolder is a merchant's receiver: it verifies every request with the
// secret it holds and answers 200, or 401 when the signature does not
// verify.
type secretHolder struct {
	mu     sync.Mutex
	secret string
}

func (s *secretHolder) hold(secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secret = secret
}

func (s *secretHolder) handler(now func() time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		secret := s.secret
		s.mu.Unlock()
		if !webhooktest.Verify(r.Header.Get("Service-Webhook-Signature"), body, secret, now()) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

// A roll with overlap: during it every attempt carries one v1= per secret,
// current first, so a receiver verifies with the old secret until it
// switches and with the new one after; once the overlap ends (the clock
// moved, nobody slept) only the new secret signs, retries of older events
// included. Rolling again during an overlap keeps only the secret it
// replaces.
func TestRollSecretWithOverlap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		scope := checkout.Scope{MerchantID: e.store.ID, Mode: checkout.ModeTest}
		receiver := &secretHolder{secret: ep.Secret}
		r.SetHandler(receiver.handler(e.clock.Now))
		last := func() webhooktest.Request {
			t.Helper()
			reqs := r.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request received")
			}
			return reqs[len(reqs)-1]
		}
		deliver := func(wantStatus checkout.DeliveryStatus) (webhooktest.Request, *checkout.Delivery) {
			t.Helper()
			if n := e.runOnce(); n != 1 {
				t.Fatalf("RunOnce = %d; want 1", n)
			}
			req := last()
			checkWebhookRequest(t, req.Header, req.Body)
			d := e.deliveries(ep)[0]
			if d.Status != wantStatus {
				t.Fatalf("delivery %s after the attempt is %s (last status %d); want %s", d.ID, d.Status, d.LastStatusCode, wantStatus)
			}
			return req, d
		}

		old := ep.Secret
		rolled, err := e.svc.RollEndpointSecretIn(ctx, scope, ep.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// The receiver has not switched: it still verifies with the old
		// secret, and the delivery succeeds.
		e.createSession(checkout.ModeTest)
		req, _ := deliver(checkout.DeliverySucceeded)
		sig := req.Header.Get("Service-Webhook-Signature")
		if signatures(sig) != 2 || !webhooktest.Verify(sig, req.Body, old, e.clock.Now()) || !webhooktest.Verify(sig, req.Body, rolled.Secret, e.clock.Now()) {
			t.Errorf("during the overlap: %q; want two v1, one for each secret", sig)
		}
		if first := strings.Split(sig, ",")[1]; !webhooktest.Verify(strings.Split(sig, ",")[0]+","+first, req.Body, rolled.Secret, e.clock.Now()) {
			t.Errorf("during the overlap: %q; want the current secret's v1 first", sig)
		}
		// It switches: verifying with the new secret works as well.
		e.clock.Advance(10 * time.Minute)
		receiver.hold(rolled.Secret)
		e.createSession(checkout.ModeTest)
		deliver(checkout.DeliverySucceeded)

		// A receiver that never switched fails once the overlap is over:
		// only the new secret signs, a retry included.
		receiver.hold(old)
		e.clock.Advance(49*time.Minute + 59*time.Second) // a second before the end
		e.createSession(checkout.ModeTest)
		req, _ = deliver(checkout.DeliverySucceeded)
		if signatures(req.Header.Get("Service-Webhook-Signature")) != 2 {
			t.Errorf("a second before the end of the overlap: %q; want both secrets", req.Header.Get("Service-Webhook-Signature"))
		}
		e.clock.Advance(time.Second)
		e.createSession(checkout.ModeTest)
		req, d := deliver(checkout.DeliveryPending)
		sig = req.Header.Get("Service-Webhook-Signature")
		if signatures(sig) != 1 || webhooktest.Verify(sig, req.Body, old, e.clock.Now()) || !webhooktest.Verify(sig, req.Body, rolled.Secret, e.clock.Now()) {
			t.Errorf("at the end of the overlap: %q; want the new secret's v1 alone", sig)
		}
		if d.LastStatusCode != http.StatusUnauthorized {
			t.Errorf("the old-secret receiver answered %d; want 401", d.LastStatusCode)
		}
		receiver.hold(rolled.Secret)
		e.clock.Advance(time.Minute)
		req, _ = deliver(checkout.DeliverySucceeded)
		if got := req.Header.Get("Service-Delivery-Attempt"); got != "2" || signatures(req.Header.Get("Service-Webhook-Signature")) != 1 {
			t.Errorf("the retry: attempt %s, %q; want attempt 2 signed with the new secret alone", got, req.Header.Get("Service-Webhook-Signature"))
		}

		// Rolling twice in an overlap: the secret replaced last is kept,
		// the one before it stops at once.
		second, err := e.svc.RollEndpointSecretIn(ctx, scope, ep.ID, 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		third, err := e.svc.RollEndpointSecretIn(ctx, scope, ep.ID, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		receiver.hold(second.Secret)
		e.createSession(checkout.ModeTest)
		req, _ = deliver(checkout.DeliverySucceeded)
		sig = req.Header.Get("Service-Webhook-Signature")
		if signatures(sig) != 2 || !webhooktest.Verify(sig, req.Body, third.Secret, e.clock.Now()) || webhooktest.Verify(sig, req.Body, rolled.Secret, e.clock.Now()) {
			t.Errorf("after two rolls: %q; want the newest and the one it replaced, not the one before", sig)
		}
		// The default roll ends every overlap.
		now, err := e.svc.RollEndpointSecret(ctx, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		receiver.hold(now.Secret)
		e.createSession(checkout.ModeTest)
		req, _ = deliver(checkout.DeliverySucceeded)
		if sig := req.Header.Get("Service-Webhook-Signature"); signatures(sig) != 1 || webhooktest.Verify(sig, req.Body, third.Secret, e.clock.Now()) {
			t.Errorf("after a roll at once: %q; want the new secret alone", sig)
		}
	})
}

// An edited URL is checked as a new one is, by the same guard and
// resolver: a name that resolves to a private address, an IP address or
// http is refused with the answer CreateEndpoint gives, and the endpoint
// keeps its URL. An accepted URL receives the next attempt.
func TestUpdateEndpointURLByTheGuard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		first := e.net.Receiver(t, "hooks.example.com")
		second := e.net.Receiver(t, "new-hooks.example.com")
		ep := e.endpoint(first, checkout.ModeTest)
		scope := checkout.Scope{MerchantID: e.store.ID, Mode: checkout.ModeTest}
		e.net.SetAddrs("internal.example.com", netip.MustParseAddr("10.1.2.3"))
		e.net.SetAddrs("mixed.example.com", netip.MustParseAddr("93.184.0.9"), netip.MustParseAddr("127.0.0.1"))
		for _, u := range []string{
			"https://internal.example.com/hook", "https://mixed.example.com/hook", "https://10.1.2.3/hook",
			"http://new-hooks.example.com/hook", "https://new-hooks.example.com:8443/hook", "https://localhost/hook",
			"https://unknown-name.example.com/hook",
		} {
			_, err := e.svc.UpdateEndpoint(ctx, scope, ep.ID, checkout.EndpointUpdate{URL: &u})
			_, cerr := e.svc.CreateEndpoint(ctx, checkout.EndpointParams{MerchantID: e.store.ID, Mode: checkout.ModeTest, URL: u, Events: []string{checkout.AllEvents}})
			if err == nil || checkout.ErrorCode(err) != checkout.ErrorCode(cerr) || checkout.ErrorMessage(err) != checkout.ErrorMessage(cerr) {
				t.Errorf("UpdateEndpoint(url %s) = %v; want what CreateEndpoint answers: %v", u, err, cerr)
			}
		}
		if got, _ := db.EndpointGet(ctx, ep.ID); got.URL != first.URL {
			t.Errorf("after refused edits the URL is %s; want %s", got.URL, first.URL)
		}
		u := "https://NEW-hooks.example.com.:443/hook"
		updated, err := e.svc.UpdateEndpoint(ctx, scope, ep.ID, checkout.EndpointUpdate{URL: &u})
		if err != nil || updated.URL != second.URL {
			t.Fatalf("UpdateEndpoint(%s) = %+v, %v; want the URL normalised to %s", u, updated, err, second.URL)
		}
		e.createSession(checkout.ModeTest)
		e.runOnce()
		if len(first.Requests()) != 0 || len(second.Requests()) != 1 {
			t.Errorf("after the edit the old URL got %d, the new %d; want 0 and 1", len(first.Requests()), len(second.Requests()))
		}
	})
}

// Health follows an endpoint through a day of failures and back, and Retry
// all failed resends what failed, once; a delivery's detail keeps every
// attempt as the dispatcher made it.
func TestEndpointHealthAndRetryFailed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"<down> for maintenance"}`)
		})
		ep := e.endpoint(r, checkout.ModeTest)
		scope := checkout.Scope{MerchantID: e.store.ID, Mode: checkout.ModeTest}
		health := func() *checkout.EndpointHealth {
			t.Helper()
			h, err := e.svc.EndpointHealth(ctx, scope, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		if h := health(); h.Queued != 0 || h.LastFailure != nil || h.FailingForADay() || h.Week.Finished() != 0 {
			t.Errorf("a new endpoint's health = %+v; want nothing", h)
		}

		e.createSession(checkout.ModeTest)
		e.runOnce()
		h := health()
		if h.Queued != 1 || h.LastFailure == nil || h.LastFailure.StatusCode != 503 || !h.LastFailure.StartedAt.Equal(t0) ||
			!h.FailingSince.Equal(t0) || h.FailingForADay() {
			t.Errorf("after a failed attempt: %+v; want 1 queued, the failure, not yet failing for a day", h)
		}
		// Through the retry schedule: a day after the first failure, every
		// attempt since has failed.
		elapsed := time.Duration(0)
		for i, wait := range checkout.RetrySchedule {
			e.clock.Advance(wait)
			elapsed += wait
			e.runOnce()
			if elapsed < 24*time.Hour && health().FailingForADay() {
				t.Errorf("after retry %d (%v of failures): failing for a day; want not yet", i+1, elapsed)
			}
		}
		e.clock.Advance(time.Hour)
		h = health()
		if !h.FailingForADay() || h.Queued != 0 || h.Day != (checkout.DeliveryCounts{Failed: 1}) || h.Week != (checkout.DeliveryCounts{Failed: 1}) {
			t.Errorf("after the last attempt: %+v, failing for a day %t; want the delivery failed, failing for a day", h, h.FailingForADay())
		}
		failed := e.deliveries(ep)[0]
		d, attempts, err := e.svc.DeliveryIn(ctx, scope, failed.ID)
		if err != nil || d.Status != checkout.DeliveryFailed || len(attempts) != checkout.MaxDeliveryAttempts {
			t.Fatalf("DeliveryIn = %+v, %d attempts, %v; want failed with 8", d, len(attempts), err)
		}
		for i, a := range attempts {
			if a.Number != i+1 || a.StatusCode != 503 || a.ResponseBody != `{"error":"<down> for maintenance"}` || a.Error == "" || a.Duration <= 0 {
				t.Errorf("attempt %d = %+v; want 503 with the body as received, its error and latency", i+1, a)
			}
		}

		// Fixed: retry all that failed today.
		r.Status(http.StatusOK)
		res, err := e.svc.RetryFailed(ctx, scope, ep.ID, t0)
		if err != nil || res.Queued != 1 || res.More {
			t.Fatalf("RetryFailed = %+v, %v; want 1 queued", res, err)
		}
		if res, err := e.svc.RetryFailed(ctx, scope, ep.ID, t0); err != nil || res.Queued != 0 {
			t.Errorf("RetryFailed again = %+v, %v; want nothing more", res, err)
		}
		if h := health(); h.Queued != 1 {
			t.Errorf("queued after the retry = %d; want 1", h.Queued)
		}
		if n := e.runOnce(); n != 1 {
			t.Fatalf("RunOnce after RetryFailed = %d; want 1", n)
		}
		h = health()
		if h.FailingForADay() || !h.FailingSince.IsZero() || !h.LastSuccessAt.Equal(e.clock.Now()) || h.Day != (checkout.DeliveryCounts{Succeeded: 1, Failed: 1}) {
			t.Errorf("after the resend succeeded: %+v; want the run of failures over, 1 of 2 succeeded today", h)
		}
		if rate, ok := h.Day.SuccessRate(); !ok || rate != 0.5 {
			t.Errorf("success rate = %v, %t; want 0.5", rate, ok)
		}
		page, err := e.svc.DeliveriesIn(ctx, scope, checkout.DeliveryFilter{EndpointID: ep.ID, Status: checkout.DeliverySucceeded})
		if err != nil || len(page.Items) != 1 || page.Items[0].EventID != failed.EventID {
			t.Errorf("succeeded deliveries = %+v, %v; want the resend of %s", page.Items, err, failed.EventID)
		}
		if got, _ := db.DeliveryGet(ctx, failed.ID); got.ResentAs != page.Items[0].ID || got.Status != checkout.DeliveryFailed {
			t.Errorf("the failed delivery = %+v; want it kept, failed, with its resend", got)
		}
		// Half an hour short of a week later: the day is quiet, and the
		// week holds the resend's success but no longer the failure, which
		// finished an hour before it.
		e.clock.Advance(7*24*time.Hour - 30*time.Minute)
		if h := health(); h.Day.Finished() != 0 || h.Week != (checkout.DeliveryCounts{Succeeded: 1}) {
			t.Errorf("a week later: day %+v, week %+v; want nothing today, the resend's success this week", h.Day, h.Week)
		}
	})
}
