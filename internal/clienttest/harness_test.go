package clienttest_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/client"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/webhook"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// harness is a real checkoutd (internal/app, as serve builds it) on a real
// database behind httptest, with one store, its test-mode keys and a fake
// internet its webhooks are delivered to.
type harness struct {
	t        testing.TB
	db       *store.DB
	app      *app.App
	url      string
	merchant *checkout.Merchant
	// write and read are the secrets of test-mode keys with
	// checkouts:write and checkouts:read.
	write, read string
	net         *webhooktest.Network
}

func newHarness(t testing.TB, db *store.DB, opts ...func(*app.Config)) *harness {
	t.Helper()
	h := &harness{t: t, db: db, net: webhooktest.NewNetwork(t)}
	cfg := app.Config{
		Store:           db,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		CheckoutBaseURL: "https://pay.example.test",
		BaseURL:         "http://api.example.test",
		Processors:      pay.Registry{Test: pay.Simulators()},
		Guard:           &webhook.Guard{Resolver: h.net},
		RootCAs:         h.net.RootCAs(),
		WebhookDial:     h.net.Dial,
	}
	for _, o := range opts {
		o(&cfg)
	}
	h.app = app.New(cfg)
	t.Cleanup(h.app.Close)
	srv := httptest.NewServer(h.app.Handler)
	t.Cleanup(srv.Close)
	h.url = srv.URL

	ctx := context.Background()
	m, err := h.app.Service.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme Games", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	h.merchant = m
	h.write = h.key(checkout.ModeTest, checkout.PermCheckoutsWrite)
	h.read = h.key(checkout.ModeTest, checkout.PermCheckoutsRead)
	return h
}

func (h *harness) key(mode checkout.Mode, perm checkout.Permission) string {
	h.t.Helper()
	_, secret, err := h.app.Service.CreateAPIKey(context.Background(), checkout.APIKeyParams{
		MerchantID: h.merchant.ID, Mode: mode, Type: checkout.KeyBearer, Permissions: []checkout.Permission{perm}})
	if err != nil {
		h.t.Fatal(err)
	}
	return secret
}

// client returns a client of the harness's store with the write key. It
// waits between attempts as a merchant's does (no hook of the client's
// replaces its wait from outside its package): the tests that retry keep
// the waits short with faults that say Retry-After: 0, and the client's own
// tests (client/retry_test.go) check what it waits.
func (h *harness) client(opts ...client.Option) *client.Client {
	return client.New(h.url, h.merchant.ID, append([]client.Option{client.WithBearer(h.write)}, opts...)...)
}

// created counts the store's checkout.created events: one per session
// created, in the session's transaction.
func (h *harness) created() int {
	h.t.Helper()
	es, err := h.db.EventList(context.Background(), checkout.EventListParams{MerchantID: h.merchant.ID, Mode: checkout.ModeTest, Type: client.EventCheckoutCreated})
	if err != nil {
		h.t.Fatal(err)
	}
	return len(es)
}

// transport is a RoundTripper of a function: the fault-injecting proxies of
// the tests.
type transport func(*http.Request) (*http.Response, error)

func (f transport) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func sword() client.CreateParams {
	return client.CreateParams{Items: []client.ItemParams{{Name: "Sword", Amount: 1500}}}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
