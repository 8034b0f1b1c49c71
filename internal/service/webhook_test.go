package service_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// fakeURLs stands for the webhook guard (tested with real resolvers in
// internal/webhook): it lower-cases what it accepts and refuses any host
// under private.example.
type fakeURLs struct{}

func (fakeURLs) CheckURL(_ context.Context, raw string) (string, error) {
	if !strings.HasPrefix(raw, "https://") || strings.Contains(raw, "private.example") {
		return "", &checkout.Error{Code: checkout.EValidationFailed, Message: "url resolves to a private address.", Param: "url"}
	}
	return strings.ToLower(raw), nil
}

// hooks is a fixture whose service checks URLs, with an endpoint of the
// fixture's store in test mode.
type hooks struct {
	*fixture
	ep    *checkout.Endpoint
	scope checkout.Scope
}

func newHooks(t *testing.T, db *store.DB) *hooks {
	t.Helper()
	f := newFixture(t, db)
	f.svc = service.New(service.Config{Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, CheckoutBaseURL: "https://pay.example", URLs: fakeURLs{}})
	h := &hooks{fixture: f, scope: checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}}
	h.ep = h.endpoint(t, checkout.ModeTest)
	return h
}

func (h *hooks) endpoint(t *testing.T, mode checkout.Mode) *checkout.Endpoint {
	t.Helper()
	ep, err := h.svc.CreateEndpoint(context.Background(), checkout.EndpointParams{MerchantID: h.m.ID, Mode: mode,
		URL: "https://hooks.example.com/in", Events: []string{checkout.AllEvents}, Description: "Orders"})
	if err != nil {
		t.Fatalf("CreateEndpoint = %v", err)
	}
	return ep
}

// history stores n deliveries of new events to ep in status, created a
// second apart from created on.
func (h *hooks) history(t *testing.T, ep *checkout.Endpoint, status checkout.DeliveryStatus, created time.Time, n int) []*checkout.Delivery {
	t.Helper()
	var ds []*checkout.Delivery
	err := h.db.InTx(context.Background(), func(tx checkout.Tx) error {
		for i := range n {
			at := created.Add(time.Duration(i) * time.Second)
			e, err := checkout.NewEvent(checkout.EventCheckoutCreated, ep.MerchantID, ep.Mode, map[string]string{"n": "1"}, at)
			if err != nil {
				return err
			}
			d := checkout.NewDelivery(e, ep, at)
			d.Status, d.Attempts = status, 8
			if err := tx.EventInsert(context.Background(), e); err != nil {
				return err
			}
			if err := tx.DeliveryInsert(context.Background(), d); err != nil {
				return err
			}
			ds = append(ds, d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Every operation the dashboard calls with an id answers an endpoint or a
// delivery of another store, or of the other mode, as it answers an id
// that does not exist (same code, same message), and changes nothing.
func TestWebhookOperationsStayInTheirScope(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		h := newHooks(t, db)
		d := h.history(t, h.ep, checkout.DeliveryFailed, t0, 1)[0]
		other, err := h.svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Other", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		before, _ := db.EndpointGet(ctx, h.ep.ID)
		missingEp, missingD := checkout.NewID(checkout.PrefixEndpoint, 16), checkout.NewID(checkout.PrefixDelivery, 16)
		desc := "mine now"
		endpointOps := map[string]func(scope checkout.Scope, id string) error{
			"EndpointIn": func(sc checkout.Scope, id string) error { _, err := h.svc.EndpointIn(ctx, sc, id); return err },
			"UpdateEndpoint": func(sc checkout.Scope, id string) error {
				_, err := h.svc.UpdateEndpoint(ctx, sc, id, checkout.EndpointUpdate{Description: &desc})
				return err
			},
			"SetEndpointEnabledIn": func(sc checkout.Scope, id string) error {
				_, _, err := h.svc.SetEndpointEnabledIn(ctx, sc, id, false)
				return err
			},
			"RollEndpointSecretIn": func(sc checkout.Scope, id string) error {
				_, err := h.svc.RollEndpointSecretIn(ctx, sc, id, time.Hour)
				return err
			},
			"SendTestEventIn": func(sc checkout.Scope, id string) error { _, _, err := h.svc.SendTestEventIn(ctx, sc, id); return err },
			"EndpointHealth":  func(sc checkout.Scope, id string) error { _, err := h.svc.EndpointHealth(ctx, sc, id); return err },
			"RetryFailed": func(sc checkout.Scope, id string) error {
				_, err := h.svc.RetryFailed(ctx, sc, id, time.Time{})
				return err
			},
			"DeliveriesIn": func(sc checkout.Scope, id string) error {
				_, err := h.svc.DeliveriesIn(ctx, sc, checkout.DeliveryFilter{EndpointID: id})
				return err
			},
			"DeleteEndpointIn": func(sc checkout.Scope, id string) error { return h.svc.DeleteEndpointIn(ctx, sc, id) },
		}
		deliveryOps := map[string]func(scope checkout.Scope, id string) error{
			"DeliveryIn": func(sc checkout.Scope, id string) error { _, _, err := h.svc.DeliveryIn(ctx, sc, id); return err },
			"ResendIn":   func(sc checkout.Scope, id string) error { _, err := h.svc.ResendIn(ctx, sc, id); return err },
		}
		outside := []checkout.Scope{
			{MerchantID: other.ID, Mode: checkout.ModeTest},
			{MerchantID: h.m.ID, Mode: checkout.ModeLive},
			{MerchantID: other.ID, Mode: checkout.ModeLive},
		}
		check := func(ops map[string]func(checkout.Scope, string) error, id, missing string) {
			for name, op := range ops {
				want := op(h.scope, missing)
				if !checkout.IsCode(want, checkout.ENotFound) {
					t.Fatalf("%s(missing id) = %v; want not_found", name, want)
				}
				for _, sc := range outside {
					got := op(sc, id)
					if !checkout.IsCode(got, checkout.ENotFound) ||
						checkout.ErrorMessage(got) != strings.ReplaceAll(checkout.ErrorMessage(want), missing, id) {
						t.Errorf("%s(%+v, an id outside) = %v; want %v, as for a missing id", name, sc, got, want)
					}
				}
			}
		}
		check(endpointOps, h.ep.ID, missingEp)
		check(deliveryOps, d.ID, missingD)
		after, err := db.EndpointGet(ctx, h.ep.ID)
		if err != nil || !sameEndpoint(after, before) {
			t.Errorf("the endpoint after calls from outside its scope = %+v, %v; want it unchanged %+v", after, err, before)
		}
		if ds, _ := db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: h.ep.ID}); len(ds) != 1 || ds[0].ResentAs != "" {
			t.Errorf("deliveries after calls from outside the scope = %+v; want the one, not resent", ds)
		}
		// Inside the scope they work.
		for name, op := range endpointOps {
			if name == "DeleteEndpointIn" || name == "RetryFailed" {
				continue
			}
			if err := op(h.scope, h.ep.ID); err != nil && name != "SendTestEventIn" {
				t.Errorf("%s(its scope) = %v", name, err)
			}
		}
		if err := h.svc.DeleteEndpointIn(ctx, h.scope, h.ep.ID); err != nil {
			t.Errorf("DeleteEndpointIn(its scope) = %v", err)
		}
		if _, err := db.EndpointGet(ctx, h.ep.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("endpoint after DeleteEndpointIn = %v; want gone", err)
		}
	})
}

// An edit is checked as a creation is: every rule that needs no network
// first, all reported at once, then the URL by the guard; a refused edit
// changes nothing. A field left nil stays.
func TestUpdateEndpoint(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		h := newHooks(t, db)
		h.clock.Advance(time.Hour)
		long := strings.Repeat("x", checkout.MaxEndpointDescriptionLen+1)
		for _, c := range []struct {
			u     checkout.EndpointUpdate
			param string
		}{
			{checkout.EndpointUpdate{Events: []string{"checkout.nope"}}, "events"},
			{checkout.EndpointUpdate{Events: []string{}}, "events"},
			{checkout.EndpointUpdate{Description: &long}, "description"},
			{checkout.EndpointUpdate{URL: ptr("https://hooks.private.example/x")}, "url"},
			{checkout.EndpointUpdate{URL: ptr("http://hooks.example.com/x")}, "url"},
			// The rules without network come first: no lookup for a URL
			// when the events are wrong.
			{checkout.EndpointUpdate{URL: ptr("https://hooks.private.example/x"), Events: []string{"x"}}, "events"},
		} {
			_, err := h.svc.UpdateEndpoint(ctx, h.scope, h.ep.ID, c.u)
			var ce *checkout.Error
			if !checkout.IsCode(err, checkout.EValidationFailed) || !asError(err, &ce) || ce.Param != c.param {
				t.Errorf("UpdateEndpoint(%+v) = %v; want validation_failed on %s", c.u, err, c.param)
			}
			// The same input refused at creation, for the same reason.
			p := checkout.EndpointParams{MerchantID: h.m.ID, Mode: checkout.ModeTest, URL: "https://hooks.example.com/", Events: []string{checkout.AllEvents}}
			if c.u.URL != nil {
				p.URL = *c.u.URL
			}
			if c.u.Events != nil {
				p.Events = c.u.Events
			}
			if c.u.Description != nil {
				p.Description = *c.u.Description
			}
			if _, cerr := h.svc.CreateEndpoint(ctx, p); checkout.ErrorMessage(cerr) != checkout.ErrorMessage(err) {
				t.Errorf("CreateEndpoint refuses %+v with %v; UpdateEndpoint with %v; want the same", c.u, cerr, err)
			}
		}
		if got, _ := db.EndpointGet(ctx, h.ep.ID); !sameEndpoint(got, h.ep) {
			t.Errorf("after refused edits: %+v; want unchanged %+v", got, h.ep)
		}

		ep, err := h.svc.UpdateEndpoint(ctx, h.scope, h.ep.ID, checkout.EndpointUpdate{
			URL: ptr("https://NEW.example.com/Hook"), Events: []string{checkout.EventPaymentRefunded, checkout.EventCheckoutCompleted}, Description: ptr("  Fulfilment  ")})
		if err != nil || ep.URL != "https://new.example.com/hook" || ep.Description != "Fulfilment" || len(ep.Events) != 2 ||
			!ep.UpdatedAt.Equal(t0.Add(time.Hour)) || ep.Secret != h.ep.Secret || !ep.Enabled {
			t.Fatalf("UpdateEndpoint = %+v, %v; want the checked URL, the events, the trimmed description, the same secret", ep, err)
		}
		if got, _ := db.EndpointGet(ctx, h.ep.ID); !sameEndpoint(got, ep) {
			t.Errorf("stored %+v; want %+v", got, ep)
		}
		ep, err = h.svc.UpdateEndpoint(ctx, h.scope, h.ep.ID, checkout.EndpointUpdate{Events: []string{"all"}})
		if err == nil {
			t.Errorf("events [all] (the CLI's word, not parsed) = %+v; want refused", ep)
		}
		ep, err = h.svc.UpdateEndpoint(ctx, h.scope, h.ep.ID, checkout.EndpointUpdate{Events: checkout.ParseEvents("all")})
		if err != nil || !ep.SubscribesAll() || ep.URL != "https://new.example.com/hook" || ep.Description != "Fulfilment" {
			t.Errorf("UpdateEndpoint(events all) = %+v, %v; want all, the rest kept", ep, err)
		}
	})
}

func asError(err error, target **checkout.Error) bool { return errors.As(err, target) }

// sameEndpoint compares endpoints field by field, times by the instant
// (the store reads them in the local zone).
func sameEndpoint(a, b *checkout.Endpoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	for _, e := range []*checkout.Endpoint{&x, &y} {
		e.CreatedAt, e.UpdatedAt, e.PreviousSecretExpiresAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC(), e.PreviousSecretExpiresAt.UTC()
	}
	return reflect.DeepEqual(x, y)
}

func ptr[T any](v T) *T { return &v }

// A roll keeps the old secret for the overlap asked, 24 hours at most; the
// default (RollEndpointSecret) keeps none.
func TestRollEndpointSecretIn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		h := newHooks(t, db)
		if _, err := h.svc.RollEndpointSecretIn(ctx, h.scope, h.ep.ID, 25*time.Hour); !checkout.IsCode(err, checkout.EValidationFailed) ||
			!strings.Contains(checkout.ErrorMessage(err), "24 hours") {
			t.Errorf("RollEndpointSecretIn(25h) = %v; want validation_failed saying 24 hours", err)
		}
		if got, _ := db.EndpointGet(ctx, h.ep.ID); got.Secret != h.ep.Secret {
			t.Error("a refused roll changed the secret")
		}
		ep, err := h.svc.RollEndpointSecretIn(ctx, h.scope, h.ep.ID, 24*time.Hour)
		if err != nil || ep.PreviousSecret != h.ep.Secret || !ep.PreviousSecretExpiresAt.Equal(t0.Add(24*time.Hour)) {
			t.Fatalf("RollEndpointSecretIn(24h) = %+v, %v; want the old secret kept 24 h", ep, err)
		}
		if got, _ := db.EndpointGet(ctx, h.ep.ID); !sameEndpoint(got, ep) {
			t.Errorf("stored %+v; want %+v", got, ep)
		}
		ep, err = h.svc.RollEndpointSecret(ctx, h.ep.ID)
		if err != nil || ep.PreviousSecret != "" || len(ep.SigningSecrets(t0)) != 1 {
			t.Errorf("RollEndpointSecret during an overlap = %+v, %v; want every old secret invalid at once", ep, err)
		}
	})
}

// The list is the scope's, whatever the filter says; a bad filter is
// validation_failed.
func TestDeliveriesIn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		h := newHooks(t, db)
		live := h.endpoint(t, checkout.ModeLive)
		mine := h.history(t, h.ep, checkout.DeliverySucceeded, t0, 3)
		h.history(t, live, checkout.DeliverySucceeded, t0, 2)
		page, err := h.svc.DeliveriesIn(ctx, h.scope, checkout.DeliveryFilter{MerchantID: "another", Mode: checkout.ModeLive, Limit: 2})
		if err != nil || len(page.Items) != 2 || page.Items[0].ID != mine[2].ID || page.Next == "" {
			t.Fatalf("DeliveriesIn = %+v, %v; want the scope's newest 2 and a next page", page, err)
		}
		after, _ := checkout.ParseCursor(page.Next)
		page, err = h.svc.DeliveriesIn(ctx, h.scope, checkout.DeliveryFilter{After: after})
		if err != nil || len(page.Items) != 1 || page.Items[0].ID != mine[0].ID || page.Next != "" {
			t.Errorf("the next page = %+v, %v; want the oldest, and no next", page, err)
		}
		for _, f := range []checkout.DeliveryFilter{{Status: "ok"}, {EventType: "nope"}, {Limit: 1000}, {From: t0, To: t0}} {
			if _, err := h.svc.DeliveriesIn(ctx, h.scope, f); !checkout.IsCode(err, checkout.EValidationFailed) {
				t.Errorf("DeliveriesIn(%+v) = %v; want validation_failed", f, err)
			}
		}
		d, as, err := h.svc.DeliveryIn(ctx, h.scope, mine[0].ID)
		if err != nil || d.ID != mine[0].ID || len(as) != 0 {
			t.Errorf("DeliveryIn = %+v, %v, %v", d, as, err)
		}
	})
}

// Retry all failed resends the endpoint's failed deliveries since the
// date, 1,000 a call, saying whether more remain; a delivery resent once
// (by it or by Resend) is never resent by it again, even by calls at the
// same moment; a disabled endpoint is refused.
func TestRetryFailed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		h := newHooks(t, db)
		old := h.history(t, h.ep, checkout.DeliveryFailed, t0.Add(-48*time.Hour), 3)
		failed := h.history(t, h.ep, checkout.DeliveryFailed, t0, checkout.MaxRetryFailed+4)
		h.history(t, h.ep, checkout.DeliverySucceeded, t0, 2)
		h.history(t, h.ep, checkout.DeliveryCanceled, t0, 2)
		h.clock.Advance(time.Minute)
		byHand, err := h.svc.ResendIn(ctx, h.scope, failed[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := db.DeliveryGet(ctx, failed[0].ID); got.ResentAs != byHand.ID {
			t.Errorf("after Resend, resent_as = %q; want %s", got.ResentAs, byHand.ID)
		}

		res, err := h.svc.RetryFailed(ctx, h.scope, h.ep.ID, t0)
		if err != nil || res.Queued != checkout.MaxRetryFailed || !res.More {
			t.Fatalf("RetryFailed = %+v, %v; want %d queued and more", res, err, checkout.MaxRetryFailed)
		}
		// Two calls at once share the rest: each delivery resent once.
		var wg sync.WaitGroup
		results := make([]*service.RetryFailedResult, 2)
		for i := range results {
			wg.Go(func() {
				var err error
				if results[i], err = h.svc.RetryFailed(ctx, h.scope, h.ep.ID, t0); err != nil {
					t.Errorf("RetryFailed at once: %v", err)
				}
			})
		}
		wg.Wait()
		if results[0] == nil || results[1] == nil || results[0].Queued+results[1].Queued != 3 || results[0].More || results[1].More {
			t.Fatalf("two calls at once = %+v, %+v; want 3 queued between them, none left", results[0], results[1])
		}
		if res, err := h.svc.RetryFailed(ctx, h.scope, h.ep.ID, t0); err != nil || res.Queued != 0 || res.More {
			t.Errorf("RetryFailed again = %+v, %v; want nothing to do", res, err)
		}
		// Every failed delivery since t0 was resent exactly once; the
		// older ones not at all.
		resends := map[string]int{}
		page := checkout.Page[*checkout.Delivery]{}
		f := checkout.DeliveryFilter{EndpointID: h.ep.ID, Status: checkout.DeliveryPending, Limit: 100}
		for {
			if page, err = h.svc.DeliveriesIn(ctx, h.scope, f); err != nil {
				t.Fatal(err)
			}
			for _, d := range page.Items {
				resends[d.EventID]++
				if d.Attempts != 0 || !d.NextAttemptAt.Equal(t0.Add(time.Minute)) || d.EventType != checkout.EventCheckoutCreated {
					t.Fatalf("a resend = %+v; want a new delivery due now", d)
				}
			}
			if page.Next == "" {
				break
			}
			f.After, _ = checkout.ParseCursor(page.Next)
		}
		if len(resends) != len(failed) {
			t.Errorf("%d events resent; want %d", len(resends), len(failed))
		}
		for _, d := range failed {
			if resends[d.EventID] != 1 {
				t.Fatalf("event %s resent %d times; want once", d.EventID, resends[d.EventID])
			}
		}
		for _, d := range old {
			if got, _ := db.DeliveryGet(ctx, d.ID); got.ResentAs != "" || resends[d.EventID] != 0 {
				t.Errorf("a failed delivery from before the date was resent: %+v", got)
			}
		}
		if res, err := h.svc.RetryFailed(ctx, h.scope, h.ep.ID, time.Time{}); err != nil || res.Queued != 3 {
			t.Errorf("RetryFailed since the start = %+v, %v; want the 3 older ones", res, err)
		}

		if _, _, err := h.svc.SetEndpointEnabledIn(ctx, h.scope, h.ep.ID, false); err != nil {
			t.Fatal(err)
		}
		if _, err := h.svc.RetryFailed(ctx, h.scope, h.ep.ID, t0); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("RetryFailed of a disabled endpoint = %v; want validation_failed", err)
		}
	})
}
