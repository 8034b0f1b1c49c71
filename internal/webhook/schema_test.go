package webhook_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/checkoutd/checkoutd/openapi"
)

var (
	eventSchemaOnce sync.Once
	eventSchema     *openapi3.Schema
	eventSchemaErr  error
)

// checkEventSchema validates a delivered body against the Event schema of
// the OpenAPI document, where merchants read what they will receive.
func checkEventSchema(t *testing.T, body []byte) {
	t.Helper()
	eventSchemaOnce.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON)
		if err == nil {
			err = doc.Validate(context.Background())
		}
		if err != nil {
			eventSchemaErr = err
			return
		}
		eventSchema = doc.Components.Schemas["Event"].Value
	})
	if eventSchemaErr != nil {
		t.Fatalf("OpenAPI document: %v", eventSchemaErr)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("event body is not JSON: %s", body)
	}
	if err := eventSchema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("event %s does not match the OpenAPI Event schema: %v", body, err)
	}
}
