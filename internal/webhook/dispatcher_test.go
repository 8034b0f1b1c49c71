package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook"
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
		if sig := req.Header.Get("Service-Webhook-Signature"); !verify(sig, req.Body, ep.Secret, e.clock.Now()) {
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
		e := newEnv(t, db, envOptions{timeout: 300 * time.Millisecond})
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
			{"302 redirect", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://elsewhere.example.com/x", http.StatusFound)
			}, false, 302},
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
			e.runOnce()
			if _, _, err := e.svc.SetEndpointEnabled(context.Background(), ep.ID, false); err != nil {
				t.Fatal(err)
			}
			ds := e.deliveries(ep)
			a := e.attempts(ds[0])[0]
			if a.Succeeded() != c.ok || a.StatusCode != c.status || (a.Error == "") != c.ok || len(a.ResponseBody) > checkout.MaxAttemptResponse {
				t.Errorf("%s: attempt = %+v; want ok=%t status %d", c.name, a, c.ok, c.status)
			}
		}
		if n := len(elsewhere.Requests()); n != 0 {
			t.Errorf("the redirect was followed: %d requests reached its target", n)
		}
	})
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
		if n := e.runOnce(); n != 2 {
			t.Fatalf("RunOnce = %d; want 2 (the retry and the resend)", n)
		}
		reqs := r.Requests()
		for _, req := range reqs[2:] {
			sig := req.Header.Get("Service-Webhook-Signature")
			if !verify(sig, req.Body, rolled.Secret, e.clock.Now()) || verify(sig, req.Body, ep.Secret, e.clock.Now()) {
				t.Errorf("after the roll, %s is not signed with the new secret alone", req.Header.Get("Service-Delivery-Id"))
			}
		}
		got := e.deliveries(ep)
		if got[0].ID != resent.ID || got[0].Status != checkout.DeliverySucceeded || e.attempts(got[0])[0].Number != 1 {
			t.Errorf("resent delivery = %+v", got[0])
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
		checkEventSchema(t, a.Requests()[0].Body)
		json.Unmarshal(a.Requests()[0].Body, &evt)
		if evt.Type != "webhook.test" || evt.Data.Object["object"] != "webhook_test" || evt.Data.Object["endpoint_id"] != epA.ID {
			t.Errorf("test event = %s", a.Requests()[0].Body)
		}
	})
}

func TestModeIsolationAndSubscriptions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		test := e.net.Receiver(t, "test.example.com")
		live := e.net.Receiver(t, "live.example.com")
		expiredOnly := e.net.Receiver(t, "expired.example.com")
		e.endpoint(test, checkout.ModeTest)
		e.endpoint(live, checkout.ModeLive)
		e.endpoint(expiredOnly, checkout.ModeTest, checkout.EventCheckoutExpired)
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
			t.Errorf("after expiry expired-only/test/live got %d/%d/%d; want 1/2/2", len(expiredOnly.Requests()), len(test.Requests()), len(live.Requests()))
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
		claims, err := db.DeliveryClaim(context.Background(), checkout.ClaimParams{
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
			if _, ok := slow.Next(10 * time.Second); !ok {
				t.Fatal("the slow endpoint got no request")
			}
		}
		// An event for another endpoint goes out while the slow one hangs.
		epFast := e.endpoint(fast, checkout.ModeTest)
		if _, _, err := e.svc.SendTestEvent(context.Background(), epFast.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := fast.Next(10 * time.Second); !ok {
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
		if _, ok := r.Next(10 * time.Second); !ok {
			t.Fatal("the event was not delivered: the dispatcher was not woken")
		}
	})
}

func TestPurgeAfterRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		r := e.net.Receiver(t, "hooks.example.com")
		ep := e.endpoint(r, checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		e.runOnce()
		old := e.deliveries(ep)[0]
		e.clock.Advance(checkout.Retention - time.Second)
		e.createSession(checkout.ModeTest)
		e.runOnce()
		e.clock.Advance(2 * time.Second)
		res, err := e.svc.Purge(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Events != 1 {
			t.Errorf("purged %d events; want 1", res.Events)
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
		if ds := e.deliveries(ep); len(ds) != 1 {
			t.Errorf("%d deliveries left; want the recent one", len(ds))
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
		if _, ok := r.Next(10 * time.Second); !ok {
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
		if d.Status != checkout.DeliveryCanceled {
			t.Errorf("delivery = %s; want canceled", d.Status)
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
		other := e.endpoint(e.net.Receiver(t, "other.example.com"), checkout.ModeTest)
		e.createSession(checkout.ModeTest)
		done := make(chan int)
		go func() { n, _ := e.disp.RunOnce(ctx); done <- n }()
		if _, ok := r.Next(10 * time.Second); !ok {
			t.Fatal("no attempt started")
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
