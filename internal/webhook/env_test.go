package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/webhook"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// guard bounds how long a test waits for something that happens as soon as
// the machine gets to it (a request reaching a receiver); it is never what a
// test waits for, so it is generous enough for a loaded machine.
const guard = time.Minute

// env is a service and a dispatcher on a real database, delivering over
// real HTTPS to receivers of a fake internet, with a fake clock.
type env struct {
	t     *testing.T
	db    *store.DB
	clock *clock.Fake
	net   *webhooktest.Network
	guard *webhook.Guard
	svc   *service.Service
	disp  *webhook.Dispatcher
	store *checkout.Merchant
	keys  map[checkout.Mode]*checkout.APIKey
	woken chan struct{}
}

type envOptions struct {
	timeout     time.Duration
	workers     int
	perEndpoint int
	poll        time.Duration
	// now is the dispatcher's clock; the env's when nil.
	now clock.Func
}

func newEnv(t *testing.T, db *store.DB, opts ...envOptions) *env {
	t.Helper()
	var o envOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	e := &env{t: t, db: db, clock: clock.NewFake(t0), net: webhooktest.NewNetwork(t), keys: map[checkout.Mode]*checkout.APIKey{}, woken: make(chan struct{}, 100)}
	e.guard = &webhook.Guard{Resolver: e.net}
	e.disp = e.newDispatcher(o)
	e.svc = service.New(service.Config{
		Store: db, Now: e.clock.Now, CheckoutBaseURL: "https://pay.example.test", URLs: e.guard,
		Processors: pay.Registry{Test: pay.Simulators()},
		Notify: func() {
			e.disp.Wake()
			select {
			case e.woken <- struct{}{}:
			default:
			}
		},
	})
	ctx := context.Background()
	m, err := e.svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme Games", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	e.store = m
	for _, mode := range []checkout.Mode{checkout.ModeTest, checkout.ModeLive} {
		k, _, err := e.svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: mode, Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		e.keys[mode] = k
	}
	return e
}

// newDispatcher returns a dispatcher on the env's database, network and
// clock: another node.
func (e *env) newDispatcher(o envOptions) *webhook.Dispatcher {
	now := o.now
	if now == nil {
		now = e.clock.Now
	}
	return webhook.New(webhook.Config{
		Store:       e.db,
		Client:      webhook.NewClient(webhook.ClientConfig{Guard: e.guard, RootCAs: e.net.RootCAs(), Dial: e.net.Dial, Timeout: o.timeout}),
		Now:         now,
		Workers:     o.workers,
		PerEndpoint: o.perEndpoint,
		Poll:        o.poll,
	})
}

// endpoint registers r's URL for the env's store.
func (e *env) endpoint(r *webhooktest.Receiver, mode checkout.Mode, events ...string) *checkout.Endpoint {
	e.t.Helper()
	if len(events) == 0 {
		events = []string{checkout.AllEvents}
	}
	ep, err := e.svc.CreateEndpoint(context.Background(), checkout.EndpointParams{MerchantID: e.store.ID, Mode: mode, URL: r.URL, Events: events})
	if err != nil {
		e.t.Fatalf("CreateEndpoint(%s) = %v", r.URL, err)
	}
	return ep
}

// createSession creates a session in mode, which emits checkout.created.
func (e *env) createSession(mode checkout.Mode) string {
	e.t.Helper()
	p, err := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := e.svc.CreateSession(context.Background(), service.CreateSessionParams{Key: e.keys[mode], StoreID: e.store.ID, Params: p})
	if err != nil {
		e.t.Fatal(err)
	}
	var s struct{ ID string }
	json.Unmarshal(res.Data, &s)
	return s.ID
}

func (e *env) runOnce() int {
	e.t.Helper()
	n, err := e.disp.RunOnce(context.Background())
	if err != nil {
		e.t.Fatalf("RunOnce: %v", err)
	}
	return n
}

// deliveries returns an endpoint's deliveries, newest first.
func (e *env) deliveries(ep *checkout.Endpoint) []*checkout.Delivery {
	e.t.Helper()
	ds, err := e.db.DeliveryList(context.Background(), checkout.DeliveryListParams{EndpointID: ep.ID})
	if err != nil {
		e.t.Fatal(err)
	}
	return ds
}

func (e *env) attempts(d *checkout.Delivery) []*checkout.Attempt {
	e.t.Helper()
	as, err := e.db.AttemptList(context.Background(), d.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return as
}
