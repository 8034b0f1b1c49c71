package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestDeliveryHeadersAndSignature(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		sid := e.createSession(checkout.ModeTest)
		if n := e.runOnce(); n != 1 {
			t.Fatalf("RunOnce = %d; want 1", n)
		}
		reqs := r.Requests()
		if len(reqs) != 1 {
			t.Fatalf("receiver got %d requests; want 1", len(reqs))
		}
		req := reqs[0]
		checkEventSchema(t, req.Body)
		checkWebhookRequest(t, req.Header, req.Body)
		ds := e.deliveries(ep)
		wantHeaders := map[string]string{
			"Content-Type":             "application/json",
			"User-Agent":               "Service-Webhooks/1.0",
			"Service-Event-Type":       "checkout.created",
			"Service-Delivery-Id":      ds[0].ID,
			"Service-Delivery-Attempt": "1",
			"Service-Event-Id":         ds[0].EventID,
			"Content-Length":           strconv.Itoa(len(req.Body)),
		}
		for k, want := range wantHeaders {
			if got := req.Header.Get(k); got != want {
				t.Errorf("header %s = %q; want %q", k, got, want)
			}
		}
		for k := range req.Header {
			if _, ok := wantHeaders[k]; !ok && k != "Service-Webhook-Signature" {
				t.Errorf("unexpected header %s: %q", k, req.Header.Get(k))
			}
		}
		if sig := req.Header.Get("Service-Webhook-Signature"); !webhooktest.Verify(sig, req.Body, ep.Secret, e.clock.Now()) {
			t.Errorf("signature %q does not verify with the endpoint's secret", sig)
		}
		if sig := req.Header.Get("Service-Webhook-Signature"); sig[:2+10] != "t="+strconv.FormatInt(e.clock.Now().Unix(), 10) {
			t.Errorf("signature %q; want t= the service clock", sig)
		}
		var evt struct {
			ID         string `json:"id"`
			Object     string `json:"object"`
			Type       string `json:"type"`
			Livemode   bool   `json:"livemode"`
			Created    int64  `json:"created"`
			APIVersion string `json:"api_version"`
			Data       struct {
				Object checkout.SessionJSON `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(req.Body, &evt); err != nil {
			t.Fatal(err)
		}
		if evt.ID != req.Header.Get("Service-Event-Id") || evt.Object != "event" || evt.Type != "checkout.created" ||
			evt.Livemode || evt.Created != t0.Unix() || evt.APIVersion != "v1" || evt.Data.Object.ID != sid || evt.Data.Object.Status != "open" {
			t.Errorf("event body = %s", req.Body)
		}
		if !regexp.MustCompile(`^evt_[0-9a-f]{32}$`).MatchString(evt.ID) {
			t.Errorf("event id %q; want evt_ and 32 hex", evt.ID)
		}
		// Exactly the fields of SPEC.md's Event, and data holds only object.
		var top map[string]json.RawMessage
		json.Unmarshal(req.Body, &top)
		if got, want := slices.Sorted(maps.Keys(top)), []string{"api_version", "created", "data", "id", "livemode", "object", "type"}; !slices.Equal(got, want) {
			t.Errorf("event fields = %v; want %v", got, want)
		}
		var data map[string]json.RawMessage
		json.Unmarshal(top["data"], &data)
		if got := slices.Sorted(maps.Keys(data)); !slices.Equal(got, []string{"object"}) {
			t.Errorf("data fields = %v; want [object]", got)
		}
		// data.object is the session with the same fields as retrieving it.
		retrieved, err := e.svc.GetSession(context.Background(), e.keys[checkout.ModeTest], e.store.ID, sid)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(retrieved)
		if !jsonEqual(t, data["object"], want) {
			t.Errorf("data.object = %s; want the session as retrieve returns it: %s", data["object"], want)
		}
		if d := e.deliveries(ep)[0]; d.Status != checkout.DeliverySucceeded || d.Attempts != 1 || d.LastStatusCode != 200 {
			t.Errorf("delivery = %+v; want succeeded after 1 attempt", d)
		}
	})
}

func TestRetrySchedule(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
			fmt.Fprint(w, "down for maintenance")
		})
		ep := e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		if n := e.runOnce(); n != 1 {
			t.Fatalf("first RunOnce = %d; want 1", n)
		}
		for i, wait := range checkout.RetrySchedule {
			e.clock.Advance(wait - time.Second)
			if n := e.runOnce(); n != 0 {
				t.Fatalf("retry %d: RunOnce %s early = %d; want 0", i+1, time.Second, n)
			}
			e.clock.Advance(time.Second)
			if n := e.runOnce(); n != 1 {
				t.Fatalf("retry %d: RunOnce on time = %d; want 1", i+1, n)
			}
		}
		e.clock.Advance(48 * time.Hour)
		if n := e.runOnce(); n != 0 {
			t.Fatalf("after the last attempt RunOnce = %d; want 0", n)
		}
		reqs := r.Requests()
		if len(reqs) != checkout.MaxDeliveryAttempts {
			t.Fatalf("receiver got %d requests; want %d", len(reqs), checkout.MaxDeliveryAttempts)
		}
		for i, req := range reqs {
			if got := req.Header.Get("Service-Delivery-Attempt"); got != strconv.Itoa(i+1) {
				t.Errorf("request %d: Service-Delivery-Attempt = %s; want %d", i, got, i+1)
			}
			if i > 0 && string(req.Body) != string(reqs[0].Body) {
				t.Errorf("request %d: body differs from the first", i)
			}
		}
		d := e.deliveries(ep)[0]
		if d.Status != checkout.DeliveryFailed || d.Attempts != 8 || d.LastStatusCode != 500 {
			t.Errorf("delivery = %+v; want failed after 8 attempts", d)
		}
		as := e.attempts(d)
		if len(as) != 8 {
			t.Fatalf("%d attempts recorded; want 8", len(as))
		}
		for i, a := range as {
			if a.Number != i+1 || a.StatusCode != 500 || a.Error == "" || a.ResponseBody != "down for maintenance" {
				t.Errorf("attempt %d = %+v", i+1, a)
			}
		}
	})
}

func TestFailures(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		// The receiver that never answers meets a node whose attempts time
		// out at once; every other case has the whole timeout, so that a
		// loaded machine cannot make an answer late.
		impatient := e.newDispatcher(envOptions{timeout: 300 * time.Millisecond})
		release := make(chan struct{})
		defer close(release)
		cases := []struct {
			name    string
			handler http.HandlerFunc
			ok      bool
			status  int
		}{
			{"200", func(w http.ResponseWriter, _ *http.Request) {}, true, 200},
			{"204", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }, true, 204},
			{"299", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(299) }, true, 299},
			{"301 redirect", redirect(301), false, 301},
			{"302 redirect", redirect(302), false, 302},
			{"303 redirect", redirect(303), false, 303},
			{"307 redirect", redirect(307), false, 307},
			{"308 redirect", redirect(308), false, 308},
			{"404", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(404) }, false, 404},
			{"503", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }, false, 503},
			{"timeout", func(w http.ResponseWriter, _ *http.Request) { <-release }, false, 0},
			{"big body", func(w http.ResponseWriter, _ *http.Request) {
				w.Write(make([]byte, 64<<10))
			}, true, 200},
		}
		elsewhere := e.net.Receiver(t, "elsewhere.example.com")
		for i, c := range cases {
			r := e.net.Receiver(t, fmt.Sprintf("case%d.example.com", i))
			r.SetHandler(c.handler)
			ep := e.endpoint(r, checkout.ModeTest)
			e.createSession(checkout.ModeTest)
			if c.name == "timeout" {
				if _, err := impatient.RunOnce(context.Background()); err != nil {
					t.Fatalf("RunOnce: %v", err)
				}
			} else {
				e.runOnce()
			}
			if _, _, err := e.svc.SetEndpointEnabled(context.Background(), ep.ID, false); err != nil {
				t.Fatal(err)
			}
			ds := e.deliveries(ep)
			a := e.attempts(ds[0])[0]
			if a.Succeeded() != c.ok || a.StatusCode != c.status || (a.Error == "") != c.ok || len(a.ResponseBody) > checkout.MaxAttemptResponse {
				t.Errorf("%s: attempt = %+v; want ok=%t status %d", c.name, a, c.ok, c.status)
			}
			switch {
			case c.status >= 300 && c.status < 400 && !strings.Contains(a.Error, "not followed"):
				t.Errorf("%s: error = %q; want it to say the redirect was not followed", c.name, a.Error)
			case c.name == "timeout" && !strings.Contains(a.Error, "10 seconds"):
				t.Errorf("%s: error = %q; want it to say the receiver must answer within 10 seconds", c.name, a.Error)
			}
		}
		if n := len(elsewhere.Requests()); n != 0 {
			t.Errorf("a redirect was followed: %d requests reached its target", n)
		}
	})
}

// redirect answers with code and a Location on another receiver of the
// network, which must never be requested.
func redirect(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example.com/x", code)
	}
}

func TestDisableCancelsQueued(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		r.Status(500)
		ep := e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		e.runOnce()
		_, canceled, err := e.svc.SetEndpointEnabled(context.Background(), ep.ID, false)
		if err != nil || canceled != 1 {
			t.Fatalf("disable = %d, %v; want 1 canceled", canceled, err)
		}
		e.clock.Advance(time.Hour)
		if n := e.runOnce(); n != 0 {
			t.Errorf("RunOnce after disable = %d; want 0", n)
		}
		e.createSession(checkout.ModeTest) // no delivery for a disabled endpoint
		if ds := e.deliveries(ep); len(ds) != 1 || ds[0].Status != checkout.DeliveryCanceled {
			t.Errorf("deliveries = %+v; want the one, canceled", ds)
		}
		// Enabling again brings new events, not the canceled ones.
		if _, _, err := e.svc.SetEndpointEnabled(context.Background(), ep.ID, true); err != nil {
			t.Fatal(err)
		}
		r.Status(200)
		e.createSession(checkout.ModeTest)
		if n := e.runOnce(); n != 1 {
			t.Errorf("RunOnce after enable = %d; want 1", n)
		}
	})
}

func TestResendAndRollSecret(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		e.runOnce()
		first := e.deliveries(ep)[0]

		// A pending delivery cannot be resent; a finished one can.
		r.Status(500)
		e.createSession(checkout.ModeTest)
		e.runOnce()
		pending := e.deliveries(ep)[0]
		if _, err := e.svc.Resend(ctx, pending.ID); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("Resend(pending) = %v; want validation_failed", err)
		}
		rolled, err := e.svc.RollEndpointSecret(ctx, ep.ID)
		if err != nil || rolled.Secret == ep.Secret {
			t.Fatalf("RollEndpointSecret = %v, %v", rolled, err)
		}
		r.Status(200)
		e.clock.Advance(time.Minute) // the retry of the pending delivery
		resent, err := e.svc.Resend(ctx, first.ID)
		if err != nil {
			t.Fatal(err)
		}
		if resent.ID == first.ID || resent.EventID != first.EventID {
			t.Errorf("Resend = %+v; want a new delivery of event %s", resent, first.EventID)
		}
		e.createSession(checkout.ModeTest) // a new event after the roll
		if n := e.runOnce(); n != 3 {
			t.Fatalf("RunOnce = %d; want 3 (the retry, the resend and the new event)", n)
		}
		reqs := r.Requests()
		if len(reqs) != 5 {
			t.Fatalf("receiver got %d requests; want 5", len(reqs))
		}
		if sig := reqs[1].Header.Get("Service-Webhook-Signature"); !webhooktest.Verify(sig, reqs[1].Body, ep.Secret, e.clock.Now()) {
			t.Errorf("before the roll, the first attempt is not signed with the first secret")
		}
		kinds := map[string]bool{}
		for _, req := range reqs[2:] {
			kinds[req.Header.Get("Service-Delivery-Attempt")+" "+req.Header.Get("Service-Event-Id")] = true
			sig := req.Header.Get("Service-Webhook-Signature")
			if !webhooktest.Verify(sig, req.Body, rolled.Secret, e.clock.Now()) || webhooktest.Verify(sig, req.Body, ep.Secret, e.clock.Now()) {
				t.Errorf("after the roll, %s is not signed with the new secret alone", req.Header.Get("Service-Delivery-Id"))
			}
		}
		if !kinds["2 "+pending.EventID] || !kinds["1 "+first.EventID] || len(kinds) != 3 {
			t.Errorf("after the roll got %v; want the retry (attempt 2) of %s, the resend (attempt 1) of %s and a new event", kinds, pending.EventID, first.EventID)
		}
		got, err := db.DeliveryGet(ctx, resent.ID)
		if err != nil || got.Status != checkout.DeliverySucceeded || len(e.attempts(got)) != 1 || e.attempts(got)[0].Number != 1 {
			t.Errorf("resent delivery = %+v, %v; want succeeded at its own first attempt", got, err)
		}
		if old, _ := db.DeliveryGet(ctx, first.ID); old.Status != checkout.DeliverySucceeded || old.Attempts != 1 {
			t.Errorf("the delivery resent = %+v; want it unchanged", old)
		}
		if ds := e.deliveries(ep); len(ds) != 4 {
			t.Errorf("%d deliveries; want 4 (two events, the resend, the new event)", len(ds))
		}
	})
}

func TestTestEventReachesOnlyItsEndpoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		a := e.net.Receiver(t, "a.example.com")
		b := e.net.Receiver(t, "b.example.com")
		epA := e.endpoint(a, checkout.ModeTest)
		e.endpoint(b, checkout.ModeTest)
		if _, _, err := e.svc.SendTestEvent(context.Background(), epA.ID); err != nil {
			t.Fatal(err)
		}
		e.runOnce()
		if len(a.Requests()) != 1 || len(b.Requests()) != 0 {
			t.Fatalf("a got %d, b got %d; want 1 and 0", len(a.Requests()), len(b.Requests()))
		}
		var evt struct {
			Type string `json:"type"`
			Data struct {
				Object map[string]string `json:"object"`
			} `json:"data"`
		}
		req := a.Requests()[0]
		checkEventSchema(t, req.Body)
		checkWebhookRequest(t, req.Header, req.Body)
		json.Unmarshal(req.Body, &evt)
		// DESIGN.md 7: {"object": "webhook_test", "endpoint_id": "we_...", "message": "..."}, nothing else.
		if evt.Type != "webhook.test" || req.Header.Get("Service-Event-Type") != "webhook.test" || len(evt.Data.Object) != 3 ||
			evt.Data.Object["object"] != "webhook_test" || evt.Data.Object["endpoint_id"] != epA.ID || evt.Data.Object["message"] == "" {
			t.Errorf("test event = %s", req.Body)
		}
		// Sending again makes another event; a disabled endpoint gets none.
		if _, _, err := e.svc.SendTestEvent(context.Background(), epA.ID); err != nil {
			t.Fatal(err)
		}
		e.runOnce()
		if len(a.Requests()) != 2 || len(b.Requests()) != 0 {
			t.Errorf("after a second test event a got %d, b got %d; want 2 and 0", len(a.Requests()), len(b.Requests()))
		}
		if _, _, err := e.svc.SetEndpointEnabled(context.Background(), epA.ID, false); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.svc.SendTestEvent(context.Background(), epA.ID); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("SendTestEvent(disabled) = %v; want validation_failed", err)
		}
	})
}

func TestModeIsolationAndSubscriptions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		test := e.net.Receiver(t, "test.example.com")
		live := e.net.Receiver(t, "live.example.com")
		expiredOnly := e.net.Receiver(t, "expired.example.com")
		all := e.endpoint(test, checkout.ModeTest)
		e.endpoint(live, checkout.ModeLive)
		some := e.endpoint(expiredOnly, checkout.ModeTest, checkout.EventCheckoutExpired)
		// All is stored as all, not expanded into today's types, so it covers
		// the types added later.
		for ep, want := range map[*checkout.Endpoint][]string{all: {checkout.AllEvents}, some: {checkout.EventCheckoutExpired}} {
			got, err := db.EndpointGet(context.Background(), ep.ID)
			if err != nil || !slices.Equal(got.Events, want) {
				t.Errorf("stored events = %v, %v; want %v", got.Events, err, want)
			}
		}
		e.createSession(checkout.ModeTest)
		e.runOnce()
		if len(test.Requests()) != 1 || len(live.Requests()) != 0 || len(expiredOnly.Requests()) != 0 {
			t.Fatalf("test/live/expired-only got %d/%d/%d; want 1/0/0", len(test.Requests()), len(live.Requests()), len(expiredOnly.Requests()))
		}
		e.createSession(checkout.ModeLive)
		e.runOnce()
		if len(test.Requests()) != 1 || len(live.Requests()) != 1 {
			t.Fatalf("after a live session test/live got %d/%d; want 1/1", len(test.Requests()), len(live.Requests()))
		}
		e.clock.Advance(time.Hour)
		if _, err := e.svc.ExpireAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.runOnce()
		if len(expiredOnly.Requests()) != 1 || len(test.Requests()) != 2 || len(live.Requests()) != 2 {
			t.Fatalf("after expiry expired-only/test/live got %d/%d/%d; want 1/2/2", len(expiredOnly.Requests()), len(test.Requests()), len(live.Requests()))
		}
		for _, c := range []struct {
			r        *webhooktest.Receiver
			livemode bool
		}{{expiredOnly, false}, {live, true}} {
			req := c.r.Requests()[len(c.r.Requests())-1]
			checkWebhookRequest(t, req.Header, req.Body)
			var evt struct {
				Type     string
				Livemode bool
				Data     struct{ Object checkout.SessionJSON }
			}
			json.Unmarshal(req.Body, &evt)
			if evt.Type != "checkout.expired" || evt.Livemode != c.livemode || evt.Data.Object.Status != "expired" || evt.Data.Object.Livemode != c.livemode {
				t.Errorf("%s got %s; want checkout.expired of an expired session, livemode %t", c.r.Host, req.Body, c.livemode)
			}
		}
	})
}

func TestEndpointLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		var wg sync.WaitGroup
		errs := make([]error, checkout.MaxEndpointsPerStore+4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = e.svc.CreateEndpoint(context.Background(), checkout.EndpointParams{
					MerchantID: e.store.ID, Mode: checkout.ModeTest, URL: r.URL, Events: []string{checkout.AllEvents}})
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !checkout.IsCode(err, checkout.EValidationFailed):
				t.Errorf("CreateEndpoint = %v; want validation_failed past the limit", err)
			}
		}
		if ok != checkout.MaxEndpointsPerStore {
			t.Errorf("%d endpoints created concurrently; want exactly %d", ok, checkout.MaxEndpointsPerStore)
		}
		eps, _ := e.db.EndpointList(context.Background(), e.store.ID)
		if len(eps) != checkout.MaxEndpointsPerStore {
			t.Errorf("%d endpoints stored; want %d", len(eps), checkout.MaxEndpointsPerStore)
		}
	})
}

func TestRebindingRefusedAtDelivery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		e.net.SetAddrs("hooks.example.com", netipMust("127.0.0.1"))
		e.createSession(checkout.ModeTest)
		e.runOnce()
		if n := len(r.Requests()); n != 0 {
			t.Fatalf("receiver got %d requests through a private address", n)
		}
		a := e.attempts(e.deliveries(ep)[0])[0]
		if a.Succeeded() || a.StatusCode != 0 || a.Error == "" {
			t.Errorf("attempt = %+v; want refused", a)
		}
	})
}

func TestLeaseExpiryRetriesAnAbandonedAttempt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		// A process claims the delivery and dies before recording anything.
		claims, err := db.DeliveryClaim(context.Background(), store.ClaimParams{
			Owner: "dead-node", Now: e.clock.Now(), LeaseUntil: e.clock.Now().Add(time.Minute), Limit: 10, PerEndpoint: 4})
		if err != nil || len(claims) != 1 {
			t.Fatalf("DeliveryClaim = %d, %v; want 1", len(claims), err)
		}
		if n := e.runOnce(); n != 0 {
			t.Fatalf("RunOnce under the lease = %d; want 0", n)
		}
		e.clock.Advance(time.Minute)
		if n := e.runOnce(); n != 1 {
			t.Fatalf("RunOnce after the lease = %d; want 1", n)
		}
		if got := r.Requests()[0].Header.Get("Service-Delivery-Attempt"); got != "1" {
			t.Errorf("attempt header = %s; want 1 (the abandoned attempt finished nothing)", got)
		}
		if d := e.deliveries(ep)[0]; d.Status != checkout.DeliverySucceeded {
			t.Errorf("delivery = %+v", d)
		}
	})
}

func TestTwoDispatchersShareTheWork(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, envOptions{perEndpoint: 100, workers: 8})
		nodes := []*webhook.Dispatcher{e.disp, e.newDispatcher(envOptions{perEndpoint: 100, workers: 8})}
		r := e.net.Receiver(t, "hooks.example.com")
		r.Status(500)
		ep := e.endpoint(r, checkout.ModeTest)
		const sessions = 40
		for range sessions {
			e.createSession(checkout.ModeTest)
		}
		runAll := func() int {
			var wg sync.WaitGroup
			counts := make([]int, len(nodes))
			for i, d := range nodes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n, err := d.RunOnce(context.Background())
					if err != nil {
						t.Error(err)
					}
					counts[i] = n
				}()
			}
			wg.Wait()
			return counts[0] + counts[1]
		}
		perDelivery := func() map[string]int {
			m := map[string]int{}
			for _, req := range r.Requests() {
				m[req.Header.Get("Service-Delivery-Id")]++
			}
			return m
		}
		if n := runAll(); n != sessions {
			t.Fatalf("first round: %d attempts; want %d", n, sessions)
		}
		for id, n := range perDelivery() {
			if n != 1 {
				t.Errorf("first round: delivery %s attempted %d times; want 1", id, n)
			}
		}
		r.Status(200)
		e.clock.Advance(time.Minute)
		if n := runAll(); n != sessions {
			t.Fatalf("second round: %d attempts; want %d", n, sessions)
		}
		got := perDelivery()
		if len(got) != sessions {
			t.Errorf("%d deliveries reached the receiver; want %d", len(got), sessions)
		}
		for id, n := range got {
			if n != 2 {
				t.Errorf("delivery %s attempted %d times over two steps; want 2", id, n)
			}
		}
		for _, d := range e.deliveries(ep) {
			if d.Status != checkout.DeliverySucceeded || d.Attempts != 2 {
				t.Errorf("delivery %s = %s after %d attempts; want succeeded after 2", d.ID, d.Status, d.Attempts)
			}
		}
	})
}

// Leases are set and compared on each node's own clock. A node whose clock
// runs ahead of another's, by less than the tolerance docs/webhooks.md
// gives (the lease, 60 s by default, minus an attempt's 10 s and the time
// to record it), does not take a delivery whose attempt is still running
// on the other node, even at the last moment that attempt can take.
func TestClockAheadWithinToleranceTakesNoLiveLease(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		const lease = 60 * time.Second // the default
		skew := lease - webhook.Timeout - 5*time.Second
		e := newEnv(t, db)
		ahead := e.newDispatcher(envOptions{now: func() time.Time { return e.clock.Now().Add(skew) }})
		r := e.net.Receiver(t, "hooks.example.com")
		release := make(chan struct{})
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) { <-release })
		e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		done := make(chan int)
		go func() {
			n, err := e.disp.RunOnce(context.Background())
			if err != nil {
				t.Error(err)
			}
			done <- n
		}()
		if _, ok := r.Next(10 * time.Second); !ok {
			t.Fatal("the first node's attempt did not reach the receiver")
		}
		// The attempt has run as long as an attempt may.
		e.clock.Advance(webhook.Timeout)
		if n, err := ahead.RunOnce(context.Background()); n != 0 || err != nil {
			t.Errorf("a node %s ahead claimed %d deliveries, %v, under a live lease; want none", skew, n, err)
		}
		close(release)
		if n := <-done; n != 1 {
			t.Errorf("the first node made %d attempts; want 1", n)
		}
		if n := len(r.Requests()); n != 1 {
			t.Errorf("the receiver got %d requests; want 1", n)
		}
	})
}

func TestSlowEndpointDoesNotDelayOthers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, envOptions{workers: 4, perEndpoint: 2, poll: time.Hour})
		slow := e.net.Receiver(t, "slow.example.com")
		release := make(chan struct{})
		slow.SetHandler(func(w http.ResponseWriter, _ *http.Request) { <-release })
		fast := e.net.Receiver(t, "fast.example.com")
		e.endpoint(slow, checkout.ModeTest)
		for range 10 {
			e.createSession(checkout.ModeTest) // 10 deliveries to the slow endpoint
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.disp.Run(ctx); close(done) }()
		// Wait until the slow endpoint holds its share of workers.
		for range 2 {
			if _, ok := slow.Next(guard); !ok {
				t.Fatal("the slow endpoint got no request")
			}
		}
		// An event for another endpoint goes out while the slow one hangs.
		epFast := e.endpoint(fast, checkout.ModeTest)
		if _, _, err := e.svc.SendTestEvent(context.Background(), epFast.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := fast.Next(guard); !ok {
			t.Fatal("the fast endpoint waited behind the slow one")
		}
		if n := len(slow.Requests()); n != 2 {
			t.Errorf("the slow endpoint has %d attempts in flight; want its cap, 2", n)
		}
		close(release)
		cancel()
		<-done
	})
}

func TestNewEventWakesTheDispatcher(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		// Polling once an hour: only the in-process wake-up can deliver.
		e := newEnv(t, db, envOptions{poll: time.Hour})
		r := e.net.Receiver(t, "hooks.example.com")
		e.endpoint(r, checkout.ModeTest)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.disp.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		if _, ok := r.Next(100 * time.Millisecond); ok {
			t.Fatal("a request arrived before any event")
		}
		e.createSession(checkout.ModeTest)
		if _, ok := r.Next(guard); !ok {
			t.Fatal("the event was not delivered: the dispatcher was not woken")
		}
	})
}

// Events and deliveries older than 30 days are purged with their attempts;
// an event that still has a pending delivery is kept, with it, until the
// delivery finishes.
func TestPurgeAfterRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		e.createSession(checkout.ModeLive) // an old event that reached no endpoint
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		e.runOnce()
		old := e.deliveries(ep)[0]
		// An old delivery still pending: its endpoint fails, and no
		// dispatcher ran for a month.
		down := e.net.Receiver(t, "down.example.com")
		down.Status(500)
		stuckEp := e.endpoint(down, checkout.ModeLive)
		e.createSession(checkout.ModeLive)
		e.runOnce()
		stuck := e.deliveries(stuckEp)[0]
		if stuck.Status != checkout.DeliveryPending || stuck.Attempts != 1 {
			t.Fatalf("stuck delivery = %+v; want pending after one attempt", stuck)
		}

		e.clock.Advance(checkout.Retention - time.Second)
		e.createSession(checkout.ModeTest)
		e.runOnce() // the stuck delivery's second attempt fails too
		recent := e.deliveries(ep)[0]
		if res, err := e.svc.Purge(ctx); err != nil || res.Events != 0 {
			t.Errorf("Purge 1 s before the month = %+v, %v; want no event purged", res, err)
		}
		e.clock.Advance(2 * time.Second)
		res, err := e.svc.Purge(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Events != 2 {
			t.Errorf("purged %d events; want 2 (the one delivered, the one without deliveries)", res.Events)
		}
		if _, err := db.DeliveryGet(ctx, old.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("old delivery still there: %v", err)
		}
		if _, err := db.EventGet(ctx, old.EventID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("old event still there: %v", err)
		}
		if as := e.attempts(old); len(as) != 0 {
			t.Errorf("old attempts still there: %d", len(as))
		}
		if ds := e.deliveries(ep); len(ds) != 1 || ds[0].ID != recent.ID {
			t.Errorf("%d deliveries left; want the recent one", len(ds))
		}
		if es, _ := db.EventList(ctx, checkout.EventListParams{MerchantID: e.store.ID, Mode: checkout.ModeLive}); len(es) != 1 || es[0].ID != stuck.EventID {
			t.Errorf("live events left = %d; want only the one with a pending delivery", len(es))
		}
		if d, err := db.DeliveryGet(ctx, stuck.ID); err != nil || d.Status != checkout.DeliveryPending || len(e.attempts(d)) != 2 {
			t.Errorf("pending delivery after purge = %+v, %v; want it kept with its 2 attempts", d, err)
		}

		// Once it finishes, the next purge takes it and its event.
		down.Status(200)
		e.clock.Advance(5 * time.Minute)
		if n := e.runOnce(); n != 1 {
			t.Fatalf("RunOnce = %d; want the pending delivery's retry", n)
		}
		res, err = e.svc.Purge(ctx)
		if err != nil || res.Events != 1 {
			t.Errorf("Purge after it finished = %+v, %v; want its event purged", res, err)
		}
		if _, err := db.DeliveryGet(ctx, stuck.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("finished old delivery still there: %v", err)
		}
	})
}

func TestDisableDuringAnAttempt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		release := make(chan struct{})
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
			<-release
			w.WriteHeader(500)
		})
		ep := e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		done := make(chan int)
		go func() { n, _ := e.disp.RunOnce(context.Background()); done <- n }()
		if _, ok := r.Next(guard); !ok {
			t.Fatal("no attempt started")
		}
		if _, _, err := e.svc.SetEndpointEnabled(context.Background(), ep.ID, false); err != nil {
			t.Fatal(err)
		}
		close(release)
		if n := <-done; n != 1 {
			t.Fatalf("RunOnce = %d; want 1", n)
		}
		d := e.deliveries(ep)[0]
		if d.Status != checkout.DeliveryCanceled || d.Attempts != 1 || d.LastStatusCode != 500 {
			t.Errorf("delivery = %s after %d attempts, last status %d; want canceled after the 1 attempt, last status 500", d.Status, d.Attempts, d.LastStatusCode)
		}
		if as := e.attempts(d); len(as) != 1 || as[0].StatusCode != 500 {
			t.Errorf("attempts = %+v; want the one that was in flight", as)
		}
		e.clock.Advance(time.Hour)
		if n := e.runOnce(); n != 0 {
			t.Errorf("RunOnce later = %d; want no retry", n)
		}
	})
}

// Deleting an endpoint deletes its deliveries with their attempts: nothing
// more is attempted, and an attempt that was in flight leaves no record of
// a delivery that no longer exists.
func TestDeleteEndpoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		release := make(chan struct{})
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
			<-release
			w.WriteHeader(500)
		})
		ep := e.endpoint(r, checkout.ModeTest)
		// The other endpoint's attempt is held too: its record would claim
		// the second session's delivery to ep, made before the delete, and
		// send it (claim in record), which this test is not about.
		otherR := e.net.Receiver(t, "other.example.com")
		otherR.SetHandler(func(http.ResponseWriter, *http.Request) { <-release })
		other := e.endpoint(otherR, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		done := make(chan int)
		go func() { n, _ := e.disp.RunOnce(ctx); done <- n }()
		for _, rcv := range []*webhooktest.Receiver{r, otherR} {
			if _, ok := rcv.Next(guard); !ok {
				t.Fatal("no attempt started")
			}
		}
		inFlight := e.deliveries(ep)[0]
		e.createSession(checkout.ModeTest) // a second delivery, queued
		queued := e.deliveries(ep)[0]
		if err := e.svc.DeleteEndpoint(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
		close(release)
		<-done
		for _, d := range []*checkout.Delivery{inFlight, queued} {
			if _, err := db.DeliveryGet(ctx, d.ID); !checkout.IsCode(err, checkout.ENotFound) {
				t.Errorf("DeliveryGet(%s) after delete = %v; want not_found", d.ID, err)
			}
			if as := e.attempts(d); len(as) != 0 {
				t.Errorf("delivery %s of the deleted endpoint still has %d attempts recorded", d.ID, len(as))
			}
		}
		e.clock.Advance(time.Hour)
		if n := e.runOnce(); n != 0 {
			t.Errorf("RunOnce after delete = %d; want 0", n)
		}
		if got := len(r.Requests()); got != 1 {
			t.Errorf("the deleted endpoint got %d requests; want only the one in flight", got)
		}
		if ds := e.deliveries(other); len(ds) != 2 {
			t.Errorf("the other endpoint has %d deliveries; want its 2, untouched", len(ds))
		}
		if err := e.svc.DeleteEndpoint(ctx, ep.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("DeleteEndpoint again = %v; want not_found", err)
		}
	})
}

// Every attempt is recorded with its time, status code, latency, error and
// the first 4 KiB of the response, exactly: a body of 4096 bytes is kept
// whole, one of 4097 loses its last byte, and a character that straddles
// the limit is left out rather than cut.
func TestAttemptRecord(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		big := strings.Repeat("a", checkout.MaxAttemptResponse-1)
		cases := []struct {
			name   string
			status int
			body   string
			want   string // the response body recorded
		}{
			{"empty", 503, "", ""},
			{"4095 bytes", 503, big, big},
			{"4096 bytes", 503, big + "b", big + "b"},
			{"4097 bytes", 503, big + "bc", big + "b"},
			{"64 KiB", 200, big + "b" + strings.Repeat("c", 60<<10), big + "b"},
			{"a character across the limit", 503, big + "é" + "tail", big},
			{"invalid UTF-8 and NUL", 500, "ok\xff\x00", "ok\uFFFD\uFFFD"},
		}
		for i, c := range cases {
			r := e.net.Receiver(t, fmt.Sprintf("record%d.example.com", i))
			r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			ep := e.endpoint(r, checkout.ModeTest)
			e.createSession(checkout.ModeTest)
			e.clock.Advance(time.Second) // each case's attempt at its own time
			started := e.clock.Now()
			e.runOnce()
			if _, _, err := e.svc.SetEndpointEnabled(context.Background(), ep.ID, false); err != nil {
				t.Fatal(err)
			}
			d := e.deliveries(ep)[0]
			as := e.attempts(d)
			if len(as) != 1 {
				t.Fatalf("%s: %d attempts recorded; want 1", c.name, len(as))
			}
			a := as[0]
			if a.DeliveryID != d.ID || a.Number != 1 || !a.StartedAt.Equal(started) || a.StatusCode != c.status || a.Duration <= 0 {
				t.Errorf("%s: attempt = {delivery %s, number %d, started %s, status %d, duration %s}; want {%s, 1, %s, %d, > 0}",
					c.name, a.DeliveryID, a.Number, a.StartedAt, a.StatusCode, a.Duration, d.ID, started, c.status)
			}
			if a.ResponseBody != c.want {
				t.Errorf("%s: response body recorded = %d bytes %.20q...; want %d bytes %.20q...", c.name, len(a.ResponseBody), a.ResponseBody, len(c.want), c.want)
			}
			wantErr := c.status != 200
			if (a.Error != "") != wantErr || (wantErr && !strings.Contains(a.Error, strconv.Itoa(c.status))) {
				t.Errorf("%s: error = %q; want one naming %d: %t", c.name, a.Error, c.status, wantErr)
			}
			if d.LastStatusCode != c.status || d.LastError != a.Error {
				t.Errorf("%s: delivery last status %d, error %q; want the attempt's", c.name, d.LastStatusCode, d.LastError)
			}
		}
	})
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// batchFailingStore fails every DeliveryRecordAll of more than one record:
// how a test makes a group commit fail.
type batchFailingStore struct {
	webhook.Queue
	failed atomic.Int64
}

func (s *batchFailingStore) DeliveryRecordAll(ctx context.Context, rs []store.AttemptRecord, next store.ClaimParams) ([]bool, []*store.Claim, error) {
	if len(rs) > 1 {
		s.failed.Add(1)
		return nil, nil, errors.New("injected failure of a batch")
	}
	return s.Queue.DeliveryRecordAll(ctx, rs, next)
}

// Attempts that end together are recorded together; when such a batch
// fails, each is recorded alone, so that one bad record never costs the
// others their record (and a second attempt). Either way every delivery
// ends succeeded with exactly one attempt.
func TestAttemptsRecordedTogether(t *testing.T) {
	for _, failBatches := range []bool{false, true} {
		t.Run(fmt.Sprintf("failing batches %v", failBatches), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				e := newEnv(t, db)
				r := e.net.Receiver(t, "hooks.example.com")
				// Every request waits for the tenth, so that the ten attempts
				// end together.
				const n = 10
				var arrived sync.WaitGroup
				arrived.Add(n)
				r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
					arrived.Done()
					arrived.Wait()
				})
				ep := e.endpoint(r, checkout.ModeTest)
				for range n {
					e.createSession(checkout.ModeTest)
				}
				var st webhook.Queue = db
				wrapped := &batchFailingStore{Queue: db}
				if failBatches {
					st = wrapped
				}
				d := webhook.New(webhook.Config{
					Store: st, Now: e.clock.Now, PerEndpoint: n,
					Client: webhook.NewClient(webhook.ClientConfig{Guard: e.guard, RootCAs: e.net.RootCAs(), Dial: e.net.Dial}),
				})
				if got, err := d.RunOnce(context.Background()); got != n || err != nil {
					t.Fatalf("RunOnce = %d, %v; want %d", got, err, n)
				}
				for _, dl := range e.deliveries(ep) {
					if dl.Status != checkout.DeliverySucceeded || dl.Attempts != 1 || len(e.attempts(dl)) != 1 {
						t.Errorf("delivery %s: %s, %d attempts, %d recorded; want succeeded once", dl.ID, dl.Status, dl.Attempts, len(e.attempts(dl)))
					}
				}
				if got := len(r.Requests()); got != n {
					t.Errorf("the receiver got %d requests; want %d", got, n)
				}
				if st := d.Stats(); st.AttemptsSucceeded != n || st.InFlight != 0 {
					t.Errorf("Stats = %+v", st)
				}
				// Ten attempts that end at once while the first record is
				// written (a commit) leave the others waiting: a batch.
				if failBatches && wrapped.failed.Load() == 0 {
					t.Errorf("no batch of records was written")
				}
			})
		})
	}
}

// recordFailingStore fails the writes of one delivery's record: alone, and
// any batch that holds it (one transaction, so the batch fails whole, as a
// real failing write would make it).
type recordFailingStore struct {
	webhook.Queue
	victim string
	off    atomic.Bool
}

func (s *recordFailingStore) DeliveryRecordAll(ctx context.Context, rs []store.AttemptRecord, next store.ClaimParams) ([]bool, []*store.Claim, error) {
	for _, r := range rs {
		if r.Delivery.ID == s.victim && !s.off.Load() {
			return nil, nil, errors.New("injected failure of one record")
		}
	}
	return s.Queue.DeliveryRecordAll(ctx, rs, next)
}

func (s *recordFailingStore) DeliveryRecord(ctx context.Context, owner string, a *checkout.Attempt, d *checkout.Delivery) (bool, error) {
	if d.ID == s.victim && !s.off.Load() {
		return false, errors.New("injected failure of one record")
	}
	return s.Queue.DeliveryRecord(ctx, owner, a, d)
}

// One delivery whose record cannot be written costs the others of its batch
// nothing: each is recorded once, succeeded. The one that failed keeps its
// lease, unrecorded, and is attempted again when the lease runs out (at
// least once), then recorded; no other is sent again.
func TestOneFailingRecordCostsOthersNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		const n = 10
		var arrived sync.WaitGroup
		arrived.Add(n)
		r.SetHandler(func(w http.ResponseWriter, _ *http.Request) {
			arrived.Done()
			arrived.Wait() // the ten attempts end together
		})
		ep := e.endpoint(r, checkout.ModeTest)
		for range n {
			e.createSession(checkout.ModeTest)
		}
		victim := e.deliveries(ep)[3].ID
		st := &recordFailingStore{Queue: db, victim: victim}
		const lease = time.Minute
		d := webhook.New(webhook.Config{
			Store: st, Now: e.clock.Now, PerEndpoint: n, Lease: lease, Logger: slog.New(slog.DiscardHandler),
			Client: webhook.NewClient(webhook.ClientConfig{Guard: e.guard, RootCAs: e.net.RootCAs(), Dial: e.net.Dial}),
		})
		if got, err := d.RunOnce(context.Background()); got != n || err != nil {
			t.Fatalf("RunOnce = %d, %v; want %d", got, err, n)
		}
		for _, dl := range e.deliveries(ep) {
			recorded := len(e.attempts(dl))
			switch {
			case dl.ID == victim && (dl.Status != checkout.DeliveryPending || dl.Attempts != 0 || recorded != 0):
				t.Errorf("the delivery whose record failed: %s, %d attempts, %d recorded; want pending, unrecorded", dl.Status, dl.Attempts, recorded)
			case dl.ID != victim && (dl.Status != checkout.DeliverySucceeded || dl.Attempts != 1 || recorded != 1):
				t.Errorf("delivery %s: %s, %d attempts, %d recorded; want succeeded once", dl.ID, dl.Status, dl.Attempts, recorded)
			}
		}

		// The lease runs out: the one unrecorded is sent again, and only it.
		st.off.Store(true)
		r.SetHandler(func(http.ResponseWriter, *http.Request) {}) // 200 at once
		e.clock.Advance(lease + time.Second)
		if got, err := d.RunOnce(context.Background()); got != 1 || err != nil {
			t.Fatalf("RunOnce after the lease = %d, %v; want 1", got, err)
		}
		perDelivery := map[string]int{}
		for _, req := range r.Requests() {
			perDelivery[req.Header.Get("Service-Delivery-Id")]++
		}
		for id, got := range perDelivery {
			if want := map[bool]int{true: 2, false: 1}[id == victim]; got != want {
				t.Errorf("delivery %s sent %d times; want %d", id, got, want)
			}
		}
		if got, _ := db.DeliveryGet(context.Background(), victim); got.Status != checkout.DeliverySucceeded || got.Attempts != 1 {
			t.Errorf("the delivery whose record failed, after its retry: %+v; want succeeded", got)
		}
	})
}

// countingStore counts the calls of DeliveryClaim, the deliveries they
// claimed and those claimed by DeliveryRecordAll (claim in record).
type countingStore struct {
	webhook.Queue
	calls, claimed, claimedInRecord atomic.Int64
	// checks counts the calls of DeliveryClaimable; checked, when set,
	// hears of each.
	checks  atomic.Int64
	checked chan bool
}

func (s *countingStore) DeliveryClaimable(ctx context.Context, now time.Time, perEndpoint int) (bool, error) {
	ok, err := s.Queue.DeliveryClaimable(ctx, now, perEndpoint)
	s.checks.Add(1)
	if s.checked != nil {
		s.checked <- ok
	}
	return ok, err
}

func (s *countingStore) DeliveryClaim(ctx context.Context, p store.ClaimParams) ([]*store.Claim, error) {
	cs, err := s.Queue.DeliveryClaim(ctx, p)
	s.claimed.Add(int64(len(cs)))
	s.calls.Add(1)
	return cs, err
}

func (s *countingStore) DeliveryRecordAll(ctx context.Context, rs []store.AttemptRecord, next store.ClaimParams) ([]bool, []*store.Claim, error) {
	updated, cs, err := s.Queue.DeliveryRecordAll(ctx, rs, next)
	s.claimedInRecord.Add(int64(len(cs)))
	return updated, cs, err
}

// A worker's record claims its next delivery in the same transaction, and
// the worker goes on with it: with a cap of one attempt at a time to the
// endpoint, the first delivery is claimed alone and each of the others by
// the record of the one before. Each is sent once, and never two at once.
func TestRecordClaimsTheNext(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		var inFlight, most atomic.Int64
		r.SetHandler(func(http.ResponseWriter, *http.Request) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		})
		ep := e.endpoint(r, checkout.ModeTest)
		const n = 6
		for range n {
			e.createSession(checkout.ModeTest)
		}
		st := &countingStore{Queue: db}
		d := webhook.New(webhook.Config{
			Store: st, Now: e.clock.Now, PerEndpoint: 1,
			Client: webhook.NewClient(webhook.ClientConfig{Guard: e.guard, RootCAs: e.net.RootCAs(), Dial: e.net.Dial}),
		})
		if got, err := d.RunOnce(context.Background()); got != n || err != nil {
			t.Fatalf("RunOnce = %d, %v; want %d", got, err, n)
		}
		if got, inRecord := st.claimed.Load(), st.claimedInRecord.Load(); got != 1 || inRecord != n-1 {
			t.Errorf("claimed %d alone and %d in records; want 1 and %d", got, inRecord, n-1)
		}
		if m := most.Load(); m != 1 {
			t.Errorf("%d attempts reached the endpoint at once; want 1 (its cap)", m)
		}
		perDelivery := map[string]int{}
		for _, req := range r.Requests() {
			perDelivery[req.Header.Get("Service-Delivery-Id")]++
		}
		for _, dl := range e.deliveries(ep) {
			if dl.Status != checkout.DeliverySucceeded || dl.Attempts != 1 || perDelivery[dl.ID] != 1 {
				t.Errorf("delivery %s: %s, %d attempts, sent %d times; want succeeded, sent once", dl.ID, dl.Status, dl.Attempts, perDelivery[dl.ID])
			}
		}
	})
}

// A worker whose dispatcher is stopping records its attempt and claims
// nothing more: the deliveries left stay due, unleased, for the next run.
func TestStoppingDispatcherClaimsNoMore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r.SetHandler(func(http.ResponseWriter, *http.Request) { cancel() })
		ep := e.endpoint(r, checkout.ModeTest)
		const n = 4
		for range n {
			e.createSession(checkout.ModeTest)
		}
		d := webhook.New(webhook.Config{
			Store: db, Now: e.clock.Now, PerEndpoint: 1, Logger: slog.New(slog.DiscardHandler),
			Client: webhook.NewClient(webhook.ClientConfig{Guard: e.guard, RootCAs: e.net.RootCAs(), Dial: e.net.Dial}),
		})
		if got, _ := d.RunOnce(ctx); got != 1 {
			t.Fatalf("RunOnce stopped during its first attempt = %d; want 1", got)
		}
		// No lease is left behind: at the same time, the other three are
		// due.
		r.SetHandler(func(http.ResponseWriter, *http.Request) {})
		if got, err := d.RunOnce(context.Background()); got != n-1 || err != nil {
			t.Fatalf("RunOnce after = %d, %v; want %d", got, err, n-1)
		}
		for _, dl := range e.deliveries(ep) {
			if dl.Status != checkout.DeliverySucceeded || dl.Attempts != 1 {
				t.Errorf("delivery %s: %s, %d attempts; want succeeded once", dl.ID, dl.Status, dl.Attempts)
			}
		}
	})
}

// A running dispatcher gets a new event's delivery from the transaction
// that created it (claim in create): the attempt starts with no claim of
// its own, and no wake-up (the dispatcher polls once an hour and nothing
// wakes it). It is sent once and recorded.
func TestNewDeliveryIsHandedToTheDispatcher(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, envOptions{poll: time.Hour})
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		st := &countingStore{Queue: db}
		d := webhook.New(webhook.Config{
			Store: st, Now: e.clock.Now, Poll: time.Hour,
			Client: webhook.NewClient(webhook.ClientConfig{Guard: e.guard, RootCAs: e.net.RootCAs(), Dial: e.net.Dial}),
		})
		db.SetClaimer(d)
		defer db.SetClaimer(nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		// Running: it has asked whether anything is due (nothing is), and
		// its workers are free.
		deadline := time.Now().Add(guard)
		for st.checks.Load() == 0 || d.Stats().Idle != 32 {
			if time.Now().After(deadline) {
				t.Fatal("the dispatcher did not look for deliveries due")
			}
			time.Sleep(time.Millisecond) // waiting for a condition, not for time
		}
		calls := st.calls.Load()
		e.createSession(checkout.ModeTest) // wakes e.disp, which is not running
		if _, ok := r.Next(guard); !ok {
			t.Fatal("the event was not delivered")
		}
		cancel()
		<-done
		if got := d.Stats().HandedOver; got != 1 {
			t.Errorf("handed over %d; want 1", got)
		}
		if n, claimed := st.calls.Load()-calls, st.claimed.Load(); n != 0 || claimed != 0 {
			t.Errorf("the dispatcher claimed %d times (%d deliveries) after the event; want none", n, claimed)
		}
		ds := e.deliveries(ep)
		if len(ds) != 1 || ds[0].Status != checkout.DeliverySucceeded || ds[0].Attempts != 1 || len(r.Requests()) != 1 {
			t.Errorf("deliveries %+v, %d requests; want one, succeeded at its first attempt, sent once", ds, len(r.Requests()))
		}
	})
}

// A wake-up with nothing due makes no claim: the dispatcher reads first
// whether a claim would find anything, and sets none of its workers aside
// for a claim that would not (they would be kept from the transactions
// that claim in create meanwhile). A wake-up with a delivery due claims it.
func TestWakeWithNothingDueClaimsNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, envOptions{poll: time.Hour})
		r := e.net.Receiver(t, "hooks.example.com")
		e.endpoint(r, checkout.ModeTest)
		st := &countingStore{Queue: db, checked: make(chan bool)}
		d := webhook.New(webhook.Config{
			Store: st, Now: e.clock.Now, Poll: time.Hour,
			Client: webhook.NewClient(webhook.ClientConfig{Guard: e.guard, RootCAs: e.net.RootCAs(), Dial: e.net.Dial}),
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		stop := func() { // the loop may be telling of a check
			cancel()
			for {
				select {
				case <-st.checked:
				case <-done:
					return
				}
			}
		}
		defer stop()
		check := func(want bool) {
			t.Helper()
			select {
			case got := <-st.checked:
				if got != want {
					t.Fatalf("DeliveryClaimable = %v; want %v", got, want)
				}
			case <-time.After(guard):
				t.Fatal("the dispatcher did not look for deliveries due")
			}
		}
		check(false) // at the start
		for range 3 {
			d.Wake()
			check(false)
		}
		if n := st.calls.Load(); n != 0 {
			t.Errorf("%d claims with nothing due; want none", n)
		}
		// Not handed over (the dispatcher is not the store's claimer): due,
		// and the wake-up claims it.
		e.createSession(checkout.ModeTest)
		d.Wake()
		check(true)
		if _, ok := r.Next(guard); !ok {
			t.Fatal("the event was not delivered")
		}
		if n, claimed := st.calls.Load(), st.claimed.Load(); n != 1 || claimed != 1 {
			t.Errorf("%d claims of %d deliveries; want one of one", n, claimed)
		}
		// Its worker, done, looks again and finds nothing.
		check(false)
	})
}
