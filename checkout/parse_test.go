package checkout_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
)

func ptr[T any](v T) *T { return &v }

// item is the body of one item with the given unit amount.
func item(amount int) string {
	return fmt.Sprintf(`{"name":"Sword","amount":%d}`, amount)
}

// items is a body's items array of n items of unit amount 100.
func items(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = item(100)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// body is a create request of one 1500 item with the extra fields, a JSON
// object's inside ("" for none).
func body(extra string) string {
	if extra == "" {
		return `{"items":[{"name":"Sword","amount":1500}]}`
	}
	return `{"items":[{"name":"Sword","amount":1500}],` + extra + `}`
}

// metadataOf returns a metadata object of n keys k0..kn-1.
func metadataOf(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sword is the parsed form of body's one item.
var sword = []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}}

// params returns parsed params holding sword, with f applied.
func params(f func(p *checkout.CreateParams)) *checkout.CreateParams {
	p := &checkout.CreateParams{Items: sword, Metadata: map[string]string{}}
	if f != nil {
		f(p)
	}
	return p
}

func TestParseCreateRequestValid(t *testing.T) {
	long := func(r string, n int) string { return strings.Repeat(r, n) }
	email254 := long("a", 64) + "@" + long("b", 185) + ".com"
	url2048 := "https://example.com/" + long("p", 2048-len("https://example.com/"))
	// Lengths count code points, URLs and emails too.
	url2048runes := "https://example.com/" + long("ü", 2048-len("https://example.com/"))
	email254runes := long("ü", 64) + "@" + long("b", 185) + ".com"
	md20 := map[string]string{}
	for i := range 20 {
		md20[fmt.Sprintf("k%d", i)] = "v"
	}
	tests := []struct {
		name string
		body string
		want *checkout.CreateParams
	}{
		{"minimal", body(""), params(nil)},
		{"every field", `{
			"items":[{"name":"Sword","amount":1500,"quantity":2,"image":"https://cdn.example.com/sword.png"},{"name":"Shield","amount":250}],
			"title":"Order 42","description":"Two swords\nand a shield","currency":"eur","amount":3250,
			"customer":{"email":"buyer@example.com","name":"Ada Lovelace"},
			"metadata":{"order_id":"42","note":""},
			"return_url":"https://shop.example.com/done?x=1#top","cancel_url":"https://shop.example.com/cart"}`,
			&checkout.CreateParams{
				Items: []checkout.Item{
					{Name: "Sword", Amount: 1500, Quantity: 2, Image: ptr("https://cdn.example.com/sword.png")},
					{Name: "Shield", Amount: 250, Quantity: 1},
				},
				Title: ptr("Order 42"), Description: ptr("Two swords\nand a shield"), Currency: ptr("EUR"), Amount: ptr(int64(3250)),
				Customer:  checkout.Customer{Email: ptr("buyer@example.com"), Name: ptr("Ada Lovelace")},
				Metadata:  map[string]string{"order_id": "42", "note": ""},
				ReturnURL: ptr("https://shop.example.com/done?x=1#top"), CancelURL: ptr("https://shop.example.com/cart"),
			}},
		{"null is not sent", `{"items":[{"name":"Sword","amount":1500,"quantity":null,"image":null}],
			"title":null,"description":null,"currency":null,"amount":null,"customer":null,"metadata":null,"return_url":null,"cancel_url":null}`,
			params(nil)},
		{"customer fields null", body(`"customer":{"email":null,"name":"Ada"}`),
			params(func(p *checkout.CreateParams) { p.Customer.Name = ptr("Ada") })},

		// Items: count, quantity, unit amount and total, each at its bounds.
		{"1 item", `{"items":` + items(1) + `}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "Sword", Amount: 100, Quantity: 1}}, Metadata: map[string]string{}}},
		{"10 items", `{"items":` + items(10) + `}`, nil},
		{"quantity 1", `{"items":[{"name":"A","amount":100,"quantity":1}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "A", Amount: 100, Quantity: 1}}, Metadata: map[string]string{}}},
		{"quantity 100", `{"items":[{"name":"A","amount":100,"quantity":100}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "A", Amount: 100, Quantity: 100}}, Metadata: map[string]string{}}},
		{"total 99", `{"items":[{"name":"A","amount":99}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "A", Amount: 99, Quantity: 1}}, Metadata: map[string]string{}}},
		{"total 100000000", `{"items":[{"name":"A","amount":1000000,"quantity":100}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "A", Amount: 1000000, Quantity: 100}}, Metadata: map[string]string{}}},
		{"total 99 from two items", `{"items":[{"name":"A","amount":33,"quantity":3},{"name":"B","amount":0}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "A", Amount: 33, Quantity: 3}, {Name: "B", Amount: 0, Quantity: 1}}, Metadata: map[string]string{}}},
		{"unit amount 100000000", `{"items":[{"name":"A","amount":100000000}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "A", Amount: 100000000, Quantity: 1}}, Metadata: map[string]string{}}},
		{"negative zero is zero", `{"items":[{"name":"A","amount":-0},{"name":"B","amount":100}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: "A", Amount: 0, Quantity: 1}, {Name: "B", Amount: 100, Quantity: 1}}, Metadata: map[string]string{}}},
		{"item name trimmed", `{"items":[{"name":"  Sword\t","amount":1500}]}`, params(nil)},
		{"item name 250 runes", `{"items":[{"name":"` + long("é", 250) + `","amount":1500}]}`,
			&checkout.CreateParams{Items: []checkout.Item{{Name: long("é", 250), Amount: 1500, Quantity: 1}}, Metadata: map[string]string{}}},
		{"amount equals total", body(`"amount":1500`), params(func(p *checkout.CreateParams) { p.Amount = ptr(int64(1500)) })},

		// Texts: trimmed, counted in characters (runes), not bytes.
		{"title 1", body(`"title":"T"`), params(func(p *checkout.CreateParams) { p.Title = ptr("T") })},
		{"title trimmed", body(`"title":"  Order 42 \u00a0"`), params(func(p *checkout.CreateParams) { p.Title = ptr("Order 42") })},
		{"title 128 runes of 4 bytes", body(`"title":"` + long("😀", 128) + `"`),
			params(func(p *checkout.CreateParams) { p.Title = ptr(long("😀", 128)) })},
		{"title 128 after trimming", body(`"title":"  ` + long("t", 128) + `  "`),
			params(func(p *checkout.CreateParams) { p.Title = ptr(long("t", 128)) })},
		{"description 500 runes", body(`"description":"` + long("ü", 500) + `"`),
			params(func(p *checkout.CreateParams) { p.Description = ptr(long("ü", 500)) })},
		{"description keeps inner newlines and tabs", body(`"description":"\n a\r\n\tb \n"`),
			params(func(p *checkout.CreateParams) { p.Description = ptr("a\r\n\tb") })},
		{"escaped unicode", body(`"title":"\u00e9t\u00e9 \ud83d\ude00"`), params(func(p *checkout.CreateParams) { p.Title = ptr("été 😀") })},

		// Currency: case folded, the real ISO 4217 list.
		{"currency lower case", body(`"currency":"usd"`), params(func(p *checkout.CreateParams) { p.Currency = ptr("USD") })},
		{"currency mixed case", body(`"currency":"jPy"`), params(func(p *checkout.CreateParams) { p.Currency = ptr("JPY") })},
		{"currency KWD", body(`"currency":"KWD"`), params(func(p *checkout.CreateParams) { p.Currency = ptr("KWD") })},

		// Customer.
		{"customer email only", body(`"customer":{"email":"a@b.co"}`), params(func(p *checkout.CreateParams) { p.Customer.Email = ptr("a@b.co") })},
		{"customer name trimmed", body(`"customer":{"name":" Ada "}`), params(func(p *checkout.CreateParams) { p.Customer.Name = ptr("Ada") })},
		{"customer email 254", body(`"customer":{"email":"` + email254 + `"}`), params(func(p *checkout.CreateParams) { p.Customer.Email = ptr(email254) })},
		{"customer name 200 runes", body(`"customer":{"name":"` + long("ß", 200) + `"}`),
			params(func(p *checkout.CreateParams) { p.Customer.Name = ptr(long("ß", 200)) })},

		// Metadata: returned as sent (not trimmed), bounds in runes.
		{"metadata 20 keys", body(`"metadata":` + metadataOf(20)), params(func(p *checkout.CreateParams) { p.Metadata = md20 })},
		{"metadata empty", body(`"metadata":{}`), params(nil)},
		{"metadata kept as sent", body(`"metadata":{" k ":" v ","ключ":"значение"}`),
			params(func(p *checkout.CreateParams) {
				p.Metadata = map[string]string{" k ": " v ", "ключ": "значение"}
			})},
		{"metadata key 40 runes, value 500 runes", body(`"metadata":{"` + long("ä", 40) + `":"` + long("ö", 500) + `"}`),
			params(func(p *checkout.CreateParams) { p.Metadata = map[string]string{long("ä", 40): long("ö", 500)} })},

		// URLs.
		{"return_url 2048", body(`"return_url":"` + url2048 + `"`), params(func(p *checkout.CreateParams) { p.ReturnURL = ptr(url2048) })},
		{"return_url 2048 runes", body(`"return_url":"` + url2048runes + `"`), params(func(p *checkout.CreateParams) { p.ReturnURL = ptr(url2048runes) })},
		{"customer email 254 runes", body(`"customer":{"email":"` + email254runes + `"}`), params(func(p *checkout.CreateParams) { p.Customer.Email = ptr(email254runes) })},
		{"HTTPS scheme in capitals", body(`"cancel_url":"HTTPS://shop.example.com"`),
			params(func(p *checkout.CreateParams) { p.CancelURL = ptr("HTTPS://shop.example.com") })},
		{"whitespace around the object", " \n\t" + body("") + "\n ", params(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkout.ParseCreateRequest([]byte(tt.body))
			if err != nil {
				t.Fatalf("ParseCreateRequest(%s) = %v; want params", tt.body, err)
			}
			if tt.want == nil { // only checked to pass
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseCreateRequest(%s) =\n%s\nwant\n%s", tt.body, dump(got), dump(tt.want))
			}
		})
	}
}

func dump(p *checkout.CreateParams) string {
	b, _ := json.MarshalIndent(p, "", "  ")
	return string(b)
}

// problems lists the violations of err as the tests name it: "code param".
func problems(err error) []string {
	var ce *checkout.Error
	if !errors.As(err, &ce) || len(ce.Details) == 0 {
		return nil
	}
	out := make([]string, len(ce.Details))
	for i, d := range ce.Details {
		out[i] = d.Code + " " + d.Param
	}
	return out
}

func TestParseCreateRequestInvalid(t *testing.T) {
	long := strings.Repeat
	deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	tests := []struct {
		name     string
		body     string
		code     string
		problems []string // "code param" of each detail, in order; Param is the first
	}{
		// Not one JSON object.
		{"empty", ``, checkout.EInvalidJSON, nil},
		{"whitespace", " \n", checkout.EInvalidJSON, nil},
		{"array", `[]`, checkout.EInvalidJSON, nil},
		{"null", `null`, checkout.EInvalidJSON, nil},
		{"string", `"items"`, checkout.EInvalidJSON, nil},
		{"truncated", `{"items":[`, checkout.EInvalidJSON, nil},
		{"trailing comma", `{"items":[],}`, checkout.EInvalidJSON, nil},
		{"two objects", body("") + `{}`, checkout.EInvalidJSON, nil},
		{"garbage after", body("") + `x`, checkout.EInvalidJSON, nil},
		{"single quotes", `{'items':[]}`, checkout.EInvalidJSON, nil},
		{"invalid escape", `{"title":"\x"}`, checkout.EInvalidJSON, nil},
		{"nested too deeply", `{"metadata":` + deep + `}`, checkout.EInvalidJSON, nil},
		{"nested objects too deeply", `{"metadata":` + long(`{"a":`, 40) + `1` + long("}", 40) + `}`, checkout.EInvalidJSON, nil},
		{"nested to the limit (32) is not a JSON error", body(`"metadata":{"a":` + strings.Repeat("[", 30) + strings.Repeat("]", 30) + `}`),
			checkout.EValidationFailed, []string{"invalid_type metadata.a"}},
		{"nested one past the limit", body(`"metadata":{"a":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`), checkout.EInvalidJSON, nil},
		{"leading zero", `{"items":[{"name":"A","amount":0100}]}`, checkout.EInvalidJSON, nil},

		// Required fields.
		{"no items", `{}`, checkout.EValidationFailed, []string{"required items"}},
		{"items null", `{"items":null}`, checkout.EValidationFailed, []string{"required items"}},
		{"item name and amount missing", `{"items":[{}]}`, checkout.EValidationFailed,
			[]string{"required items[0].name", "required items[0].amount"}},
		{"item name null", `{"items":[{"name":null,"amount":100}]}`, checkout.EValidationFailed, []string{"required items[0].name"}},

		// Types.
		{"items object", `{"items":{}}`, checkout.EValidationFailed, []string{"invalid_type items"}},
		{"item not object", `{"items":["Sword"]}`, checkout.EValidationFailed, []string{"invalid_type items[0]"}},
		{"item name number", `{"items":[{"name":1,"amount":100}]}`, checkout.EValidationFailed, []string{"invalid_type items[0].name"}},
		{"item amount string", `{"items":[{"name":"A","amount":"100"}]}`, checkout.EValidationFailed, []string{"invalid_type items[0].amount"}},
		{"item amount fraction", `{"items":[{"name":"A","amount":100.0}]}`, checkout.EValidationFailed, []string{"invalid_type items[0].amount"}},
		{"item amount exponent", `{"items":[{"name":"A","amount":1e2}]}`, checkout.EValidationFailed, []string{"invalid_type items[0].amount"}},
		{"quantity bool", `{"items":[{"name":"A","amount":100,"quantity":true}]}`, checkout.EValidationFailed, []string{"invalid_type items[0].quantity"}},
		{"title number", body(`"title":5`), checkout.EValidationFailed, []string{"invalid_type title"}},
		{"currency array", body(`"currency":["USD"]`), checkout.EValidationFailed, []string{"invalid_type currency"}},
		{"amount string", body(`"amount":"1500"`), checkout.EValidationFailed, []string{"invalid_type amount"}},
		{"amount fraction", body(`"amount":1500.5`), checkout.EValidationFailed, []string{"invalid_type amount"}},
		{"customer string", body(`"customer":"a@b.co"`), checkout.EValidationFailed, []string{"invalid_type customer"}},
		{"metadata array", body(`"metadata":[]`), checkout.EValidationFailed, []string{"invalid_type metadata"}},
		{"metadata value number", body(`"metadata":{"a":1}`), checkout.EValidationFailed, []string{"invalid_type metadata.a"}},
		{"metadata value null", body(`"metadata":{"a":null}`), checkout.EValidationFailed, []string{"invalid_type metadata.a"}},
		{"metadata value object", body(`"metadata":{"a":{"b":"c"}}`), checkout.EValidationFailed, []string{"invalid_type metadata.a"}},
		{"return_url number", body(`"return_url":1`), checkout.EValidationFailed, []string{"invalid_type return_url"}},

		// Items: count, quantity, unit amount and total, past each bound.
		{"0 items", `{"items":[]}`, checkout.EValidationFailed, []string{"out_of_range items"}},
		{"11 items", `{"items":` + items(11) + `}`, checkout.EValidationFailed, []string{"out_of_range items"}},
		{"quantity 0", `{"items":[{"name":"A","amount":100,"quantity":0}]}`, checkout.EValidationFailed, []string{"out_of_range items[0].quantity"}},
		{"quantity 101", `{"items":[{"name":"A","amount":100,"quantity":101}]}`, checkout.EValidationFailed, []string{"out_of_range items[0].quantity"}},
		{"quantity -1", `{"items":[{"name":"A","amount":100,"quantity":-1}]}`, checkout.EValidationFailed, []string{"out_of_range items[0].quantity"}},
		{"quantity huge", `{"items":[{"name":"A","amount":100,"quantity":100000000000000000000000}]}`, checkout.EValidationFailed,
			[]string{"out_of_range items[0].quantity"}},
		{"unit amount -1", `{"items":[{"name":"A","amount":-1},{"name":"B","amount":200}]}`, checkout.EValidationFailed,
			[]string{"out_of_range items[0].amount"}},
		{"unit amount 100000001", `{"items":[{"name":"A","amount":100000001}]}`, checkout.EValidationFailed, []string{"out_of_range items[0].amount"}},
		{"unit amount hugely negative", `{"items":[{"name":"A","amount":-99999999999999999999999}]}`, checkout.EValidationFailed,
			[]string{"out_of_range items[0].amount"}},
		{"total 98", `{"items":[{"name":"A","amount":98}]}`, checkout.EValidationFailed, []string{"out_of_range items"}},
		{"total 0", `{"items":[{"name":"A","amount":0}]}`, checkout.EValidationFailed, []string{"out_of_range items"}},
		{"total 100000001", `{"items":[{"name":"A","amount":100000000},{"name":"B","amount":1}]}`, checkout.EValidationFailed,
			[]string{"out_of_range items"}},
		{"total 10^11", `{"items":[` + strings.TrimSuffix(strings.Repeat(`{"name":"A","amount":100000000,"quantity":100},`, 10), ",") + `]}`,
			checkout.EValidationFailed, []string{"out_of_range items"}},
		{"the second item's problems", `{"items":[{"name":"A","amount":100},{"name":" ","amount":100,"quantity":0,"image":"http://x.example/a.png","colour":"red"}]}`,
			checkout.EValidationFailed, []string{"unknown_field items[1].colour", "too_short items[1].name", "out_of_range items[1].quantity", "invalid_url items[1].image"}},

		// Item name.
		{"item name empty", `{"items":[{"name":"","amount":100}]}`, checkout.EValidationFailed, []string{"too_short items[0].name"}},
		{"item name blank", `{"items":[{"name":" \t ","amount":100}]}`, checkout.EValidationFailed, []string{"too_short items[0].name"}},
		{"item name 251 runes", `{"items":[{"name":"` + long("é", 251) + `","amount":100}]}`, checkout.EValidationFailed, []string{"too_long items[0].name"}},
		{"item name control character", `{"items":[{"name":"Sw\u0000ord","amount":100}]}`, checkout.EValidationFailed,
			[]string{"invalid_characters items[0].name"}},
		{"item name newline", `{"items":[{"name":"Sw\nord","amount":100}]}`, checkout.EValidationFailed, []string{"invalid_characters items[0].name"}},

		// Item image.
		{"image http", `{"items":[{"name":"A","amount":100,"image":"http://x.example/a.png"}]}`, checkout.EValidationFailed, []string{"invalid_url items[0].image"}},
		{"image relative", `{"items":[{"name":"A","amount":100,"image":"/a.png"}]}`, checkout.EValidationFailed, []string{"invalid_url items[0].image"}},
		{"image empty", `{"items":[{"name":"A","amount":100,"image":""}]}`, checkout.EValidationFailed, []string{"invalid_url items[0].image"}},

		// Title and description.
		{"title empty", body(`"title":""`), checkout.EValidationFailed, []string{"too_short title"}},
		{"title blank", body(`"title":"   "`), checkout.EValidationFailed, []string{"too_short title"}},
		{"title 129 runes", body(`"title":"` + long("😀", 129) + `"`), checkout.EValidationFailed, []string{"too_long title"}},
		{"title newline", body(`"title":"a\nb"`), checkout.EValidationFailed, []string{"invalid_characters title"}},
		{"title DEL", body(`"title":"a\u007fb"`), checkout.EValidationFailed, []string{"invalid_characters title"}},
		{"description empty", body(`"description":""`), checkout.EValidationFailed, []string{"too_short description"}},
		{"description 501 runes", body(`"description":"` + long("ü", 501) + `"`), checkout.EValidationFailed, []string{"too_long description"}},
		{"description bell", body(`"description":"ding\u0007"`), checkout.EValidationFailed, []string{"invalid_characters description"}},

		// Currency.
		{"currency 2 letters", body(`"currency":"us"`), checkout.EValidationFailed, []string{"invalid_currency currency"}},
		{"currency 4 letters", body(`"currency":"usdd"`), checkout.EValidationFailed, []string{"invalid_currency currency"}},
		{"currency unknown", body(`"currency":"ABC"`), checkout.EValidationFailed, []string{"invalid_currency currency"}},
		{"currency without minor units", body(`"currency":"XAU"`), checkout.EValidationFailed, []string{"invalid_currency currency"}},
		{"currency withdrawn", body(`"currency":"HRK"`), checkout.EValidationFailed, []string{"invalid_currency currency"}},
		{"currency digits", body(`"currency":"U5D"`), checkout.EValidationFailed, []string{"invalid_currency currency"}},
		{"currency padded", body(`"currency":" USD"`), checkout.EValidationFailed, []string{"invalid_currency currency"}},
		{"currency empty", body(`"currency":""`), checkout.EValidationFailed, []string{"invalid_currency currency"}},

		// Amount.
		{"amount mismatch alone", body(`"amount":1499`), checkout.EAmountMismatch, []string{"amount_mismatch amount"}},
		{"amount 0 mismatch", body(`"amount":0`), checkout.EAmountMismatch, []string{"amount_mismatch amount"}},
		{"amount mismatch over two items with quantities", `{"items":[{"name":"A","amount":100,"quantity":3},{"name":"B","amount":50}],"amount":300}`,
			checkout.EAmountMismatch, []string{"amount_mismatch amount"}},
		{"amount mismatch with another problem", body(`"title":"","amount":1`), checkout.EValidationFailed,
			[]string{"too_short title", "amount_mismatch amount"}},
		{"amount mismatch and total out of range", `{"items":[{"name":"A","amount":10}],"amount":99}`, checkout.EValidationFailed,
			[]string{"out_of_range items", "amount_mismatch amount"}},
		{"amount equal to an out-of-range total", `{"items":[{"name":"A","amount":10}],"amount":10}`, checkout.EValidationFailed,
			[]string{"out_of_range items"}},
		{"amount not compared with invalid items", `{"items":[{"name":"A","amount":100,"quantity":0}],"amount":1}`, checkout.EValidationFailed,
			[]string{"out_of_range items[0].quantity"}},
		{"amount negative", body(`"amount":-1500`), checkout.EValidationFailed, []string{"out_of_range amount"}},
		{"amount huge", body(`"amount":100000000000000000000`), checkout.EValidationFailed, []string{"out_of_range amount"}},

		// Customer.
		{"customer empty", body(`"customer":{}`), checkout.EValidationFailed, []string{"required customer"}},
		{"customer both null", body(`"customer":{"email":null,"name":null}`), checkout.EValidationFailed, []string{"required customer"}},
		{"customer email invalid", body(`"customer":{"email":"not an email"}`), checkout.EValidationFailed, []string{"invalid_email customer.email"}},
		{"customer email with display name", body(`"customer":{"email":"Ada <a@b.co>"}`), checkout.EValidationFailed, []string{"invalid_email customer.email"}},
		{"customer email padded", body(`"customer":{"email":" a@b.co"}`), checkout.EValidationFailed, []string{"invalid_email customer.email"}},
		{"customer email no dot in domain", body(`"customer":{"email":"a@localhost"}`), checkout.EValidationFailed, []string{"invalid_email customer.email"}},
		{"customer email literal address", body(`"customer":{"email":"a@[127.0.0.1]"}`), checkout.EValidationFailed, []string{"invalid_email customer.email"}},
		{"customer email 255", body(`"customer":{"email":"` + long("a", 64) + "@" + long("b", 186) + `.com"}`), checkout.EValidationFailed,
			[]string{"invalid_email customer.email"}},
		{"customer name 201 runes", body(`"customer":{"name":"` + long("ß", 201) + `"}`), checkout.EValidationFailed, []string{"too_long customer.name"}},
		{"customer name blank and unknown field", body(`"customer":{"name":"  ","phone":"1"}`), checkout.EValidationFailed,
			[]string{"unknown_field customer.phone", "too_short customer.name"}},

		// Metadata.
		{"metadata 21 keys", body(`"metadata":` + metadataOf(21)), checkout.EValidationFailed, []string{"too_many metadata"}},
		{"metadata key 41 runes", body(`"metadata":{"` + long("ä", 41) + `":"v"}`), checkout.EValidationFailed,
			[]string{"invalid_key metadata." + long("ä", 41)}},
		{"metadata key empty", body(`"metadata":{"":"v"}`), checkout.EValidationFailed, []string{`invalid_key metadata.""`}},
		{"field with an empty name", body(`"":1`), checkout.EValidationFailed, []string{`unknown_field ""`}},
		{"item field with an empty name", `{"items":[{"name":"A","amount":100,"":1}]}`, checkout.EValidationFailed,
			[]string{`unknown_field items[0].""`}},
		{"empty name twice", body(`"":1,"":2`), checkout.EValidationFailed, []string{`duplicate_field ""`, `unknown_field ""`}},
		{"metadata value 501 runes", body(`"metadata":{"a":"` + long("ö", 501) + `"}`), checkout.EValidationFailed, []string{"too_long metadata.a"}},
		{"metadata problems in the order written", body(`"metadata":{"z":1,"a":"` + long("x", 501) + `","m":"ok"}`), checkout.EValidationFailed,
			[]string{"invalid_type metadata.z", "too_long metadata.a"}},

		// URLs.
		{"return_url http", body(`"return_url":"http://shop.example.com"`), checkout.EValidationFailed, []string{"invalid_url return_url"}},
		{"return_url no host", body(`"return_url":"https://"`), checkout.EValidationFailed, []string{"invalid_url return_url"}},
		{"return_url relative", body(`"return_url":"/done"`), checkout.EValidationFailed, []string{"invalid_url return_url"}},
		{"return_url user info", body(`"return_url":"https://u:p@shop.example.com"`), checkout.EValidationFailed, []string{"invalid_url return_url"}},
		{"return_url space", body(`"return_url":"https://shop.example.com/a b"`), checkout.EValidationFailed, []string{"invalid_url return_url"}},
		{"return_url 2049 runes", body(`"return_url":"https://example.com/` + long("ü", 2049-len("https://example.com/")) + `"`), checkout.EValidationFailed,
			[]string{"invalid_url return_url"}},
		{"return_url 2049", body(`"return_url":"https://example.com/` + long("p", 2049-len("https://example.com/")) + `"`), checkout.EValidationFailed,
			[]string{"invalid_url return_url"}},
		{"cancel_url opaque", body(`"cancel_url":"https:shop.example.com"`), checkout.EValidationFailed, []string{"invalid_url cancel_url"}},
		{"cancel_url javascript", body(`"cancel_url":"javascript:alert(1)"`), checkout.EValidationFailed, []string{"invalid_url cancel_url"}},

		// Unknown and duplicate fields.
		{"unknown field", body(`"amout":1500`), checkout.EValidationFailed, []string{"unknown_field amout"}},
		{"unknown fields in the order written", `{"zeta":1,"items":[{"name":"A","amount":100}],"alpha":2}`, checkout.EValidationFailed,
			[]string{"unknown_field zeta", "unknown_field alpha"}},
		{"unknown field in an item", `{"items":[{"name":"A","amount":100,"price":100}]}`, checkout.EValidationFailed, []string{"unknown_field items[0].price"}},
		{"duplicate field", body(`"title":"a","title":"b"`), checkout.EValidationFailed, []string{"duplicate_field title"}},
		{"duplicate after null", body(`"title":null,"title":"b"`), checkout.EValidationFailed, []string{"duplicate_field title"}},
		{"duplicate items", `{"items":[{"name":"A","amount":100}],"items":[{"name":"B","amount":200}]}`, checkout.EValidationFailed,
			[]string{"duplicate_field items"}},
		{"duplicate in an item", `{"items":[{"name":"A","amount":100,"amount":200}]}`, checkout.EValidationFailed,
			[]string{"duplicate_field items[0].amount"}},
		{"duplicate metadata key", body(`"metadata":{"a":"1","a":"2"}`), checkout.EValidationFailed, []string{"duplicate_field metadata.a"}},
		{"duplicate with amount mismatch", body(`"amount":1,"amount":1`), checkout.EValidationFailed,
			[]string{"duplicate_field amount", "amount_mismatch amount"}},

		// Several problems at once: all reported, Param the first.
		{"several problems", `{"items":[{"name":"","amount":-5,"quantity":500}],"title":"","currency":"usdollar","customer":{"email":"x"},"metadata":{"k":1},"return_url":"ftp://x","cancel_url":"http://y","extra":true}`,
			checkout.EValidationFailed, []string{
				"unknown_field extra",
				"too_short items[0].name", "out_of_range items[0].amount", "out_of_range items[0].quantity",
				"too_short title", "invalid_currency currency", "invalid_email customer.email", "invalid_type metadata.k",
				"invalid_url return_url", "invalid_url cancel_url",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkout.ParseCreateRequest([]byte(tt.body))
			if err == nil {
				t.Fatalf("ParseCreateRequest(%s) = %s; want %s", tt.body, dump(got), tt.code)
			}
			var ce *checkout.Error
			if !errors.As(err, &ce) {
				t.Fatalf("ParseCreateRequest(%s) = %T %v; want *checkout.Error", tt.body, err, err)
			}
			if ce.Code != tt.code {
				t.Errorf("ParseCreateRequest(%s) code = %s (%v); want %s", tt.body, ce.Code, err, tt.code)
			}
			if ce.Message == "" {
				t.Errorf("ParseCreateRequest(%s): empty message", tt.body)
			}
			if gotP := problems(err); !reflect.DeepEqual(gotP, tt.problems) {
				t.Errorf("ParseCreateRequest(%s) problems =\n  %q\nwant\n  %q", tt.body, gotP, tt.problems)
			}
			wantParam := ""
			if len(tt.problems) > 0 {
				_, wantParam, _ = strings.Cut(tt.problems[0], " ")
			}
			if ce.Param != wantParam {
				t.Errorf("ParseCreateRequest(%s) param = %q; want %q", tt.body, ce.Param, wantParam)
			}
			for _, d := range ce.Details {
				if d.Message == "" {
					t.Errorf("ParseCreateRequest(%s): detail %+v has no message", tt.body, d)
				}
			}
			if len(ce.Details) > 1 && !strings.Contains(ce.Message, fmt.Sprintf("%d problems", len(ce.Details))) {
				t.Errorf("ParseCreateRequest(%s) message = %q; want it to count %d problems", tt.body, ce.Message, len(ce.Details))
			}
		})
	}
}

// The messages name the offending value where that helps: the count, the
// total, the characters.
func TestParseCreateRequestMessages(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{body(`"amount":1499`), "amount is 1499 but the items total is 1500."},
		{`{"items":[{"name":"A","amount":98}]}`, "it is 98."},
		{body(`"title":"` + strings.Repeat("é", 129) + `"`), "it has 129."},
		{`{"items":` + items(11) + `}`, "it holds 11."},
		{body(`"currency":"abc"`), `got "abc"`},
		{`{"items":[{"name":"A","amount":1.5}]}`, "got 1.5"},
		{`{"items":[{"name":"A","amount":100,"quantity":101}]}`, "items[0].quantity must be between 1 and 100; got 101."},
		{`{"items":[1]}`, "items[0] must be an object, not a number."},
		{`{"items":`, "ends too early"},
		{`{"items":[]}x`, "there is more after it"},
	}
	for _, tt := range tests {
		_, err := checkout.ParseCreateRequest([]byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCreateRequest(%s) = %v; want a message containing %q", tt.body, err, tt.want)
		}
	}
}

// The items total cannot overflow: the largest valid unit amount, quantity
// and count give 10^11, reported as out of range.
func TestItemsTotal(t *testing.T) {
	tests := []struct {
		items []checkout.Item
		want  int64
	}{
		{nil, 0},
		{[]checkout.Item{{Amount: 1500, Quantity: 2}, {Amount: 250, Quantity: 1}}, 3250},
		{[]checkout.Item{{Amount: 0, Quantity: 100}}, 0},
		{slicesRepeat(checkout.Item{Amount: checkout.MaxTotal, Quantity: checkout.MaxQuantity}, checkout.MaxItems), 100_000_000_000},
	}
	for _, tt := range tests {
		if got := checkout.ItemsTotal(tt.items); got != tt.want {
			t.Errorf("ItemsTotal(%v) = %d; want %d", tt.items, got, tt.want)
		}
	}
}

func slicesRepeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}
