package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// item is one item of unit amount, with the extra fields (a JSON object's
// inside, "" for none).
func item(amount int64, extra string) string {
	if extra == "" {
		return fmt.Sprintf(`{"name":"Sword","amount":%d}`, amount)
	}
	return fmt.Sprintf(`{"name":"Sword","amount":%d,%s}`, amount, extra)
}

// withItems is a create request of the items.
func withItems(items ...string) string {
	return `{"items":[` + strings.Join(items, ",") + `]}`
}

// nItems is a create request of n items of unit amount 100.
func nItems(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = item(100, "")
	}
	return withItems(items...)
}

// with is a create request of one 1500 item with the extra fields.
func with(extra string) string {
	return `{"items":[{"name":"Sword","amount":1500}],` + extra + `}`
}

// withItem is a create request of one item with the extra item fields.
func withItem(extra string) string {
	return withItems(item(1500, extra))
}

// str is s as a JSON string.
func str(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// rep is s repeated n times: text of n characters when s is one.
func rep(s string, n int) string { return strings.Repeat(s, n) }

// urlOfLen returns an https URL of n characters whose path is made of c.
func urlOfLen(n int, c string) string {
	const base = "https://shop.example/"
	return base + rep(c, n-len(base))
}

// emailOfLen returns a valid email address of exactly n characters whose
// local part is 64 c, with DNS labels of at most 61 characters.
func emailOfLen(n int, c string) string {
	local, tld := rep(c, 64)+"@", ".com"
	var b strings.Builder
	b.WriteString(local)
	for r := n - 65 - len(tld); r > 0; {
		if r <= 61 {
			b.WriteString(rep("x", r))
			break
		}
		b.WriteString(rep("x", 60) + ".")
		r -= 61
	}
	b.WriteString(tld)
	return b.String()
}

// metadataOf is a metadata object of n keys k0..kn-1, each with value "v".
func metadataOf(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// short shortens a request body for a failure message.
func short(s string) string {
	if len(s) > 160 {
		return s[:120] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

// violations lists the details of an error as "code param".
func violations(e envelope) []string {
	var out []string
	for _, d := range e.Error.Details {
		out = append(out, d.Code+" "+d.Param)
	}
	return out
}

// with returns the harness for another (sub)test: the same server, store
// and key, failing t.
func (h *harness) with(t *testing.T) *harness {
	hh := *h
	hh.t = t
	return &hh
}

// A create request with a body that breaks a field rule of SPEC.md or
// DESIGN.md section 4 answers 400 listing every violation, with param the
// first; a body that keeps every rule creates a session. Every limit is
// tried on both sides of its bound, and lengths in characters (code points)
// with multibyte text at the bound.
func TestCreateValidation(t *testing.T) {
	type check func(s checkout.SessionJSON) bool
	tests := []struct {
		name string
		body string
		// want lists the violations, "code param", in any order; empty
		// for a request that creates a session.
		want []string
		// ok, when set, checks the session created.
		ok check
	}{
		// items: 1 to 10.
		{"items missing", `{}`, []string{"required items"}, nil},
		{"items null", `{"items":null}`, []string{"required items"}, nil},
		{"items not an array", `{"items":{"name":"Sword","amount":1500}}`, []string{"invalid_type items"}, nil},
		{"0 items", `{"items":[]}`, []string{"out_of_range items"}, nil},
		{"1 item", nItems(1), nil, func(s checkout.SessionJSON) bool { return len(s.Items) == 1 && s.Amount == 100 }},
		{"10 items", nItems(10), nil, func(s checkout.SessionJSON) bool { return len(s.Items) == 10 && s.Amount == 1000 }},
		{"11 items", nItems(11), []string{"out_of_range items"}, nil},
		{"item not an object", `{"items":["Sword"]}`, []string{"invalid_type items[0]"}, nil},
		{"item null", `{"items":[null]}`, []string{"invalid_type items[0]"}, nil},

		// items[].quantity: 1 to 100, 1 when not sent.
		{"quantity 0", withItem(`"quantity":0`), []string{"out_of_range items[0].quantity"}, nil},
		{"quantity 1", withItem(`"quantity":1`), nil, func(s checkout.SessionJSON) bool { return s.Items[0].Quantity == 1 && s.Amount == 1500 }},
		{"quantity 100", withItem(`"quantity":100`), nil, func(s checkout.SessionJSON) bool { return s.Items[0].Quantity == 100 && s.Amount == 150000 }},
		{"quantity 101", withItem(`"quantity":101`), []string{"out_of_range items[0].quantity"}, nil},
		{"quantity -1", withItem(`"quantity":-1`), []string{"out_of_range items[0].quantity"}, nil},
		{"quantity not sent", withItem(""), nil, func(s checkout.SessionJSON) bool { return s.Items[0].Quantity == 1 }},
		{"quantity null", withItem(`"quantity":null`), nil, func(s checkout.SessionJSON) bool { return s.Items[0].Quantity == 1 }},
		{"quantity 2.0", withItem(`"quantity":2.0`), []string{"invalid_type items[0].quantity"}, nil},
		{"quantity a string", withItem(`"quantity":"2"`), []string{"invalid_type items[0].quantity"}, nil},

		// The items total: 99 to 100000000.
		{"total 98", withItems(item(98, "")), []string{"out_of_range items"}, nil},
		{"total 99", withItems(item(99, "")), nil, func(s checkout.SessionJSON) bool { return s.Amount == 99 && s.TotalAmount == 99 }},
		{"total 100000000", withItems(item(100000000, "")), nil, func(s checkout.SessionJSON) bool { return s.Amount == 100000000 }},
		{"total 100000001", withItems(item(50000000, ""), item(50000001, "")), []string{"out_of_range items"}, nil},
		{"total 98 by quantity", withItems(item(49, `"quantity":2`)), []string{"out_of_range items"}, nil},
		{"total 99 by quantity", withItems(item(33, `"quantity":3`)), nil, func(s checkout.SessionJSON) bool { return s.Amount == 99 }},
		{"total 100000000 by quantity", withItems(item(1000000, `"quantity":100`)), nil, func(s checkout.SessionJSON) bool { return s.Amount == 100000000 }},
		{"total 100000001 by quantity", withItems(item(1000000, `"quantity":100`), item(1, "")), []string{"out_of_range items"}, nil},
		{"total of every item at its maximum", withItems(slices.Repeat([]string{item(100000000, `"quantity":100`)}, 10)...), []string{"out_of_range items"}, nil},
		{"an item of amount 0", withItems(item(0, ""), item(1500, "")), nil, func(s checkout.SessionJSON) bool { return s.Items[0].Amount == 0 && s.Amount == 1500 }},
		{"every item of amount 0", withItems(item(0, "")), []string{"out_of_range items"}, nil},

		// items[].amount: an integer, 0 to 100000000.
		{"amount missing", `{"items":[{"name":"Sword"}]}`, []string{"required items[0].amount"}, nil},
		{"amount null", `{"items":[{"name":"Sword","amount":null}]}`, []string{"required items[0].amount"}, nil},
		{"amount -1", withItems(item(-1, "")), []string{"out_of_range items[0].amount"}, nil},
		{"amount 100000001", withItems(item(100000001, "")), []string{"out_of_range items[0].amount"}, nil},
		{"amount 1500.0", `{"items":[{"name":"Sword","amount":1500.0}]}`, []string{"invalid_type items[0].amount"}, nil},
		{"amount 1.5e3", `{"items":[{"name":"Sword","amount":1.5e3}]}`, []string{"invalid_type items[0].amount"}, nil},
		{"amount 15E2", `{"items":[{"name":"Sword","amount":15E2}]}`, []string{"invalid_type items[0].amount"}, nil},
		{"amount a string", `{"items":[{"name":"Sword","amount":"1500"}]}`, []string{"invalid_type items[0].amount"}, nil},
		{"amount beyond int64", `{"items":[{"name":"Sword","amount":99999999999999999999}]}`, []string{"out_of_range items[0].amount"}, nil},
		{"amount below int64", `{"items":[{"name":"Sword","amount":-99999999999999999999}]}`, []string{"out_of_range items[0].amount"}, nil},

		// items[].name: 1 to 250 characters after trimming, no control
		// characters.
		{"name missing", `{"items":[{"amount":1500}]}`, []string{"required items[0].name"}, nil},
		{"name empty", `{"items":[{"name":"","amount":1500}]}`, []string{"too_short items[0].name"}, nil},
		{"name white space only", `{"items":[{"name":" \t\n ","amount":1500}]}`, []string{"too_short items[0].name"}, nil},
		{"name 1 character", `{"items":[{"name":"S","amount":1500}]}`, nil, func(s checkout.SessionJSON) bool { return s.Items[0].Name == "S" }},
		{"name 250 characters", `{"items":[{"name":"` + rep("n", 250) + `","amount":1500}]}`, nil, func(s checkout.SessionJSON) bool { return s.Items[0].Name == rep("n", 250) }},
		{"name 251 characters", `{"items":[{"name":"` + rep("n", 251) + `","amount":1500}]}`, []string{"too_long items[0].name"}, nil},
		{"name 250 three-byte characters", `{"items":[{"name":"` + rep("€", 250) + `","amount":1500}]}`, nil, func(s checkout.SessionJSON) bool { return s.Items[0].Name == rep("€", 250) }},
		{"name 251 three-byte characters", `{"items":[{"name":"` + rep("€", 251) + `","amount":1500}]}`, []string{"too_long items[0].name"}, nil},
		{"name 250 four-byte characters", `{"items":[{"name":"` + rep("🗡", 250) + `","amount":1500}]}`, nil, func(s checkout.SessionJSON) bool { return s.Items[0].Name == rep("🗡", 250) }},
		{"name 250 characters and spaces around", `{"items":[{"name":"  ` + rep("n", 250) + `  ","amount":1500}]}`, nil, func(s checkout.SessionJSON) bool { return s.Items[0].Name == rep("n", 250) }},
		{"name trimmed", `{"items":[{"name":"  Sword \n","amount":1500}]}`, nil, func(s checkout.SessionJSON) bool { return s.Items[0].Name == "Sword" }},
		{"name with NUL", `{"items":[{"name":"Sw\u0000ord","amount":1500}]}`, []string{"invalid_characters items[0].name"}, nil},
		{"name with a line break", `{"items":[{"name":"Sw\nord","amount":1500}]}`, []string{"invalid_characters items[0].name"}, nil},
		{"name with a tab", `{"items":[{"name":"Sw\tord","amount":1500}]}`, []string{"invalid_characters items[0].name"}, nil},
		{"name with DEL", `{"items":[{"name":"Sword\u007f!","amount":1500}]}`, []string{"invalid_characters items[0].name"}, nil},
		{"name with a C1 control", `{"items":[{"name":"Sw\u0085ord","amount":1500}]}`, []string{"invalid_characters items[0].name"}, nil},
		{"name a number", `{"items":[{"name":7,"amount":1500}]}`, []string{"invalid_type items[0].name"}, nil},

		// items[].image: an absolute https URL of at most 2048 characters.
		{"image https", withItem(`"image":"https://cdn.example/sword.png"`), nil, func(s checkout.SessionJSON) bool {
			return s.Items[0].Image != nil && *s.Items[0].Image == "https://cdn.example/sword.png"
		}},
		{"image not sent", withItem(""), nil, func(s checkout.SessionJSON) bool { return s.Items[0].Image == nil }},
		{"image null", withItem(`"image":null`), nil, func(s checkout.SessionJSON) bool { return s.Items[0].Image == nil }},
		{"image http", withItem(`"image":"http://cdn.example/sword.png"`), []string{"invalid_url items[0].image"}, nil},
		{"image relative", withItem(`"image":"/sword.png"`), []string{"invalid_url items[0].image"}, nil},
		{"image without a host", withItem(`"image":"https:///sword.png"`), []string{"invalid_url items[0].image"}, nil},
		{"image with user information", withItem(`"image":"https://u:p@cdn.example/sword.png"`), []string{"invalid_url items[0].image"}, nil},
		{"image javascript", withItem(`"image":"javascript:alert(1)"`), []string{"invalid_url items[0].image"}, nil},
		{"image with a space", withItem(`"image":"https://cdn.example/a sword.png"`), []string{"invalid_url items[0].image"}, nil},
		{"image 2048 characters", withItem(`"image":` + str(urlOfLen(2048, "i"))), nil, func(s checkout.SessionJSON) bool { return *s.Items[0].Image == urlOfLen(2048, "i") }},
		{"image 2049 characters", withItem(`"image":` + str(urlOfLen(2049, "i"))), []string{"invalid_url items[0].image"}, nil},
		{"image 2048 two-byte characters", withItem(`"image":` + str(urlOfLen(2048, "é"))), nil, func(s checkout.SessionJSON) bool { return *s.Items[0].Image == urlOfLen(2048, "é") }},
		{"image 2049 two-byte characters", withItem(`"image":` + str(urlOfLen(2049, "é"))), []string{"invalid_url items[0].image"}, nil},
		{"image a number", withItem(`"image":1`), []string{"invalid_type items[0].image"}, nil},

		// title: 1 to 128 characters after trimming; the store name when
		// not sent.
		{"title not sent", nItems(1), nil, func(s checkout.SessionJSON) bool { return s.Title == "Acme Games" }},
		{"title null", with(`"title":null`), nil, func(s checkout.SessionJSON) bool { return s.Title == "Acme Games" }},
		{"title empty", with(`"title":""`), []string{"too_short title"}, nil},
		{"title white space only", with(`"title":"   "`), []string{"too_short title"}, nil},
		{"title 1 character", with(`"title":"T"`), nil, func(s checkout.SessionJSON) bool { return s.Title == "T" }},
		{"title 128 characters", with(`"title":` + str(rep("t", 128))), nil, func(s checkout.SessionJSON) bool { return s.Title == rep("t", 128) }},
		{"title 129 characters", with(`"title":` + str(rep("t", 129))), []string{"too_long title"}, nil},
		{"title 128 two-byte characters", with(`"title":` + str(rep("é", 128))), nil, func(s checkout.SessionJSON) bool { return s.Title == rep("é", 128) }},
		{"title 129 two-byte characters", with(`"title":` + str(rep("é", 129))), []string{"too_long title"}, nil},
		{"title trimmed", with(`"title":"  Order 42  "`), nil, func(s checkout.SessionJSON) bool { return s.Title == "Order 42" }},
		{"title with a line break", with(`"title":"Order\n42"`), []string{"invalid_characters title"}, nil},
		{"title a number", with(`"title":42`), []string{"invalid_type title"}, nil},

		// description: 1 to 500 characters after trimming; null when not
		// sent; line breaks and tabs allowed.
		{"description not sent", nItems(1), nil, func(s checkout.SessionJSON) bool { return s.Description == nil }},
		{"description null", with(`"description":null`), nil, func(s checkout.SessionJSON) bool { return s.Description == nil }},
		{"description empty", with(`"description":""`), []string{"too_short description"}, nil},
		{"description white space only", with(`"description":" \n "`), []string{"too_short description"}, nil},
		{"description 1 character", with(`"description":"d"`), nil, func(s checkout.SessionJSON) bool { return *s.Description == "d" }},
		{"description 500 characters", with(`"description":` + str(rep("d", 500))), nil, func(s checkout.SessionJSON) bool { return *s.Description == rep("d", 500) }},
		{"description 501 characters", with(`"description":` + str(rep("d", 501))), []string{"too_long description"}, nil},
		{"description 500 three-byte characters", with(`"description":` + str(rep("説", 500))), nil, func(s checkout.SessionJSON) bool { return *s.Description == rep("説", 500) }},
		{"description 501 three-byte characters", with(`"description":` + str(rep("説", 501))), []string{"too_long description"}, nil},
		{"description with line breaks and tabs", with(`"description":"one\r\ntwo\tthree"`), nil, func(s checkout.SessionJSON) bool { return *s.Description == "one\r\ntwo\tthree" }},
		{"description with a bell", with(`"description":"ding\u0007"`), []string{"invalid_characters description"}, nil},
		{"description a number", with(`"description":1`), []string{"invalid_type description"}, nil},

		// currency: an ISO 4217 code (the real list), any case; returned
		// upper case; the store's when not sent.
		{"currency not sent", nItems(1), nil, func(s checkout.SessionJSON) bool { return s.Currency == "USD" }},
		{"currency null", with(`"currency":null`), nil, func(s checkout.SessionJSON) bool { return s.Currency == "USD" }},
		{"currency EUR", with(`"currency":"EUR"`), nil, func(s checkout.SessionJSON) bool { return s.Currency == "EUR" }},
		{"currency eur", with(`"currency":"eur"`), nil, func(s checkout.SessionJSON) bool { return s.Currency == "EUR" }},
		{"currency eUr", with(`"currency":"eUr"`), nil, func(s checkout.SessionJSON) bool { return s.Currency == "EUR" }},
		{"currency JPY", with(`"currency":"jpy"`), nil, func(s checkout.SessionJSON) bool { return s.Currency == "JPY" }},
		{"currency XYZ", with(`"currency":"XYZ"`), []string{"invalid_currency currency"}, nil},
		{"currency XAU (no minor unit)", with(`"currency":"XAU"`), []string{"invalid_currency currency"}, nil},
		{"currency HRK (withdrawn)", with(`"currency":"HRK"`), []string{"invalid_currency currency"}, nil},
		{"currency of 2 letters", with(`"currency":"EU"`), []string{"invalid_currency currency"}, nil},
		{"currency of 4 letters", with(`"currency":"EURO"`), []string{"invalid_currency currency"}, nil},
		{"currency with a digit", with(`"currency":"E1R"`), []string{"invalid_currency currency"}, nil},
		{"currency with a space", with(`"currency":" EUR"`), []string{"invalid_currency currency"}, nil},
		{"currency empty", with(`"currency":""`), []string{"invalid_currency currency"}, nil},
		{"currency a number", with(`"currency":978`), []string{"invalid_type currency"}, nil},

		// amount: when sent, equal to the items total.
		{"amount equal", with(`"amount":1500`), nil, func(s checkout.SessionJSON) bool { return s.Amount == 1500 && s.TotalAmount == 1500 }},
		{"amount equal across quantities", `{"items":[{"name":"A","amount":1500,"quantity":2},{"name":"B","amount":250}],"amount":3250}`, nil, func(s checkout.SessionJSON) bool { return s.Amount == 3250 }},
		{"amount null", with(`"amount":null`), nil, func(s checkout.SessionJSON) bool { return s.Amount == 1500 }},
		{"amount mismatch", with(`"amount":1499`), []string{"amount_mismatch amount"}, nil},
		{"amount mismatch by quantity", `{"items":[{"name":"A","amount":1500,"quantity":2}],"amount":1500}`, []string{"amount_mismatch amount"}, nil},
		{"amount mismatch and another problem", with(`"amount":1499,"title":""`), []string{"too_short title", "amount_mismatch amount"}, nil},
		{"amount mismatch and a total out of range", `{"items":[{"name":"A","amount":98}],"amount":99}`, []string{"out_of_range items", "amount_mismatch amount"}, nil},
		{"amount with broken items", `{"items":[{"name":"A","amount":1500,"quantity":0}],"amount":1}`, []string{"out_of_range items[0].quantity"}, nil},
		{"amount 1500.0", with(`"amount":1500.0`), []string{"invalid_type amount"}, nil},
		{"amount -1", with(`"amount":-1`), []string{"out_of_range amount"}, nil},
		{"amount a string", with(`"amount":"1500"`), []string{"invalid_type amount"}, nil},

		// customer: email and/or name, at least one.
		{"customer not sent", nItems(1), nil, func(s checkout.SessionJSON) bool { return s.Customer.Email == nil && s.Customer.Name == nil }},
		{"customer null", with(`"customer":null`), nil, func(s checkout.SessionJSON) bool { return s.Customer.Email == nil && s.Customer.Name == nil }},
		{"customer empty", with(`"customer":{}`), []string{"required customer"}, nil},
		{"customer of nulls", with(`"customer":{"email":null,"name":null}`), []string{"required customer"}, nil},
		{"customer email only", with(`"customer":{"email":"buyer@example.com"}`), nil, func(s checkout.SessionJSON) bool {
			return *s.Customer.Email == "buyer@example.com" && s.Customer.Name == nil
		}},
		{"customer name only", with(`"customer":{"name":" Ada "}`), nil, func(s checkout.SessionJSON) bool { return s.Customer.Email == nil && *s.Customer.Name == "Ada" }},
		{"customer email and name", with(`"customer":{"email":"buyer@example.com","name":"Ada"}`), nil, func(s checkout.SessionJSON) bool {
			return *s.Customer.Email == "buyer@example.com" && *s.Customer.Name == "Ada"
		}},
		{"customer email not an address", with(`"customer":{"email":"not-an-email"}`), []string{"invalid_email customer.email"}, nil},
		{"customer email with a display name", with(`"customer":{"email":"Ada <ada@example.com>"}`), []string{"invalid_email customer.email"}, nil},
		{"customer email two addresses", with(`"customer":{"email":"a@example.com, b@example.com"}`), []string{"invalid_email customer.email"}, nil},
		{"customer email without a domain name", with(`"customer":{"email":"ada@localhost"}`), []string{"invalid_email customer.email"}, nil},
		{"customer email at an address literal", with(`"customer":{"email":"ada@[192.0.2.1]"}`), []string{"invalid_email customer.email"}, nil},
		{"customer email with a space", with(`"customer":{"email":"ada@example.com "}`), []string{"invalid_email customer.email"}, nil},
		{"customer email 254 characters", with(`"customer":{"email":` + str(emailOfLen(254, "b")) + `}`), nil, func(s checkout.SessionJSON) bool { return *s.Customer.Email == emailOfLen(254, "b") }},
		{"customer email 255 characters", with(`"customer":{"email":` + str(emailOfLen(255, "b")) + `}`), []string{"invalid_email customer.email"}, nil},
		{"customer email 254 characters, some of two bytes", with(`"customer":{"email":` + str(emailOfLen(254, "ü")) + `}`), nil, func(s checkout.SessionJSON) bool { return *s.Customer.Email == emailOfLen(254, "ü") }},
		{"customer email 255 characters, some of two bytes", with(`"customer":{"email":` + str(emailOfLen(255, "ü")) + `}`), []string{"invalid_email customer.email"}, nil},
		{"customer email a number", with(`"customer":{"email":1}`), []string{"invalid_type customer.email"}, nil},
		{"customer name empty", with(`"customer":{"name":""}`), []string{"too_short customer.name"}, nil},
		{"customer name white space only", with(`"customer":{"name":"  "}`), []string{"too_short customer.name"}, nil},
		{"customer name 200 characters", with(`"customer":{"name":` + str(rep("a", 200)) + `}`), nil, func(s checkout.SessionJSON) bool { return *s.Customer.Name == rep("a", 200) }},
		{"customer name 201 characters", with(`"customer":{"name":` + str(rep("a", 201)) + `}`), []string{"too_long customer.name"}, nil},
		{"customer name 200 two-byte characters", with(`"customer":{"name":` + str(rep("ø", 200)) + `}`), nil, func(s checkout.SessionJSON) bool { return *s.Customer.Name == rep("ø", 200) }},
		{"customer name 201 two-byte characters", with(`"customer":{"name":` + str(rep("ø", 201)) + `}`), []string{"too_long customer.name"}, nil},
		{"customer name with a control character", with(`"customer":{"name":"A\u0001da"}`), []string{"invalid_characters customer.name"}, nil},
		{"customer unknown field", with(`"customer":{"email":"buyer@example.com","phone":"1"}`), []string{"unknown_field customer.phone"}, nil},
		{"customer a string", with(`"customer":"buyer@example.com"`), []string{"invalid_type customer"}, nil},

		// metadata: at most 20 keys of 1 to 40 characters, string values of
		// at most 500; returned as sent.
		{"metadata not sent", nItems(1), nil, func(s checkout.SessionJSON) bool { return s.Metadata != nil && len(s.Metadata) == 0 }},
		{"metadata null", with(`"metadata":null`), nil, func(s checkout.SessionJSON) bool { return s.Metadata != nil && len(s.Metadata) == 0 }},
		{"metadata empty", with(`"metadata":{}`), nil, func(s checkout.SessionJSON) bool { return s.Metadata != nil && len(s.Metadata) == 0 }},
		{"metadata 20 keys", with(`"metadata":` + metadataOf(20)), nil, func(s checkout.SessionJSON) bool { return len(s.Metadata) == 20 && s.Metadata["k19"] == "v" }},
		{"metadata 21 keys", with(`"metadata":` + metadataOf(21)), []string{"too_many metadata"}, nil},
		{"metadata key 40 characters", with(`"metadata":{` + str(rep("k", 40)) + `:"v"}`), nil, func(s checkout.SessionJSON) bool { return s.Metadata[rep("k", 40)] == "v" }},
		{"metadata key 41 characters", with(`"metadata":{` + str(rep("k", 41)) + `:"v"}`), []string{"invalid_key metadata." + rep("k", 41)}, nil},
		{"metadata key 40 two-byte characters", with(`"metadata":{` + str(rep("ключ", 10)) + `:"v"}`), nil, func(s checkout.SessionJSON) bool { return s.Metadata[rep("ключ", 10)] == "v" }},
		{"metadata key 41 two-byte characters", with(`"metadata":{` + str(rep("ключ", 10)+"ь") + `:"v"}`), []string{"invalid_key metadata." + rep("ключ", 10) + "ь"}, nil},
		{"metadata key empty", with(`"metadata":{"":"v"}`), []string{`invalid_key metadata.""`}, nil},
		{"metadata value empty", with(`"metadata":{"k":""}`), nil, func(s checkout.SessionJSON) bool { v, ok := s.Metadata["k"]; return ok && v == "" }},
		{"metadata value 500 characters", with(`"metadata":{"k":` + str(rep("v", 500)) + `}`), nil, func(s checkout.SessionJSON) bool { return s.Metadata["k"] == rep("v", 500) }},
		{"metadata value 501 characters", with(`"metadata":{"k":` + str(rep("v", 501)) + `}`), []string{"too_long metadata.k"}, nil},
		{"metadata value 500 four-byte characters", with(`"metadata":{"k":` + str(rep("🧾", 500)) + `}`), nil, func(s checkout.SessionJSON) bool { return s.Metadata["k"] == rep("🧾", 500) }},
		{"metadata value 501 four-byte characters", with(`"metadata":{"k":` + str(rep("🧾", 501)) + `}`), []string{"too_long metadata.k"}, nil},
		{"metadata value a number", with(`"metadata":{"order":42}`), []string{"invalid_type metadata.order"}, nil},
		{"metadata value a boolean", with(`"metadata":{"gift":true}`), []string{"invalid_type metadata.gift"}, nil},
		{"metadata value null", with(`"metadata":{"note":null}`), []string{"invalid_type metadata.note"}, nil},
		{"metadata value an object", with(`"metadata":{"a":{"b":"c"}}`), []string{"invalid_type metadata.a"}, nil},
		{"metadata an array", with(`"metadata":["a"]`), []string{"invalid_type metadata"}, nil},
		{"metadata returned as sent", with(`"metadata":{"order_id":"42","a.b[0]":"x y","emoji 🎮":"✓","multi":"line\nbreak"}`), nil, func(s checkout.SessionJSON) bool {
			return reflect.DeepEqual(s.Metadata, map[string]string{"order_id": "42", "a.b[0]": "x y", "emoji 🎮": "✓", "multi": "line\nbreak"})
		}},

		// unknown and duplicate fields.
		{"unknown field", with(`"foo":1`), []string{"unknown_field foo"}, nil},
		{"a misspelt field", with(`"retrun_url":"https://shop.example/thanks"`), []string{"unknown_field retrun_url"}, nil},
		{"an output field", with(`"livemode":true`), []string{"unknown_field livemode"}, nil},
		{"unknown item field", withItem(`"price":1500`), []string{"unknown_field items[0].price"}, nil},
		{"duplicate field", with(`"title":"A","title":"B"`), []string{"duplicate_field title"}, nil},
		{"duplicate field of the same value", with(`"title":"A","title":"A"`), []string{"duplicate_field title"}, nil},
		{"duplicate item field", `{"items":[{"name":"Sword","amount":1500,"amount":1}]}`, []string{"duplicate_field items[0].amount"}, nil},
		{"duplicate metadata key", with(`"metadata":{"k":"1","k":"2"}`), []string{"duplicate_field metadata.k"}, nil},
		{"duplicate items", `{"items":[{"name":"Sword","amount":1500}],"items":[{"name":"Sword","amount":1500}]}`, []string{"duplicate_field items"}, nil},
	}
	for _, f := range []string{"return_url", "cancel_url"} {
		get := func(s checkout.SessionJSON) *string {
			if f == "return_url" {
				return s.ReturnURL
			}
			return s.CancelURL
		}
		is := func(want string) check {
			return func(s checkout.SessionJSON) bool { return get(s) != nil && *get(s) == want }
		}
		tests = append(tests, []struct {
			name string
			body string
			want []string
			ok   check
		}{
			{f + " https", with(`"` + f + `":"https://shop.example/thanks"`), nil, is("https://shop.example/thanks")},
			{f + " with a query and a fragment", with(`"` + f + `":"https://shop.example/r?order=42&x=%20#top"`), nil, is("https://shop.example/r?order=42&x=%20#top")},
			{f + " not sent", nItems(1), nil, func(s checkout.SessionJSON) bool { return get(s) == nil }},
			{f + " null", with(`"` + f + `":null`), nil, func(s checkout.SessionJSON) bool { return get(s) == nil }},
			{f + " http", with(`"` + f + `":"http://shop.example/thanks"`), []string{"invalid_url " + f}, nil},
			{f + " relative", with(`"` + f + `":"/thanks"`), []string{"invalid_url " + f}, nil},
			{f + " scheme-relative", with(`"` + f + `":"//shop.example/thanks"`), []string{"invalid_url " + f}, nil},
			{f + " with user information", with(`"` + f + `":"https://me@shop.example/thanks"`), []string{"invalid_url " + f}, nil},
			{f + " 2048 characters", with(`"` + f + `":` + str(urlOfLen(2048, "p"))), nil, is(urlOfLen(2048, "p"))},
			{f + " 2049 characters", with(`"` + f + `":` + str(urlOfLen(2049, "p"))), []string{"invalid_url " + f}, nil},
			{f + " 2048 two-byte characters", with(`"` + f + `":` + str(urlOfLen(2048, "ü"))), nil, is(urlOfLen(2048, "ü"))},
			{f + " 2049 two-byte characters", with(`"` + f + `":` + str(urlOfLen(2049, "ü"))), []string{"invalid_url " + f}, nil},
			{f + " empty", with(`"` + f + `":""`), []string{"invalid_url " + f}, nil},
			{f + " a number", with(`"` + f + `":1`), []string{"invalid_type " + f}, nil},
		}...)
	}

	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := h.with(t).post(tt.body)
				e := r.envelope(t)
				if len(tt.want) == 0 {
					if r.Status != http.StatusCreated {
						t.Fatalf("Create(%s) = %d %s; want 201", short(tt.body), r.Status, r.Body)
					}
					var s checkout.SessionJSON
					if err := json.Unmarshal(e.Data, &s); err != nil {
						t.Fatal(err)
					}
					if tt.ok != nil && !tt.ok(s) {
						t.Errorf("Create(%s) = %s; not the session wanted", short(tt.body), short(string(e.Data)))
					}
					return
				}
				code := checkout.EValidationFailed
				if len(tt.want) == 1 && strings.HasPrefix(tt.want[0], "amount_mismatch ") {
					code = checkout.EAmountMismatch
				}
				if r.Status != http.StatusBadRequest || e.Error == nil || e.Error.Code != code {
					t.Fatalf("Create(%s) = %d %s; want 400 %s", short(tt.body), r.Status, short(string(r.Body)), code)
				}
				got := violations(e)
				if !sameSet(got, tt.want) {
					t.Errorf("Create(%s) details = %q; want %q", short(tt.body), got, tt.want)
				}
				if len(e.Error.Details) > 0 && e.Error.Param != e.Error.Details[0].Param {
					t.Errorf("Create(%s) param = %q; want the first violation's, %q", short(tt.body), e.Error.Param, e.Error.Details[0].Param)
				}
				for _, d := range e.Error.Details {
					if d.Message == "" {
						t.Errorf("Create(%s): violation %s %s has no message", short(tt.body), d.Code, d.Param)
					}
				}
			})
		}
	})
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// A request with many problems answers them all at once: details lists every
// violation, param names the first as a path, and the message says how many.
func TestCreateReportsEveryViolation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		body := `{
			"items": [
				{"name": "Sword", "amount": 1500},
				{"name": "Shield", "amount": 250},
				{"name": "Bow", "amount": 900, "quantity": 0, "image": "http://cdn.example/bow.png"}
			],
			"title": "",
			"currency": "XYZ",
			"customer": {},
			"metadata": {"` + rep("k", 41) + `": "v"},
			"return_url": "http://shop.example/thanks"
		}`
		r := h.post(body)
		e := wantError(t, r, http.StatusBadRequest, checkout.EValidationFailed)
		want := []string{
			"out_of_range items[2].quantity",
			"invalid_url items[2].image",
			"too_short title",
			"invalid_currency currency",
			"required customer",
			"invalid_key metadata." + rep("k", 41),
			"invalid_url return_url",
		}
		if got := violations(e); !sameSet(got, want) {
			t.Errorf("Create details = %q; want %q", got, want)
		}
		if e.Error.Param != "items[2].quantity" {
			t.Errorf("Create param = %q; want items[2].quantity", e.Error.Param)
		}
		if !strings.Contains(e.Error.Message, "7 problems") {
			t.Errorf("Create message = %q; want it to say there are 7 problems", e.Error.Message)
		}
	})
}
