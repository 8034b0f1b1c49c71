package checkout_test

import (
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
)

// A body must be UTF-8, and its strings must decode to Unicode text: bytes
// that are not UTF-8, and \u escapes of a lone UTF-16 surrogate, answer
// invalid_json naming the problem and where it is, instead of being
// replaced by U+FFFD and stored as something else than what was sent.
func TestParseCreateRequestEncoding(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string // in the message; nil when the body is accepted
	}{
		{"0xff 0xfe in a name", "{\"items\":[{\"name\":\"\xff\xfe bad\",\"amount\":1500}]}", []string{"UTF-8", "byte 19", "0xff"}},
		{"a lone continuation byte in metadata", "{\"items\":[{\"name\":\"A\",\"amount\":1500}],\"metadata\":{\"k\":\"a\x80\"}}", []string{"UTF-8", "byte 56", "0x80"}},
		{"a truncated sequence at the end of a string", "{\"title\":\"caf\xc3\"}", []string{"UTF-8", "byte 13", "0xc3"}},
		{"an encoded surrogate", "{\"title\":\"\xed\xa0\x80\"}", []string{"UTF-8", "byte 10", "0xed"}},
		{"an overlong encoding", "{\"title\":\"\xc0\xaf\"}", []string{"UTF-8", "byte 10", "0xc0"}},
		{"invalid UTF-8 in a key", "{\"it\xffems\":[]}", []string{"UTF-8", "byte 4"}},
		{"invalid UTF-8 outside a string", "{\"items\":[]}\xff", []string{"UTF-8", "byte 12"}},
		{"a lone high surrogate", `{"title":"\ud800"}`, []string{"surrogate", `\ud800`, "byte 10"}},
		{"a lone low surrogate", `{"title":"a\uDC00b"}`, []string{"surrogate", `\uDC00`, "byte 11"}},
		{"a high surrogate followed by text", `{"title":"\ud83dx"}`, []string{"surrogate", "byte 10"}},
		{"two high surrogates", `{"title":"\ud83d\ud83d"}`, []string{"surrogate", "byte 10"}},
		{"a lone surrogate in a key", `{"items":[],"metadata":{"\udfff":"v"}}`, []string{"surrogate", "byte 25"}},

		{"a surrogate pair", `{"items":[{"name":"\ud83d\ude00 sword","amount":1500}]}`, nil},
		{"U+FFFD sent as such", `{"items":[{"name":"` + "\uFFFD" + ` sword","amount":1500}]}`, nil},
		{"an escaped backslash before u", `{"items":[{"name":"\\ud800","amount":1500}]}`, nil},
		{"multibyte text", `{"items":[{"name":"épée 剣 🗡","amount":1500}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := checkout.ParseCreateRequest([]byte(tt.body))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("ParseCreateRequest(%q) = %v; want it accepted", tt.body, err)
				}
				if !strings.Contains(tt.body, p.Items[0].Name) && !strings.Contains(tt.body, `\ud83d\ude00`) {
					t.Errorf("name = %q; want it as sent", p.Items[0].Name)
				}
				return
			}
			if !checkout.IsCode(err, checkout.EInvalidJSON) {
				t.Fatalf("ParseCreateRequest(%q) = %v, %v; want invalid_json", tt.body, p, err)
			}
			msg := checkout.ErrorMessage(err)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q; want it to name %q", msg, w)
				}
			}
		})
	}
}
