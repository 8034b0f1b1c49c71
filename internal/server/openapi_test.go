package server_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/checkoutd/checkoutd/internal/web"
)

// codesOf returns the error codes a documented error response allows: the
// enum its own schema puts on error.code.
func codesOf(resp *openapi3.Response) []string {
	mt := resp.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	var codes []string
	for _, part := range mt.Schema.Value.AllOf {
		if part.Ref != "" {
			continue // the ErrorEnvelope every error response narrows
		}
		errProp := part.Value.Properties["error"]
		if errProp == nil || errProp.Value.Properties["code"] == nil {
			continue
		}
		for _, c := range errProp.Value.Properties["code"].Value.Enum {
			codes = append(codes, fmt.Sprint(c))
		}
	}
	return codes
}

// The OpenAPI document describes every error code the API answers with,
// under the status the API answers it with, and no other: the Error schema
// lists them all, and some response of an operation (or, for 404 and 405,
// the response a request outside the operations gets) allows each one.
func TestOpenAPIDescribesEveryErrorCode(t *testing.T) {
	specOnce.Do(loadSpec)
	if specErr != nil {
		t.Fatalf("OpenAPI document: %v", specErr)
	}
	codes := web.ErrorCodes()
	slices.Sort(codes)

	var enum []string
	for _, c := range specDoc.Components.Schemas["Error"].Value.Properties["code"].Value.Enum {
		enum = append(enum, fmt.Sprint(c))
	}
	slices.Sort(enum)
	if !slices.Equal(enum, codes) {
		t.Errorf("Error.code enum = %q; want the API's codes %q", enum, codes)
	}

	documented := map[string][]string{} // code → "status where"
	add := func(status int, where string, resp *openapi3.Response) {
		for _, c := range codesOf(resp) {
			if want := web.StatusOf(c); want != status {
				t.Errorf("%s documents %s under %d; the API answers it with %d", where, c, status, want)
			}
			documented[c] = append(documented[c], strconv.Itoa(status)+" "+where)
		}
	}
	for path, item := range specDoc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, ref := range op.Responses.Map() {
				n, err := strconv.Atoi(status)
				if err != nil || n < 400 {
					continue
				}
				add(n, method+" "+path, ref.Value)
			}
		}
	}
	for status, name := range unroutedResponses {
		add(status, "no route ("+name+")", specDoc.Components.Responses[name].Value)
	}
	for _, c := range codes {
		if len(documented[c]) == 0 {
			t.Errorf("no response of the document allows %s (%d %s)", c, web.StatusOf(c), http.StatusText(web.StatusOf(c)))
		}
	}

	// Every response that may carry an error envelope says where the
	// request id is, and 429 and 503 say when to retry.
	for name, ref := range specDoc.Components.Responses {
		h := ref.Value.Headers
		if h["Request-Id"] == nil || !h["Request-Id"].Value.Required {
			t.Errorf("response %s: Request-Id is not a required header", name)
		}
		if slices.ContainsFunc(codesOf(ref.Value), func(c string) bool { return c == "rate_limited" || c == "service_unavailable" }) &&
			(h["Retry-After"] == nil || !h["Retry-After"].Value.Required) {
			t.Errorf("response %s: Retry-After is not a required header", name)
		}
	}
}
