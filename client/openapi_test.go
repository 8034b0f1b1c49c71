package client

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every field of the OpenAPI document's schemas has its place in the
// client's structs, and no struct has a field the document does not know:
// a field added to the API fails this test until the client has it.
func TestStructsCoverOpenAPISchemas(t *testing.T) {
	raw, err := os.ReadFile("../openapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for schema, v := range map[string]any{
		"CreateCheckoutRequest": CreateParams{},
		"ItemInput":             ItemParams{},
		"CustomerInput":         CustomerParams{},
		"CheckoutSession":       Session{},
		"Item":                  Item{},
		"Customer":              Customer{},
		"Merchant":              Merchant{},
		"Violation":             ErrorDetail{},
		"Event":                 Event{},
		"Payment":               Payment{},
		"WebhookTest":           WebhookTest{},
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
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
