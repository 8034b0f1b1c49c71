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

// referencePayload is what encoding/json makes of the Event object of
// SPEC.md with data.object as a json.RawMessage: what Payload was before it
// was written by hand, and must stay byte for byte.
func referencePayload(e *checkout.Event) ([]byte, error) {
	return json.Marshal(struct {
		ID         string `json:"id"`
		Object     string `json:"object"`
		Type       string `json:"type"`
		Livemode   bool   `json:"livemode"`
		Created    int64  `json:"created"`
		APIVersion string `json:"api_version"`
		Data       struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}{e.ID, "event", e.Type, e.Mode.Live(), e.CreatedAt.Unix(), checkout.APIVersion, struct {
		Object json.RawMessage `json:"object"`
	}{e.Object}})
}

// checkPayload holds e's Payload, and json.Marshal(e), to referencePayload:
// the same bytes, or both an error.
func checkPayload(t *testing.T, e *checkout.Event) {
	t.Helper()
	want, wantErr := referencePayload(e)
	got, err := e.Payload()
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("Payload of %q = %s, %v; want %s, %v", e.Object, got, err, want, wantErr)
	}
	if err == nil {
		if viaMarshal, err := json.Marshal(e); err != nil || !bytes.Equal(viaMarshal, want) {
			t.Fatalf("json.Marshal of %q = %s, %v; want %s", e.Object, viaMarshal, err, want)
		}
	}
}

var payloadObjects = []string{
	`{"id":"cs_1","amount":1500}`,
	`{}`, `[]`, `null`, `1`, `"s"`,
	"{ \"id\" : \"cs_1\" ,\n\t\"items\": [ 1, 2 ] }", // white space: compacted
	`{"title":"<b>&amp;</b>"}`,                       // HTML characters: escaped
	"{\"t\":\"\u2028\u2029\"}",                       // line and paragraph separators: escaped
	`{"t":"\u003c already escaped \u0026"}`,
	`{"t":"Ünïcode 😀","n":-1.5e3,"b":true,"z":null}`,
	`{"id":`, `{"a":1}x`, ``, `{'a':1}`, "\xff", // not JSON: an error
}

func TestPayloadAsEncodingJSON(t *testing.T) {
	checkPayload(t, &checkout.Event{ID: "evt_1", Type: checkout.EventCheckoutCreated, CreatedAt: t0}) // no object: null
	for _, obj := range payloadObjects {
		for _, mode := range []checkout.Mode{checkout.ModeTest, checkout.ModeLive} {
			checkPayload(t, &checkout.Event{ID: "evt_<&>\u2028", Mode: mode, Type: checkout.EventCheckoutCompleted, CreatedAt: t0,
				Object: json.RawMessage(obj)})
		}
	}
}

func FuzzPayload(f *testing.F) {
	for _, obj := range payloadObjects {
		f.Add("evt_1", checkout.EventCheckoutCreated, obj)
	}
	f.Fuzz(func(t *testing.T, id, typ, obj string) {
		checkPayload(t, &checkout.Event{ID: id, Mode: checkout.ModeTest, Type: typ, CreatedAt: t0, Object: json.RawMessage(obj)})
	})
}
