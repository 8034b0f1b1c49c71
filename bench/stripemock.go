package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/checkoutd/checkoutd/internal/stripemock"
)

// stripe-mock is Stripe's own mock of its API (package
// internal/stripemock builds and runs it). It is what a new user would hold
// checkoutd against, so the bench measures it beside bare, under the same
// load.
const (
	stripeMockModule  = stripemock.Module
	stripeMockVersion = stripemock.Version
)

// stripeMockCreateBody is createBody in Stripe's terms: a payment-mode
// checkout session with the same two items (one with an image), the
// customer's email, the same metadata and both URLs. Stripe has no session
// title or customer name at creation; the order number goes in
// client_reference_id.
var stripeMockCreateBody = url.Values{
	"mode":                                   {"payment"},
	"currency":                               {"usd"},
	"client_reference_id":                    {"1042"},
	"customer_email":                         {"buyer@example.com"},
	"metadata[order_id]":                     {"1042"},
	"metadata[cart]":                         {"c_9f2"},
	"success_url":                            {"https://shop.example.com/thanks"},
	"cancel_url":                             {"https://shop.example.com/cart"},
	"line_items[0][price_data][currency]":    {"usd"},
	"line_items[0][price_data][unit_amount]": {"1500"},
	"line_items[0][price_data][product_data][name]":      {"AK-47 | Redline (Field-Tested)"},
	"line_items[0][price_data][product_data][images][0]": {"https://cdn.example.com/items/ak47-redline.png"},
	"line_items[0][quantity]":                            {"2"},
	"line_items[1][price_data][currency]":                {"usd"},
	"line_items[1][price_data][unit_amount]":             {"300"},
	"line_items[1][price_data][product_data][name]":      {"Gift wrap"},
	"line_items[1][quantity]":                            {"1"},
}.Encode()

// startStripeMock runs stripe-mock (cfg.stripeMock, or the binary built
// into the cache) on loopback ports of the system's choosing and waits until
// it answers. When it cannot be built or started, the target is skipped.
func (t *target) startStripeMock(ctx context.Context, cfg *config, stderr io.Writer) error {
	bin, how := cfg.stripeMock, "given by -stripe-mock"
	if bin == "" {
		var err error
		if bin, err = stripemock.Build(ctx, prefixed{stderr, "bench: "}); err != nil {
			return skipError{fmt.Sprintf("cannot build stripe-mock %s (pass a binary with -stripe-mock PATH): %v", stripeMockVersion, err)}
		}
		how = "built by go install " + stripeMockModule + "@" + stripeMockVersion
	}
	srv, err := stripemock.Start(ctx, bin)
	if err != nil {
		return skipError{fmt.Sprintf("cannot start stripe-mock at %s: %v", bin, err)}
	}
	t.onClose(srv.Close)
	addr := srv.Addr
	t.url = "http://" + addr
	t.createURL = t.url + "/v1/checkout/sessions"
	t.secret = stripemock.Key
	t.createBody, t.createType = stripeMockCreateBody, "application/x-www-form-urlencoded"
	t.created = http.StatusOK
	t.sessionID = func(body []byte) string {
		var s struct {
			ID string `json:"id"`
		}
		json.Unmarshal(body, &s)
		return s.ID
	}
	if err := waitAnswers(ctx, t); err != nil {
		return skipError{fmt.Sprintf("stripe-mock at %s does not answer: %v", addr, err)}
	}
	t.note = fmt.Sprintf("stripe-mock: %s (%s), HTTP/1.1 at %s; validates each request against Stripe's OpenAPI document, "+
		"answers a fixture, keeps nothing; its log of each request goes to a pipe the bench discards", bin, how, addr)
	return nil
}

// waitAnswers creates one session on t, retrying until it succeeds or
// stripemock.StartTimeout passes: the listener may be printed before it
// serves.
func waitAnswers(ctx context.Context, t *target) error {
	client := newClient(1)
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(stripemock.StartTimeout)
	for {
		_, err := createOne(ctx, client, t)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// prefixed writes each write to w after its prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
