package checkout_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

var at = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func newTestEndpoint(t *testing.T) *checkout.Endpoint {
	t.Helper()
	ep, err := checkout.NewEndpoint(checkout.EndpointParams{MerchantID: "m", Mode: checkout.ModeTest, URL: "https://hooks.example.com/",
		Events: []string{checkout.AllEvents}, Description: "  Orders  "}, at)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// An edit is checked by the rules of creation, all at once, and changes
// nothing when refused.
func TestEndpointUpdate(t *testing.T) {
	ep := newTestEndpoint(t)
	if ep.Description != "Orders" {
		t.Errorf("description = %q; want it trimmed", ep.Description)
	}
	before := *ep
	long := strings.Repeat("é", checkout.MaxEndpointDescriptionLen+1)
	for _, u := range []checkout.EndpointUpdate{
		{Events: []string{}},
		{Events: []string{"checkout.nope"}},
		{Events: []string{checkout.EventWebhookTest}},
		{Description: &long},
		{Description: ptr("line one\nline two")},
		{URL: ptr("https://other.example.com/"), Events: []string{"x"}, Description: &long},
	} {
		err := ep.Update(u, at.Add(time.Hour))
		if !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("Update(%+v) = %v; want validation_failed", u, err)
		}
		if !slices.Equal(ep.Events, before.Events) || ep.Description != before.Description || ep.URL != before.URL || !ep.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("a refused Update changed the endpoint: %+v", ep)
		}
	}
	var e *checkout.Error
	if err := ep.Update(checkout.EndpointUpdate{Events: []string{"x"}, Description: &long}, at); err != nil {
		e = err.(*checkout.Error)
	}
	if e == nil || len(e.Details) != 2 || e.Details[0].Param != "events" || e.Details[1].Param != "description" {
		t.Errorf("Update with two mistakes = %+v; want both reported", e)
	}

	later := at.Add(time.Hour)
	err := ep.Update(checkout.EndpointUpdate{URL: ptr("https://new.example.com/"),
		Events: []string{checkout.EventPaymentRefunded, checkout.EventCheckoutCompleted, checkout.EventPaymentRefunded}, Description: ptr(" ")}, later)
	if err != nil || ep.URL != "https://new.example.com/" || !slices.Equal(ep.Events, []string{checkout.EventCheckoutCompleted, checkout.EventPaymentRefunded}) ||
		ep.Description != "" || !ep.UpdatedAt.Equal(later) || ep.Secret != before.Secret {
		t.Errorf("Update = %v, %+v; want the new URL, sorted unique events, no description, the same secret", err, ep)
	}
	if err := ep.Update(checkout.EndpointUpdate{Description: ptr("Fulfilment")}, later); err != nil || ep.Description != "Fulfilment" ||
		ep.URL != "https://new.example.com/" || len(ep.Events) != 2 {
		t.Errorf("Update of the description alone = %v, %+v; want the rest kept", err, ep)
	}
}

// A roll replaces the secret at once by default; with an overlap the old
// one signs beside it until the overlap ends; a roll during an overlap
// keeps only the secret it replaces; more than 24 hours is refused.
func TestEndpointRollSecret(t *testing.T) {
	ep := newTestEndpoint(t)
	first := ep.Secret
	if err := ep.RollSecret(0, at); err != nil || ep.Secret == first || ep.PreviousSecret != "" || !slices.Equal(ep.SigningSecrets(at), []string{ep.Secret}) {
		t.Errorf("RollSecret(0) = %v, %+v; want a new secret alone", err, ep)
	}
	second := ep.Secret
	now := at.Add(500 * time.Millisecond)
	if err := ep.RollSecret(2*time.Hour, now); err != nil {
		t.Fatal(err)
	}
	third := ep.Secret
	if ep.PreviousSecret != second || !ep.PreviousSecretExpiresAt.Equal(at.Add(2*time.Hour+time.Second)) {
		t.Errorf("after RollSecret(2h): previous %q until %v; want the replaced secret until 2 h later, rounded up to the second", ep.PreviousSecret, ep.PreviousSecretExpiresAt)
	}
	for _, c := range []struct {
		at   time.Time
		want []string
	}{
		{now, []string{third, second}},
		{ep.PreviousSecretExpiresAt.Add(-time.Nanosecond), []string{third, second}},
		{ep.PreviousSecretExpiresAt, []string{third}},
	} {
		if got := ep.SigningSecrets(c.at); !slices.Equal(got, c.want) {
			t.Errorf("SigningSecrets(%v) = %d secrets; want %d", c.at, len(got), len(c.want))
		}
	}
	if err := ep.RollSecret(time.Hour, now.Add(time.Minute)); err != nil || ep.PreviousSecret != third ||
		!slices.Equal(ep.SigningSecrets(now.Add(time.Minute)), []string{ep.Secret, third}) {
		t.Errorf("a roll during the overlap = %v, %+v; want the newest previous secret alone beside the new one", err, ep)
	}
	if err := ep.RollSecret(0, now.Add(2*time.Minute)); err != nil || ep.PreviousSecret != "" || len(ep.SigningSecrets(now.Add(2*time.Minute))) != 1 {
		t.Errorf("a roll at once during the overlap = %v, %+v; want every old secret invalid", err, ep)
	}
	before := *ep
	for _, keep := range []time.Duration{-time.Second, checkout.MaxSecretOverlap + time.Second, 48 * time.Hour} {
		err := ep.RollSecret(keep, now)
		if !checkout.IsCode(err, checkout.EValidationFailed) || !strings.Contains(err.Error(), "24 hours") || !reflect.DeepEqual(*ep, before) {
			t.Errorf("RollSecret(%v) = %v; want validation_failed saying 24 hours, the endpoint unchanged", keep, err)
		}
	}
	if err := ep.RollSecret(checkout.MaxSecretOverlap, now); err != nil {
		t.Errorf("RollSecret(24h) = %v; want it accepted", err)
	}
}

// With two secrets the header carries one v1 per secret, each the HMAC of
// "<t>.<body>" with its secret: a receiver holding either verifies it.
func TestSignWebhookSecrets(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	got := checkout.SignWebhookSecrets([]string{"whsec_test", "whsec_old"}, time.Unix(1700000000, 0), body)
	mac := hmac.New(sha256.New, []byte("whsec_old"))
	mac.Write([]byte(`1700000000.{"id":"evt_1"}`))
	want := "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925,v1=" + hex.EncodeToString(mac.Sum(nil))
	if got != want {
		t.Errorf("SignWebhookSecrets = %s; want %s", got, want)
	}
}

func TestDeliveryFilterValidate(t *testing.T) {
	f := checkout.DeliveryFilter{Status: checkout.DeliveryFailed, EventType: checkout.EventWebhookTest, From: at, To: at.Add(time.Second)}
	if err := f.Validate(); err != nil || f.Limit != checkout.DefaultDeliveryPageSize {
		t.Errorf("Validate(%+v) = %v; want ok with the default page size", f, err)
	}
	for _, f := range []checkout.DeliveryFilter{
		{Status: "done"},
		{EventType: "checkout.nope"},
		{From: at, To: at},
		{From: at.Add(time.Second), To: at},
		{Limit: -1},
		{Limit: checkout.MaxDeliveryPageSize + 1},
	} {
		if err := f.Validate(); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("Validate(%+v) = %v; want validation_failed", f, err)
		}
	}
}

// Failing for a day: the current run of failures began a day ago or more,
// and the newest failure is less than a day old.
func TestFailingForADay(t *testing.T) {
	now := at
	failure := func(ago time.Duration) *checkout.Attempt { return &checkout.Attempt{StartedAt: now.Add(-ago)} }
	for _, c := range []struct {
		name  string
		since time.Duration // 0: no run of failures
		last  *checkout.Attempt
		want  bool
	}{
		{"never failed", 0, nil, false},
		{"failing for 23 h", 23 * time.Hour, failure(time.Minute), false},
		{"failing for exactly 24 h", 24 * time.Hour, failure(time.Minute), true},
		{"failing for 3 days", 72 * time.Hour, failure(5 * time.Hour), true},
		{"failed long ago, no attempt since", 72 * time.Hour, failure(25 * time.Hour), false},
	} {
		h := &checkout.EndpointHealth{At: now, LastFailure: c.last}
		if c.since > 0 {
			h.FailingSince = now.Add(-c.since)
		}
		if got := h.FailingForADay(); got != c.want {
			t.Errorf("%s: FailingForADay = %t; want %t", c.name, got, c.want)
		}
	}
	if r, ok := (checkout.DeliveryCounts{}).SuccessRate(); ok || r != 0 {
		t.Errorf("SuccessRate of nothing = %v, %t; want none", r, ok)
	}
	if r, ok := (checkout.DeliveryCounts{Succeeded: 3, Failed: 1}).SuccessRate(); !ok || r != 0.75 {
		t.Errorf("SuccessRate(3/1) = %v, %t; want 0.75", r, ok)
	}
}
