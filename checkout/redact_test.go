package checkout

import (
	"strings"
	"testing"
)

func TestRedactSecrets(t *testing.T) {
	sk := "ck_test_sk_" + NewSecret()
	tests := []struct{ in, want string }{
		{"", ""},
		{"/v1/stores/3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60/checkouts", "/v1/stores/3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60/checkouts"},
		{`{"title":"ck_ and whsec are fine alone","metadata":{"k":"ck_test_"}}`, `{"title":"ck_ and whsec are fine alone","metadata":{"k":"ck_test_"}}`},
		{`{"metadata":{"key":"` + sk + `"}}`, `{"metadata":{"key":"[redacted]"}}`},
		{"/v1/x?key=" + sk + "&y=1", "/v1/x?key=[redacted]&y=1"},
		{"ck_live_hk_abc ck_test_sk_", "[redacted] [redacted]"},
		{"secret whsec_" + NewSecret() + ".", "secret [redacted]."},
		{"whsec_", "[redacted]"},
		{"ck_test_pk_abc", "ck_test_pk_abc"},

		// JSON escapes, in valid JSON or not, anywhere in the secret.
		{`{"title":"\u0063k_live_sk_abc"}`, `{"title":"[redacted]"}`},
		{`{"title":"\u0063k_live_sk_abc"`, `{"title":"[redacted]"`},
		{`not json \u0077hsec_abc, really`, `not json [redacted], really`},
		{`"ck_live_sk_ab\u0063def"`, `"[redacted]"`},
		{`"ck\u005Flive\u005fsk\u005fabc"`, `"[redacted]"`},
		{`"\u0043K_live_sk_abc"`, `"\u0043K_live_sk_abc"`}, // CK_: not a secret's spelling
		{`"\ud800ck_live_sk_abc"`, `"\ud800[redacted]"`},
		{`"\ud83d\ude00ck_live_sk_abc \u00e9"`, `"\ud83d\ude00[redacted] \u00e9"`},
		{`{"a":"\\\u0063k_live_sk_abc"}`, `{"a":"\\[redacted]"}`},
		{`"\/ck_live_sk_abc\/"`, `"\/[redacted]\/"`},
		{`\u006`, `\u006`},
		{`\`, `\`},

		// Percent-encoding, either case, in a path or a query.
		{"/v1/stores/x/checkouts/ck%5Flive%5Fsk%5Fabc", "/v1/stores/x/checkouts/[redacted]"},
		{"/v1/x?key=ck%5flive%5Fsk%5fabc&y=1", "/v1/x?key=[redacted]&y=1"},
		{"/v1/x?key=%63%6B_test_sk_a%62c", "/v1/x?key=[redacted]"},
		{"/v1/x?key=%77hsec_abc", "/v1/x?key=[redacted]"},
		{"/v1/x?key=ck%255Flive%255Fsk%255Fabc", "/v1/x?key=[redacted]"}, // encoded twice
		{"/v1/x?a=%zz&b=100%", "/v1/x?a=%zz&b=100%"},

		// Layers mixed: a JSON body holding a percent-encoded URL, and the
		// reverse.
		{`{"return_url":"https://a.example/?k=ck%5Flive%5Fsk%5Fabc"}`, `{"return_url":"https://a.example/?k=[redacted]"}`},
		{`{"k":"ck\u0025\u0035Flive_sk_abc"}`, `{"k":"[redacted]"}`},
		{"/v1/x?k=%5Cu0063k_live_sk_abc", "/v1/x?k=[redacted]"},

		// A secret in the literal text that an escape before it would
		// swallow is redacted too.
		{"%4ck_live_sk_abc", "%4[redacted]"},
		{`\ck_live_sk_abc`, `\[redacted]`},
	}
	for _, tt := range tests {
		if got := RedactSecrets(tt.in); got != tt.want {
			t.Errorf("RedactSecrets(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// layers returns s and what it means through each layer of escapes that
// RedactSecrets looks through.
func layers(s string) []string {
	out := []string{s}
	for range maxUnescapes {
		next, _, changed := unescape(s)
		if !changed {
			break
		}
		s = next
		out = append(out, s)
	}
	return out
}

// FuzzRedactSecrets checks that no secret is left in what RedactSecrets
// returns, however it is read (literally or through any layer of escapes),
// and that text without escapes is redacted as the pattern says.
func FuzzRedactSecrets(f *testing.F) {
	for _, s := range []string{"", "ck_test_sk_abc", "xwhsec_1", "ck_live_hk_", "c k_test_sk_a", "ck_tes_sk_a",
		`\u0063k_live_sk_a`, "ck%5Flive%5fsk%5Fa", "%4ck_live_sk_a", `\ud83d\ude00\u0077hsec_x`, "%255F", `\\u0063`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := RedactSecrets(s)
		if !strings.ContainsAny(s, `%\`) {
			if want := secretPattern.ReplaceAllLiteralString(s, Redacted); got != want {
				t.Errorf("RedactSecrets(%q) = %q; want %q", s, got, want)
			}
		}
		for i, l := range layers(got) {
			if m := secretPattern.FindString(l); m != "" {
				t.Errorf("RedactSecrets(%q) = %q, which holds %q after %d layers of unescaping", s, got, m, i)
			}
		}
	})
}
