package checkout

import "testing"

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
	}
	for _, tt := range tests {
		if got := RedactSecrets(tt.in); got != tt.want {
			t.Errorf("RedactSecrets(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzRedactSecrets checks that the shortcut of RedactSecrets never changes
// its answer.
func FuzzRedactSecrets(f *testing.F) {
	for _, s := range []string{"", "ck_test_sk_abc", "xwhsec_1", "ck_live_hk_", "c k_test_sk_a", "ck_tes_sk_a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := RedactSecrets(s), secretPattern.ReplaceAllLiteralString(s, Redacted); got != want {
			t.Errorf("RedactSecrets(%q) = %q; want %q", s, got, want)
		}
	})
}
