package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/openapi"
)

// A rule case: a create request and whether the OpenAPI document and the
// server each accept it.
type ruleCase struct {
	name    string
	body    string
	headers map[string]string
	storeID func(id string) string // the path's storeId; the harness store's when nil
	// schema and server say whether each accepts the request. They differ
	// only for the rules the document cannot express (listed below, and
	// said in words in the document), never for a rule it states.
	schema, server bool
}

func agree(name, body string, ok bool) ruleCase {
	return ruleCase{name: name, body: body, schema: ok, server: ok}
}

// ruleCases tries every rule of the create request that JSON Schema can
// express on both sides of its bound, and the rules it cannot express, so
// that the document's limits are the server's.
func ruleCases() []ruleCase {
	urlCases := func(name string, put func(v string) string) []ruleCase {
		return []ruleCase{
			agree(name+" https", put(`"https://shop.example/thanks?order=42#top"`), true),
			agree(name+" HTTPS in capitals", put(`"HTTPS://SHOP.EXAMPLE/thanks"`), true),
			agree(name+" with a port", put(`"https://shop.example:8443/thanks"`), true),
			agree(name+" with an IPv6 host", put(`"https://[2001:db8::1]/thanks"`), true),
			agree(name+" host only", put(`"https://shop.example"`), true),
			agree(name+" 2048 characters", put(str(urlOfLen(2048, "p"))), true),
			agree(name+" 2049 characters", put(str(urlOfLen(2049, "p"))), false),
			agree(name+" 2048 two-byte characters", put(str(urlOfLen(2048, "ü"))), true),
			agree(name+" 2049 two-byte characters", put(str(urlOfLen(2049, "ü"))), false),
			agree(name+" http", put(`"http://shop.example/thanks"`), false),
			agree(name+" http on localhost", put(`"http://localhost:3000/thanks"`), false),
			agree(name+" relative", put(`"/thanks"`), false),
			agree(name+" scheme-relative", put(`"//shop.example/thanks"`), false),
			agree(name+" without a host", put(`"https:///thanks"`), false),
			agree(name+" a port without a host", put(`"https://:443/thanks"`), false),
			agree(name+" with a port not a number", put(`"https://shop.example:https/thanks"`), false),
			agree(name+" https: without slashes", put(`"https:shop.example"`), false),
			agree(name+" with user information", put(`"https://me@shop.example/thanks"`), false),
			agree(name+" with a space", put(`"https://shop.example/a thanks"`), false),
			agree(name+" with a tab", put(`"https://shop.example/a\tthanks"`), false),
			agree(name+" empty", put(`""`), false),
			agree(name+" a number", put(`1`), false),
			// net/url refuses a malformed escape; a pattern does not try.
			{name: name + " with a malformed percent-escape", body: put(`"https://shop.example/%zz"`), schema: true, server: false},
		}
	}
	textCases := func(name string, max int, put func(v string) string) []ruleCase {
		return []ruleCase{
			agree(name+" 1 character", put(`"T"`), true),
			agree(name+fmt.Sprintf(" %d characters", max), put(str(rep("t", max))), true),
			agree(name+fmt.Sprintf(" %d characters", max+1), put(str(rep("t", max+1))), false),
			agree(name+fmt.Sprintf(" %d three-byte characters", max), put(str(rep("説", max))), true),
			agree(name+fmt.Sprintf(" %d three-byte characters", max+1), put(str(rep("説", max+1))), false),
			agree(name+" empty", put(`""`), false),
			agree(name+" white space only", put(`" \t\n\u00a0\u3000 "`), false),
			agree(name+" with white space around", put(`"\n\t Sword \u2003\r\n"`), true),
			agree(name+" with a line separator around", put(`"\u2028Sword\u2029"`), true),
			agree(name+" inner spaces", put(`"Iron\u00a0Sword of\u3000Doom"`), true),
			agree(name+" a zero-width space (not white space)", put(`"\u200b"`), true),
			agree(name+" a byte order mark (not white space)", put(`"\ufeff"`), true),
			agree(name+" with NUL", put(`"Sw\u0000ord"`), false),
			agree(name+" with DEL", put(`"Sword\u007f!"`), false),
			agree(name+" with a C1 control", put(`"Sw\u0085ord"`), false),
			agree(name+" with a vertical tab inside", put(`"Sw\u000bord"`), false),
			agree(name+" a number", put(`7`), false),
			// The server counts after trimming; maxLength counts what was
			// sent, the stricter of the two.
			{name: name + " at its limit with spaces around", body: put(str("  " + rep("t", max) + "  ")), schema: false, server: true},
		}
	}
	oneLine := func(name string, put func(v string) string) []ruleCase {
		return []ruleCase{
			agree(name+" with a line break inside", put(`"Sw\nord"`), false),
			agree(name+" with a tab inside", put(`"Sw\tord"`), false),
		}
	}

	cases := []ruleCase{
		// items: 1 to 10.
		agree("items missing", `{}`, false),
		agree("0 items", `{"items":[]}`, false),
		agree("1 item", nItems(1), true),
		agree("10 items", nItems(10), true),
		agree("11 items", nItems(11), false),
		agree("items null", `{"items":null}`, false),

		// items[].quantity: 1 to 100, optional.
		agree("quantity not sent", withItem(""), true),
		agree("quantity null", withItem(`"quantity":null`), true),
		agree("quantity 0", withItem(`"quantity":0`), false),
		agree("quantity 1", withItem(`"quantity":1`), true),
		agree("quantity 100", withItem(`"quantity":100`), true),
		agree("quantity 101", withItem(`"quantity":101`), false),
		agree("quantity 2.5", withItem(`"quantity":2.5`), false),
		agree("quantity a string", withItem(`"quantity":"2"`), false),

		// items[].amount: 0 to 100000000.
		agree("item amount 0 beside another", withItems(item(0, ""), item(1500, "")), true),
		agree("item amount -1", withItems(item(-1, "")), false),
		agree("item amount 100000000", withItems(item(100000000, "")), true),
		agree("item amount 100000001", withItems(item(100000001, "")), false),
		agree("item amount missing", `{"items":[{"name":"Sword"}]}`, false),
		agree("item name missing", `{"items":[{"amount":1500}]}`, false),
		agree("unknown item field", withItem(`"price":1500`), false),
		agree("item image null", withItem(`"image":null`), true),

		// amount: not negative.
		agree("amount equal to the total", with(`"amount":1500`), true),
		agree("amount null", with(`"amount":null`), true),
		agree("amount -1", with(`"amount":-1`), false),
		agree("amount a string", with(`"amount":"1500"`), false),

		// currency: three letters, any case.
		agree("currency eUr", with(`"currency":"eUr"`), true),
		agree("currency of 2 letters", with(`"currency":"EU"`), false),
		agree("currency of 4 letters", with(`"currency":"EURO"`), false),
		agree("currency with a digit", with(`"currency":"E1R"`), false),
		agree("currency null", with(`"currency":null`), true),

		// customer: at least one of email and name.
		agree("customer empty", with(`"customer":{}`), false),
		agree("customer null", with(`"customer":null`), true),
		agree("customer email", with(`"customer":{"email":"buyer@example.com"}`), true),
		agree("customer name", with(`"customer":{"name":" Ada "}`), true),
		agree("customer email 254 characters", with(`"customer":{"email":`+str(emailOfLen(254, "b"))+`}`), true),
		agree("customer email 255 characters", with(`"customer":{"email":`+str(emailOfLen(255, "b"))+`}`), false),
		agree("customer email without a domain name", with(`"customer":{"email":"ada@localhost"}`), false),
		agree("customer email at an address literal", with(`"customer":{"email":"ada@[192.0.2.1]"}`), false),
		agree("customer email without @", with(`"customer":{"email":"ada.example.com"}`), false),
		agree("customer email of nulls", with(`"customer":{"email":null,"name":null}`), false),
		agree("customer unknown field", with(`"customer":{"email":"buyer@example.com","phone":"1"}`), false),

		// metadata: at most 20 keys of 1 to 40 characters, string values of
		// at most 500.
		agree("metadata 20 keys", with(`"metadata":`+metadataOf(20)), true),
		agree("metadata 21 keys", with(`"metadata":`+metadataOf(21)), false),
		agree("metadata key 40 characters", with(`"metadata":{`+str(rep("k", 40))+`:"v"}`), true),
		agree("metadata key 41 characters", with(`"metadata":{`+str(rep("k", 41))+`:"v"}`), false),
		agree("metadata key 40 two-byte characters", with(`"metadata":{`+str(rep("ключ", 10))+`:"v"}`), true),
		agree("metadata key 41 two-byte characters", with(`"metadata":{`+str(rep("ключ", 10)+"ь")+`:"v"}`), false),
		agree("metadata key empty", with(`"metadata":{"":"v"}`), false),
		agree("metadata value empty", with(`"metadata":{"k":""}`), true),
		agree("metadata value 500 characters", with(`"metadata":{"k":`+str(rep("v", 500))+`}`), true),
		agree("metadata value 501 characters", with(`"metadata":{"k":`+str(rep("v", 501))+`}`), false),
		agree("metadata value 500 four-byte characters", with(`"metadata":{"k":`+str(rep("🧾", 500))+`}`), true),
		agree("metadata value 501 four-byte characters", with(`"metadata":{"k":`+str(rep("🧾", 501))+`}`), false),
		agree("metadata value a number", with(`"metadata":{"order":42}`), false),
		agree("metadata value null", with(`"metadata":{"note":null}`), false),

		// Unknown fields.
		agree("unknown field", with(`"foo":1`), false),
		agree("an output field", with(`"livemode":true`), false),

		// Idempotency-Key: 1 to 255 printable ASCII characters.
		{name: "Idempotency-Key 255 characters", body: nItems(1), headers: map[string]string{"Idempotency-Key": rep("k", 254) + "1"}, schema: true, server: true},
		{name: "Idempotency-Key 256 characters", body: nItems(1), headers: map[string]string{"Idempotency-Key": rep("k", 255) + "2"}, schema: false, server: false},
		{name: "Idempotency-Key with a space", body: nItems(1), headers: map[string]string{"Idempotency-Key": "order 42"}, schema: false, server: false},

		// storeId: a uuid, any case.
		{name: "storeId upper case", body: nItems(1), storeID: strings.ToUpper, schema: true, server: true},
		{name: "storeId not a uuid", body: nItems(1), storeID: func(string) string { return "acme" }, schema: false, server: false},

		// What JSON Schema cannot express: the server alone refuses these,
		// and the document says so in words.
		{name: "items total 98", body: withItems(item(98, "")), schema: true, server: false},
		{name: "items total 100000001", body: withItems(item(50000000, ""), item(50000001, "")), schema: true, server: false},
		{name: "amount not the items total", body: with(`"amount":1499`), schema: true, server: false},
		{name: "amount 1500.0", body: with(`"amount":1500.0`), schema: true, server: false},
		{name: "quantity 2.0", body: withItem(`"quantity":2.0`), schema: true, server: false},
		{name: "currency not in ISO 4217", body: with(`"currency":"XYZ"`), schema: true, server: false},
		{name: "currency without minor units", body: with(`"currency":"XAU"`), schema: true, server: false},
		{name: "customer email with a display name", body: with(`"customer":{"email":"Ada <ada@example.com>"}`), schema: true, server: false},
		{name: "a field twice", body: with(`"title":"A","title":"B"`), schema: true, server: false},
		// The server takes a customer field sent as null as not sent; the
		// document asks for strings.
		{name: "customer email null beside a name", body: with(`"customer":{"email":null,"name":"Ada"}`), schema: false, server: true},
	}
	put := func(field string) func(v string) string {
		return func(v string) string { return with(`"` + field + `":` + v) }
	}
	putItem := func(field string) func(v string) string {
		return func(v string) string { return withItem(`"` + field + `":` + v) }
	}
	putCustomer := func(v string) string { return with(`"customer":{"name":` + v + `}`) }
	cases = append(cases, urlCases("return_url", put("return_url"))...)
	cases = append(cases, urlCases("cancel_url", put("cancel_url"))...)
	cases = append(cases, urlCases("items[].image", putItem("image"))...)
	cases = append(cases, textCases("items[].name", 250, func(v string) string { return `{"items":[{"name":` + v + `,"amount":1500}]}` })...)
	cases = append(cases, oneLine("items[].name", func(v string) string { return `{"items":[{"name":` + v + `,"amount":1500}]}` })...)
	cases = append(cases, textCases("title", 128, put("title"))...)
	cases = append(cases, oneLine("title", put("title"))...)
	cases = append(cases, textCases("customer.name", 200, putCustomer)...)
	cases = append(cases, oneLine("customer.name", putCustomer)...)
	cases = append(cases, textCases("description", 500, put("description"))...)
	cases = append(cases, agree("description with line breaks and tabs inside", with(`"description":"one\r\ntwo\tthree"`), true))
	return cases
}

// The create request's schema in the OpenAPI document and the server agree
// on every rule the document states: a value at each limit is accepted by
// both, a value just past it refused by both. Requests are checked against
// the document as a whole (path, headers, body) by kin-openapi's request
// validator, and the body alone by its JSON Schema 2020-12 validator, the
// dialect of OpenAPI 3.1.
func TestOpenAPIRequestRulesAreTheServers(t *testing.T) {
	specOnce.Do(loadSpec)
	if specErr != nil {
		t.Fatalf("OpenAPI document: %v", specErr)
	}
	body := specDoc.Components.Schemas["CreateCheckoutRequest"].Value
	h := newHarness(t, storetest.Open(t, "sqlite"))
	for i, c := range ruleCases() {
		t.Run(c.name, func(t *testing.T) {
			storeID := h.store.ID
			if c.storeID != nil {
				storeID = c.storeID(storeID)
			}
			path := "/v1/stores/" + storeID + "/checkouts"
			headers := map[string]string{"Idempotency-Key": fmt.Sprintf("rule-%d", i)}
			for k, v := range c.headers {
				headers[k] = v
			}

			// The document, through the request validator.
			req, err := http.NewRequest("POST", "http://checkoutd.test"+path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+h.secret)
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			docErr := validateRequest(req, []byte(c.body))
			if docOK := docErr == nil; docOK != c.schema {
				t.Errorf("the document (request validator) accepts %s: %v; want %v (%v)", short(c.body), docOK, c.schema, docErr)
			}
			// The body, through JSON Schema 2020-12.
			if c.storeID == nil && c.headers == nil {
				var v any
				if err := json.Unmarshal([]byte(c.body), &v); err != nil {
					t.Fatal(err)
				}
				err := body.VisitJSON(v, openapi3.EnableJSONSchema2020())
				if schemaOK := err == nil; schemaOK != c.schema {
					t.Errorf("CreateCheckoutRequest (JSON Schema 2020-12) accepts %s: %v; want %v (%v)", short(c.body), schemaOK, c.schema, err)
				}
			}

			// The server.
			r := h.with(t).do(request{method: "POST", path: path, body: c.body, secret: h.secret, headers: headers})
			switch {
			case r.Status == http.StatusCreated:
				if !c.server {
					t.Errorf("the server accepts %s; want it refused", short(c.body))
				}
			case r.Status == http.StatusBadRequest:
				if c.server {
					t.Errorf("the server refuses %s: %s; want it accepted", short(c.body), short(string(r.Body)))
				}
			default:
				t.Errorf("the server answers %s with %d %s; want 201 or 400", short(c.body), r.Status, short(string(r.Body)))
			}
		})
	}
}

// validateRequest checks a request against the OpenAPI document: its route,
// path parameters, headers and body.
func validateRequest(req *http.Request, body []byte) error {
	ctx := context.Background()
	route, pathParams, err := specRouter.FindRoute(req)
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
		Request: req, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	})
}

// The patterns of the text fields say what the server says, character by
// character. For every code point below U+3100 (Go's white space and control
// characters all lie there) and a few beyond, alone, inside a word, around a
// word and twice inside one, a field's pattern accepts a string exactly when
// the server's parser of the create request (checkout.ParseCreateRequest) does:
// white space may surround the text, control characters may not appear in it
// (description allows LF, CR and tab inside). The document is read as served,
// its \uXXXX escapes by kin-openapi itself (the OpenAPI 3.0 validator, which
// translates them; loadSpec's translation is not used here).
func TestOpenAPITextPatternsAreTheServers(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi reads the document's patterns as they are written: %v", err)
	}
	prop := func(schema, name string) *openapi3.Schema {
		return doc.Components.Schemas[schema].Value.Properties[name].Value
	}
	fields := []struct {
		param  string
		schema *openapi3.Schema
		body   func(v string) string
	}{
		{"items[0].name", prop("ItemInput", "name"), func(v string) string { return `{"items":[{"name":` + v + `,"amount":1500}]}` }},
		{"title", prop("CreateCheckoutRequest", "title"), func(v string) string { return with(`"title":` + v) }},
		{"description", prop("CreateCheckoutRequest", "description"), func(v string) string { return with(`"description":` + v) }},
		{"customer.name", prop("CustomerInput", "name"), func(v string) string { return with(`"customer":{"name":` + v + `}`) }},
	}
	var chars []rune
	for c := rune(0); c < 0x3100; c++ {
		chars = append(chars, c)
	}
	chars = append(chars, 0xe000, 0xfeff, 0xfffd, 0x10000, 0x1f9fe, 0x10ffff)

	for _, f := range fields {
		if f.schema == nil || f.schema.Pattern == "" {
			t.Fatalf("%s: no pattern in the document", f.param)
		}
		accepted, differ := 0, 0
		for _, c := range chars {
			s := string(c)
			for _, v := range []string{s, "a" + s + "b", s + "a" + s, "a" + s + s + "b"} {
				docErr := f.schema.VisitJSON(v)
				_, srvErr := checkout.ParseCreateRequest([]byte(f.body(str(v))))
				if docErr == nil {
					accepted++
				}
				if (docErr == nil) != (srvErr == nil) {
					if differ++; differ <= 5 {
						t.Errorf("%s = %+q: the pattern accepts it: %v, the server: %v (%v)", f.param, v, docErr == nil, srvErr == nil, srvErr)
					}
				}
			}
		}
		if differ > 5 {
			t.Errorf("%s: the pattern and the server differ on %d strings in all", f.param, differ)
		}
		// A check that checks something: most strings pass, some do not.
		if total := 4 * len(chars); accepted == 0 || accepted == total {
			t.Errorf("%s: the pattern accepts %d strings of %d", f.param, accepted, total)
		}
	}
}
