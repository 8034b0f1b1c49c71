package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/web"
	"github.com/checkoutd/checkoutd/openapi"
)

// codesOf returns the error codes a documented error response allows: the
// enum its own envelope's error object puts on code.
func codesOf(resp *openapi3.Response) []string {
	mt := resp.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	errProp := mt.Schema.Value.Properties["error"]
	if errProp == nil || errProp.Value.Properties["code"] == nil {
		return nil
	}
	var codes []string
	for _, c := range errProp.Value.Properties["code"].Value.Enum {
		codes = append(codes, fmt.Sprint(c))
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

// walkJSON calls fn on every object of the raw document, with its JSON
// pointer.
func walkJSON(v any, ptr string, fn func(ptr string, obj map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		fn(ptr, v)
		for k, x := range v {
			walkJSON(x, ptr+"/"+k, fn)
		}
	case []any:
		for i, x := range v {
			walkJSON(x, ptr+"/"+strconv.Itoa(i), fn)
		}
	}
}

// rawSpec is the document as plain JSON, for checks of its spelling rather
// than its meaning.
func rawSpec(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openapi.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// Client generators read a default as "always there": openapi-typescript
// makes a property with a default required, so a create without quantity
// would not type-check. What the server does with a field not sent is said
// in words; no schema a client sends has a default.
func TestOpenAPIInputsHaveNoDefault(t *testing.T) {
	doc := rawSpec(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"CreateCheckoutRequest", "ItemInput", "CustomerInput"} {
		walkJSON(schemas[name], "#/components/schemas/"+name, func(ptr string, obj map[string]any) {
			if _, ok := obj["default"]; ok {
				t.Errorf("%s has a default; say what a field not sent means in its description instead", ptr)
			}
		})
	}
	paths := doc["paths"].(map[string]any)
	walkJSON(paths, "#/paths", func(ptr string, obj map[string]any) {
		if strings.Contains(ptr, "/parameters/") || strings.Contains(ptr, "/requestBody/") {
			if _, ok := obj["default"]; ok {
				t.Errorf("%s has a default", ptr)
			}
		}
	})
}

// Error responses are shaped for client generators: each status has an
// envelope and an error object of its own, named, with every field of the
// Error schema typed as there and code narrowed to the status's codes. No
// allOf (oapi-codegen turned allOf of the envelope and a narrowed code into
// struct{ Error struct{ Code interface{} } }, losing message, param,
// request_id and details).
func TestOpenAPIErrorResponsesAreWholeObjects(t *testing.T) {
	specOnce.Do(loadSpec)
	if specErr != nil {
		t.Fatalf("OpenAPI document: %v", specErr)
	}
	generic := specDoc.Components.Schemas["Error"].Value
	for name, ref := range specDoc.Components.Responses {
		schemaRef := ref.Value.Content.Get("application/json").Schema
		if want := "#/components/schemas/" + name + "Envelope"; schemaRef.Ref != want {
			t.Errorf("response %s: schema is %q; want a $ref to %s", name, schemaRef.Ref, want)
			continue
		}
		env := schemaRef.Value
		if ok := env.Properties["ok"]; ok == nil || !ok.Value.Type.Is("boolean") || ok.Value.Const != false {
			t.Errorf("%sEnvelope: ok is not a boolean const false", name)
		}
		errRef := env.Properties["error"]
		if want := "#/components/schemas/" + name + "Error"; errRef == nil || errRef.Ref != want {
			t.Errorf("%sEnvelope: error is not a $ref to %s", name, want)
			continue
		}
		e := errRef.Value
		if !e.Type.Is("object") || len(e.AllOf)+len(e.AnyOf)+len(e.OneOf) > 0 {
			t.Errorf("%sError: not a plain object schema", name)
		}
		if !slices.Equal(e.Required, generic.Required) {
			t.Errorf("%sError: required = %q; want Error's, %q", name, e.Required, generic.Required)
		}
		if e.AdditionalProperties.Has == nil || *e.AdditionalProperties.Has {
			t.Errorf("%sError: additionalProperties is not false", name)
		}
		for prop, want := range generic.Properties {
			got := e.Properties[prop]
			if got == nil {
				t.Errorf("%sError: no %s; Error has it", name, prop)
				continue
			}
			if prop == "code" {
				if !got.Value.Type.Is("string") || len(got.Value.Enum) == 0 {
					t.Errorf("%sError: code is not a string enum", name)
				}
				for _, c := range got.Value.Enum {
					if !slices.Contains(want.Value.Enum, c) {
						t.Errorf("%sError: code %v is not in Error's enum", name, c)
					}
				}
				continue
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Errorf("%sError: %s is %s; want Error's, %s", name, prop, gj, wj)
			}
		}
		if len(e.Properties) != len(generic.Properties) {
			t.Errorf("%sError: %d properties; Error has %d", name, len(e.Properties), len(generic.Properties))
		}
	}
}

// Every const says its type (a const without one becomes interface{} in
// oapi-codegen), and the document uses no allOf.
func TestOpenAPIConstsAreTyped(t *testing.T) {
	walkJSON(rawSpec(t), "#", func(ptr string, obj map[string]any) {
		if _, ok := obj["const"]; ok {
			if _, ok := obj["type"]; !ok {
				t.Errorf("%s: const without a type", ptr)
			}
		}
		if _, ok := obj["allOf"]; ok && !strings.Contains(ptr, "/properties/allOf") {
			t.Errorf("%s: allOf; client generators lose fields through it", ptr)
		}
	})
}

// The document is ASCII from end to end, as served: Prism (5.14) puts a
// violation's message, pattern included, in a response header, Node refuses a
// character beyond ASCII there, and Prism died on the first request that broke
// a pattern holding U+3000. Inside a pattern a non-ASCII character is written
// as the ECMA-262 escape \uXXXX (upper-case hex, the spelling kin-openapi
// reads); prose does without. The document read as JSON is held to ASCII too:
// a JSON \u escape would put the character back in the string Prism quotes.
func TestOpenAPIDocumentIsASCII(t *testing.T) {
	h := newHarness(t, storetest.Open(t, "sqlite"))
	r := h.do(request{method: "GET", path: "/v1/openapi.json"})
	if r.Status != http.StatusOK || len(r.Body) == 0 {
		t.Fatalf("GET /v1/openapi.json = %d (%d bytes); want 200 and the document", r.Status, len(r.Body))
	}
	line, col, bad := 1, 1, 0
	for _, c := range string(r.Body) {
		if c >= utf8.RuneSelf {
			if bad++; bad <= 10 {
				t.Errorf("GET /v1/openapi.json: line %d, column %d: %U (%q) is not ASCII; in a pattern write it as \\u%04X", line, col, c, c, c)
			}
		}
		col++
		if c == '\n' {
			line, col = line+1, 1
		}
	}
	if bad > 10 {
		t.Errorf("... %d non-ASCII characters in all", bad)
	}

	var doc any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	eachString(doc, "#", func(ptr, s string) {
		if i := strings.IndexFunc(s, func(c rune) bool { return c >= utf8.RuneSelf }); i >= 0 {
			c, _ := utf8.DecodeRuneInString(s[i:])
			t.Errorf("%s: %U (%q) is not ASCII once the JSON is read; in a pattern write it as \\\\u%04X in the file", ptr, c, c, c)
		}
	})
}

// eachString calls fn on every string of a decoded JSON value, object keys
// included, with its JSON pointer.
func eachString(v any, ptr string, fn func(ptr, s string)) {
	switch v := v.(type) {
	case string:
		fn(ptr, v)
	case map[string]any:
		for k, x := range v {
			fn(ptr+"/"+k+" (the key)", k)
			eachString(x, ptr+"/"+k, fn)
		}
	case []any:
		for i, x := range v {
			eachString(x, ptr+"/"+strconv.Itoa(i), fn)
		}
	}
}
