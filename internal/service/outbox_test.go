package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// failingStore is a real store whose transactions fail at DeliveryInsert,
// as a database would that broke in the middle of a fan-out.
type failingStore struct{ checkout.Store }

func (s failingStore) InTx(ctx context.Context, fn func(checkout.Tx) error) error {
	return s.Store.InTx(ctx, func(tx checkout.Tx) error { return fn(failingTx{tx}) })
}

type failingTx struct{ checkout.Tx }

var errBroken = errors.New("the database broke during the fan-out")

func (failingTx) DeliveryInsert(context.Context, *checkout.Delivery) error { return errBroken }

// The transactional outbox: a state change, the event it emits and the
// event's deliveries are written in one transaction, so when the delivery
// cannot be written neither can the change nor the event (a session is
// never open, or expired, without its event), and when all three are
// written the delivery is there with the event.
func TestEventsAreWrittenWithTheirChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: f.m.ID, Mode: checkout.ModeTest,
			URL: "https://hooks.example.com/", Events: []string{checkout.AllEvents}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.EndpointInsert(ctx, ep) }); err != nil {
			t.Fatal(err)
		}
		broken := service.New(service.Config{Store: failingStore{db}, Now: f.clock.Now, CheckoutBaseURL: "https://pay.example"})
		p, _ := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))

		// Create: no session, no event.
		if _, err := broken.CreateSession(ctx, service.CreateSessionParams{Key: f.key, StoreID: f.m.ID, Params: p}); !errors.Is(err, errBroken) {
			t.Fatalf("CreateSession with the fan-out failing = %v; want it to fail", err)
		}
		if due, _ := db.SessionListDue(ctx, t0.Add(2*time.Hour), 10); len(due) != 0 {
			t.Errorf("a session was stored without its checkout.created: %d", len(due))
		}
		if es := f.events(t, ""); len(es) != 0 {
			t.Errorf("%d events stored by a failed create; want none", len(es))
		}

		// Create for real: the session, its event and the delivery.
		s := f.create(t)
		created := f.events(t, checkout.EventCheckoutCreated)
		ds, _ := db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: ep.ID})
		if len(created) != 1 || len(ds) != 1 || ds[0].EventID != created[0].ID {
			t.Fatalf("after create: %d events, %d deliveries; want one of each, for each other", len(created), len(ds))
		}

		// Expire: the session stays open with no checkout.expired.
		f.clock.Advance(time.Hour)
		if _, err := broken.ExpireAll(ctx); !errors.Is(err, errBroken) {
			t.Fatalf("ExpireAll with the fan-out failing = %v; want it to fail", err)
		}
		if got, _ := db.SessionGet(ctx, s.ID); got.Status != checkout.StatusOpen {
			t.Errorf("session = %s after a failed expiry; want open", got.Status)
		}
		if es := f.events(t, checkout.EventCheckoutExpired); len(es) != 0 {
			t.Errorf("%d checkout.expired stored by a failed expiry; want none", len(es))
		}
		if n, err := f.svc.ExpireAll(ctx); err != nil || n != 1 {
			t.Fatalf("ExpireAll = %d, %v; want 1", n, err)
		}
		expired := f.events(t, checkout.EventCheckoutExpired)
		ds, _ = db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: ep.ID})
		if len(expired) != 1 || len(ds) != 2 || ds[0].EventID != expired[0].ID {
			t.Errorf("after expiry: %d checkout.expired, %d deliveries; want 1 and 2, the newest for it", len(expired), len(ds))
		}
	})
}
