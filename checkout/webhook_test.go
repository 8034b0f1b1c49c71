package checkout_test

import (
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

func TestSignWebhookWorkedExample(t *testing.T) {
	// The example of docs/webhooks.md, computed independently.
	got := checkout.SignWebhook("whsec_test", time.Unix(1700000000, 0), []byte(`{"id":"evt_1"}`))
	want := "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"
	if got != want {
		t.Errorf("SignWebhook = %s; want %s", got, want)
	}
}

func TestDeliveryRecord(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	fail := &checkout.Attempt{StatusCode: 500, Error: "receiver answered 500"}
	ok := &checkout.Attempt{StatusCode: 200}
	d := &checkout.Delivery{Status: checkout.DeliveryPending}
	for i, wait := range checkout.RetrySchedule {
		d.Record(fail, now)
		if d.Status != checkout.DeliveryPending || d.Attempts != i+1 || !d.NextAttemptAt.Equal(now.Add(wait)) {
			t.Fatalf("after failure %d: %+v; want pending, next in %s", i+1, d, wait)
		}
	}
	d.Record(fail, now)
	if d.Status != checkout.DeliveryFailed || d.Attempts != checkout.MaxDeliveryAttempts {
		t.Fatalf("after 8 failures: %+v; want failed", d)
	}
	d.Record(ok, now) // a finished delivery stays as it is
	if d.Status != checkout.DeliveryFailed || d.Attempts != 8 {
		t.Errorf("Record after failed changed it: %+v", d)
	}

	d = &checkout.Delivery{Status: checkout.DeliveryPending}
	d.Record(fail, now)
	d.Record(ok, now)
	if d.Status != checkout.DeliverySucceeded || d.Attempts != 2 || d.LastStatusCode != 200 || d.LastError != "" {
		t.Errorf("after failure then success: %+v", d)
	}

	d = &checkout.Delivery{Status: checkout.DeliveryPending}
	d.Cancel(now)
	d.Record(ok, now)
	if d.Status != checkout.DeliveryCanceled || d.Attempts != 0 {
		t.Errorf("a canceled delivery took an attempt: %+v", d)
	}
	for _, code := range []int{199, 300, 302, 404, 500} {
		if (&checkout.Attempt{StatusCode: code}).Succeeded() {
			t.Errorf("status %d counted as delivered", code)
		}
	}
	for _, code := range []int{200, 201, 204, 299} {
		if !(&checkout.Attempt{StatusCode: code}).Succeeded() {
			t.Errorf("status %d not counted as delivered", code)
		}
	}
}

func TestEndpointSubscriptions(t *testing.T) {
	now := time.Now()
	all, err := checkout.NewEndpoint(checkout.EndpointParams{Mode: checkout.ModeTest, URL: "https://x.example.com", Events: checkout.ParseEvents("all")}, now)
	if err != nil {
		t.Fatal(err)
	}
	some, err := checkout.NewEndpoint(checkout.EndpointParams{Mode: checkout.ModeLive, URL: "https://x.example.com", Events: checkout.ParseEvents("checkout.completed, payment.refunded,checkout.completed")}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(some.Events) != 2 {
		t.Errorf("events = %v; want two, deduplicated", some.Events)
	}
	for _, typ := range checkout.SubscribableEventTypes() {
		if !all.Subscribes(typ) {
			t.Errorf("all does not cover %s", typ)
		}
	}
	if !all.Subscribes("checkout.some_future_type") {
		t.Error("all does not cover types added later")
	}
	if all.Subscribes(checkout.EventWebhookTest) || some.Subscribes(checkout.EventWebhookTest) {
		t.Error("webhook.test reached an endpoint through a subscription")
	}
	if !some.Subscribes("payment.refunded") || some.Subscribes("checkout.created") {
		t.Errorf("some.Subscribes wrong for %v", some.Events)
	}
	for _, bad := range []string{"", "checkout.nope", "webhook.test", "all,checkout.created x"} {
		if _, err := checkout.NewEndpoint(checkout.EndpointParams{Mode: checkout.ModeTest, Events: checkout.ParseEvents(bad)}, now); err == nil {
			t.Errorf("NewEndpoint(events %q) = nil error", bad)
		}
	}
	if _, err := checkout.NewEndpoint(checkout.EndpointParams{Mode: "prod", Events: []string{"*"}}, now); !checkout.IsCode(err, checkout.EValidationFailed) {
		t.Errorf("NewEndpoint(mode prod) = %v; want validation_failed", err)
	}
	if s := checkout.NewWebhookSecret(); len(s) != len("whsec_")+43 || s[:6] != "whsec_" {
		t.Errorf("NewWebhookSecret = %q", s)
	}
}
