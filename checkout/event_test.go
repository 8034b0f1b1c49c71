package checkout_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
)

// Payload is what a delivery sends: data.object is the object's JSON as it
// was stored, byte for byte; ObjectID reads its id.
func TestEventPayload(t *testing.T) {
	obj := json.RawMessage(`{"id":"cs_1","object":"checkout_session","title":"\u003cb\u003e Ünïcode 😀","amount":1500}`)
	e := &checkout.Event{ID: checkout.NewEventID(), MerchantID: storeID, Mode: checkout.ModeLive, Type: checkout.EventCheckoutCreated,
		CreatedAt: t0, Object: obj}
	got, err := e.Payload()
	if err != nil {
		t.Fatal(err)
	}
	sent, _ := json.Marshal(e)
	if !bytes.Equal(got, sent) || !bytes.Contains(got, []byte(`"data":{"object":`+string(obj)+`}`)) {
		t.Errorf("Payload = %s; want the body sent, with the object's bytes as stored", got)
	}
	if id := e.ObjectID(); id != "cs_1" {
		t.Errorf("ObjectID = %q; want cs_1", id)
	}
	if id := (&checkout.Event{Object: json.RawMessage(`[1]`)}).ObjectID(); id != "" {
		t.Errorf("ObjectID of an object without id = %q; want empty", id)
	}
}

func TestEveryEventTypeIsDescribed(t *testing.T) {
	for _, typ := range checkout.EventTypes {
		if checkout.EventDescriptions[typ] == "" {
			t.Errorf("event type %s has no description", typ)
		}
	}
	if len(checkout.EventDescriptions) != len(checkout.EventTypes) {
		t.Errorf("%d descriptions for %d types", len(checkout.EventDescriptions), len(checkout.EventTypes))
	}
}
