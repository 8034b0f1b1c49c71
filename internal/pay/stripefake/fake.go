// Package stripefake is a small stateful fake of the Stripe endpoints that
// checkoutd's Stripe connector (package stripepay) uses, for tests across
// the repository. It is a test double of a protocol, not a Stripe clone:
// PaymentIntents that follow a flow chosen by Stripe's test payment
// methods, their charges, refunds and disputes, the account and its webhook
// endpoints, webhooks signed as Stripe signs them, and faults on demand.
//
// The machines that run the tests cannot reach Stripe, and stripe-mock
// (which checks the shapes of requests) keeps no state; this fake follows
// a payment from creation to its outcome so that flows can be tested. It
// answers in the JSON shapes stripe-go parses; where Stripe has more fields
// than checkoutd reads, it leaves them out.
package stripefake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
)

// Stripe's test payment methods the fake knows, as the page's stand-in for
// Stripe.js confirms with them (docs.stripe.com/testing).
const (
	CardVisa                   = "pm_card_visa"       // succeeds: visa 4242, US
	CardMastercard             = "pm_card_mastercard" // succeeds: mastercard 4444, US
	CardDeclined               = "pm_card_chargeDeclined"
	CardInsufficientFunds      = "pm_card_chargeDeclinedInsufficientFunds"
	CardExpired                = "pm_card_chargeDeclinedExpiredCard"
	CardIncorrectCVC           = "pm_card_chargeDeclinedIncorrectCvc"
	CardProcessingError        = "pm_card_chargeDeclinedProcessingError"
	CardAuthenticationRequired = "pm_card_authenticationRequired" // 3-D Secure: requires_action until CompleteAction
	CardDispute                = "pm_card_createDispute"          // succeeds, then a dispute opens after Delay
	CardRefundFail             = "pm_card_refundFail"             // succeeds; its refunds fail after Delay (Options.RefundFailSucceedsFirst)
)

// card is what a test payment method does when a payment is confirmed
// with it.
type card struct {
	brand, last4, country string
	// declineCode and code are the decline's, "" when the card is
	// approved.
	declineCode, code string
	threeDS           bool
	dispute           bool
	refundFail        bool
}

var cards = map[string]card{
	CardVisa:                   {brand: "visa", last4: "4242", country: "US"},
	CardMastercard:             {brand: "mastercard", last4: "4444", country: "US"},
	CardDeclined:               {brand: "visa", last4: "0002", country: "US", declineCode: "generic_decline", code: "card_declined"},
	CardInsufficientFunds:      {brand: "visa", last4: "9995", country: "US", declineCode: "insufficient_funds", code: "card_declined"},
	CardExpired:                {brand: "visa", last4: "0069", country: "US", declineCode: "expired_card", code: "expired_card"},
	CardIncorrectCVC:           {brand: "visa", last4: "0127", country: "US", declineCode: "incorrect_cvc", code: "incorrect_cvc"},
	CardProcessingError:        {brand: "visa", last4: "0119", country: "US", declineCode: "processing_error", code: "processing_error"},
	CardAuthenticationRequired: {brand: "visa", last4: "3184", country: "US", threeDS: true},
	CardDispute:                {brand: "visa", last4: "0259", country: "US", dispute: true},
	CardRefundFail:             {brand: "visa", last4: "5126", country: "US", refundFail: true},
}

// Options configure a Fake.
type Options struct {
	// Now is the fake's clock; time.Now when nil. Disputes of CardDispute
	// open and refunds of CardRefundFail fail once it passes Delay after
	// the payment or the refund.
	Now func() time.Time
	// Delay is how long after a payment (a refund) the automatic dispute
	// (refund failure) comes; 30 seconds when zero.
	Delay time.Duration
	// TLS serves HTTPS (with httptest's certificate; use Client) rather
	// than HTTP.
	TLS bool
	// RefundFailSucceedsFirst makes a refund of CardRefundFail begin
	// succeeded and turn failed after Delay, as Stripe's does (its test
	// card 4000 0000 0000 5126); it begins pending otherwise.
	RefundFailSucceedsFirst bool
	// OnEvent, when set, is called with each event as it happens, after
	// the fake's lock is released and before the request that caused it
	// is answered. To deliver events as Stripe does, use Forward: a
	// delivery from OnEvent to a service that is waiting for the answer
	// of the request that made the event may deadlock it.
	OnEvent func(Event)
}

// Fake is a running fake of Stripe's API. Its methods are safe for
// concurrent use.
type Fake struct {
	// URL is the API's base URL, for stripe.BackendConfig's URL.
	URL    string
	server *httptest.Server
	opts   Options

	mu         sync.Mutex
	intents    map[string]*intent
	charges    map[string]*charge
	refunds    map[string]*refund
	disputes   map[string]*dispute
	endpoints  []Endpoint
	revoked    map[string]bool
	idem       map[string]*idemEntry
	faults     []fault
	events     []Event
	apiVersion string
	requests   []Request
	pending    []Event // events made under the lock, to hand to OnEvent
	fwd        *forwarder
	done       chan struct{}
}

// Request is a request the fake answered, for tests that check what the
// connector sent.
type Request struct {
	Method, Path   string
	IdempotencyKey string
	Form           map[string][]string
}

// Endpoint is a webhook endpoint of the fake's account.
type Endpoint struct {
	ID            string   `json:"id"`
	URL           string   `json:"url"`
	APIVersion    string   `json:"api_version"`
	EnabledEvents []string `json:"enabled_events"`
	Status        string   `json:"status"`
}

// New starts a fake, closed when the test ends.
func New(t testing.TB, o Options) *Fake {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Delay == 0 {
		o.Delay = 30 * time.Second
	}
	f := &Fake{
		opts:       o,
		intents:    map[string]*intent{},
		charges:    map[string]*charge{},
		refunds:    map[string]*refund{},
		disputes:   map[string]*dispute{},
		revoked:    map[string]bool{},
		idem:       map[string]*idemEntry{},
		apiVersion: stripe.APIVersion,
		done:       make(chan struct{}),
	}
	if o.TLS {
		f.server = httptest.NewTLSServer(f.handler())
	} else {
		f.server = httptest.NewServer(f.handler())
	}
	f.URL = f.server.URL
	t.Cleanup(f.server.Close)
	// Before the server closes (cleanups run last first), a request left
	// hanging is let go, so that Close does not wait for it.
	t.Cleanup(func() { close(f.done) })
	return f
}

// Client returns an HTTP client that trusts the fake (its certificate when
// it serves HTTPS).
func (f *Fake) Client() *http.Client { return f.server.Client() }

// Close stops the fake; a test need not call it.
func (f *Fake) Close() { f.server.Close() }

// AddEndpoint adds a webhook endpoint to the account; its APIVersion is
// stripe-go's when "".
func (f *Fake) AddEndpoint(e Endpoint) Endpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e.ID == "" {
		e.ID = newID("we")
	}
	if e.APIVersion == "" {
		e.APIVersion = stripe.APIVersion
	}
	if e.Status == "" {
		e.Status = "enabled"
	}
	if e.EnabledEvents == nil {
		e.EnabledEvents = []string{"*"}
	}
	f.endpoints = append(f.endpoints, e)
	return e
}

// RevokeKey makes the fake refuse a secret key, as Stripe refuses a rolled
// or deleted one (401).
func (f *Fake) RevokeKey(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked[key] = true
}

// SetAPIVersion sets the API version of the events made from now on, as
// an endpoint of another version would receive them.
func (f *Fake) SetAPIVersion(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apiVersion = v
}

// Requests returns the requests answered so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// newID returns an id with Stripe's prefix, random like Stripe's.
func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + "_" + hex.EncodeToString(b[:])
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", newID("req"))
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiError is Stripe's error envelope.
type apiError struct {
	status      int
	Type        string         `json:"type"`
	Code        string         `json:"code,omitempty"`
	DeclineCode string         `json:"decline_code,omitempty"`
	Message     string         `json:"message"`
	Param       string         `json:"param,omitempty"`
	Intent      map[string]any `json:"payment_intent,omitempty"`
}

func (e *apiError) write(w http.ResponseWriter) {
	writeJSON(w, e.status, map[string]any{"error": e})
}

func invalid(status int, code, param, format string) *apiError {
	return &apiError{status: status, Type: "invalid_request_error", Code: code, Param: param, Message: format}
}

// maskKey shows a key as Stripe does in its errors: its kind and last 4.
func maskKey(key string) string {
	kind, _, _ := strings.Cut(key, "_")
	if len(key) < 8 {
		return kind + "_****"
	}
	return key[:strings.LastIndex(key[:len(key)-4], "_")+1] + "****" + key[len(key)-4:]
}
