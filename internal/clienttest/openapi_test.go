package clienttest_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/client"
	"github.com/checkoutd/checkoutd/openapi"
)

// Every field of the schemas of the OpenAPI document checkoutd serves (the
// embedded openapi.JSON) has its place in the client's structs, and no
// struct has a field the document does not know: a field added to the API
// fails this test until the client has it.
func TestStructsCoverOpenAPISchemas(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	for schema, v := range map[string]any{
		"CreateCheckoutRequest": client.CreateParams{},
		"ItemInput":             client.ItemParams{},
		"CustomerInput":         client.CustomerParams{},
		"CheckoutSession":       client.Session{},
		"Item":                  client.Item{},
		"Customer":              client.Customer{},
		"Merchant":              client.Merchant{},
		"Violation":             client.ErrorDetail{},
		"Event":                 client.Event{},
		"Payment":               client.Payment{},
		"PaymentWithRefunds":    client.PaymentDetail{},
		"Refund":                client.Refund{},
		"CryptoRefund":          client.CryptoRefund{},
		"CreateRefundRequest":   client.RefundParams{},
		"Actor":                 client.Actor{},
		"Dispute":               client.Dispute{},
		"DisputeEvidence":       client.DisputeEvidence{},
		"DisputeEvidenceSent":   client.DisputeEvidence{},
		"WebhookTest":           client.WebhookTest{},
	} {
		s, ok := doc.Components.Schemas[schema]
		if !ok {
			t.Errorf("no schema %s in the document", schema)
			continue
		}
		var want []string
		for name := range s.Properties {
			want = append(want, name)
		}
		slices.Sort(want)
		if got := jsonFields(reflect.TypeOf(v)); !slices.Equal(got, want) {
			t.Errorf("%T has fields %q; schema %s has %q", v, got, schema, want)
		}
	}
}

func jsonFields(typ reflect.Type) []string {
	var names []string
	for f := range typ.Fields() {
		if f.Anonymous && f.Tag.Get("json") == "" {
			names = append(names, jsonFields(f.Type)...) // an embedded struct's fields are the outer's
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
