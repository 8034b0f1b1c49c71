package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/checkoutd/checkoutd/openapi"
)

var (
	docOnce sync.Once
	doc     *openapi3.T
	docErr  error
)

func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	docOnce.Do(func() {
		doc, docErr = openapi3.NewLoader().LoadFromData(openapi.JSON)
		if docErr == nil {
			docErr = doc.Validate(context.Background())
		}
	})
	if docErr != nil {
		t.Fatalf("OpenAPI document: %v", docErr)
	}
	return doc
}

// checkEventSchema validates a delivered body against the Event schema of
// the OpenAPI document, where merchants read what they will receive.
func checkEventSchema(t *testing.T, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("event body is not JSON: %s", body)
	}
	schema := loadDoc(t).Components.Schemas["Event"].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("event %s does not match the OpenAPI Event schema: %v", body, err)
	}
}

// checkWebhookRequest validates a delivered request against the webhooks
// section of the OpenAPI document: every header it declares is sent and
// matches its schema, and the body is its request body's schema (the Event)
// in its content type.
func checkWebhookRequest(t *testing.T, h http.Header, body []byte) {
	t.Helper()
	item := loadDoc(t).Webhooks["event"]
	if item == nil || item.Post == nil {
		t.Fatal("the OpenAPI document has no webhooks.event.post")
	}
	op := item.Post
	for _, p := range op.Parameters {
		param := p.Value
		if param.In != openapi3.ParameterInHeader {
			t.Errorf("webhook parameter %s is in %s; want header", param.Name, param.In)
			continue
		}
		vs := h.Values(param.Name)
		if len(vs) == 0 {
			if param.Required {
				t.Errorf("header %s is required by the OpenAPI document but was not sent", param.Name)
			}
			continue
		}
		if len(vs) > 1 {
			t.Errorf("header %s sent %d times", param.Name, len(vs))
		}
		if err := param.Schema.Value.VisitJSON(vs[0], openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("header %s: %q does not match the OpenAPI document: %v", param.Name, vs[0], err)
		}
	}
	ct := h.Get("Content-Type")
	media := op.RequestBody.Value.Content.Get(ct)
	if media == nil {
		t.Fatalf("Content-Type %q is not a content type of the OpenAPI webhook's request body", ct)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("event body is not JSON: %s", body)
	}
	if err := media.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("event %s does not match the OpenAPI webhook's request body: %v", body, err)
	}
}
