package checkout_test

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const storeID = "3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60"

var (
	base62Secret = regexp.MustCompile(`^[0-9A-Za-z]{43}$`)
	// An HMAC key's secret is twice as long: 512 bits (DESIGN.md 3).
	base62HMACSecret = regexp.MustCompile(`^[0-9A-Za-z]{86}$`)
	keyIDPattern     = regexp.MustCompile(`^key_[0-9a-f]{32}$`)
)

func TestNewAPIKey(t *testing.T) {
	tests := []struct {
		p         checkout.APIKeyParams
		prefix    string
		wantPerms []checkout.Permission
	}{
		{checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeTest, Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}},
			"ck_test_sk_", []checkout.Permission{checkout.PermCheckoutsWrite}},
		{checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeLive, Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsRead}},
			"ck_live_sk_", []checkout.Permission{checkout.PermCheckoutsRead}},
		{checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}},
			"ck_test_hk_", []checkout.Permission{checkout.PermCheckoutsWrite}},
		{checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeLive, Type: checkout.KeyHMAC,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite, checkout.PermCheckoutsRead, checkout.PermCheckoutsWrite}},
			"ck_live_hk_", []checkout.Permission{checkout.PermCheckoutsRead, checkout.PermCheckoutsWrite}},
	}
	for _, tt := range tests {
		k, secret, err := checkout.NewAPIKey(tt.p, t0)
		if err != nil {
			t.Fatalf("NewAPIKey(%+v) = %v", tt.p, err)
		}
		rest, ok := strings.CutPrefix(secret, tt.prefix)
		shape, length := base62Secret, 43
		if tt.p.Type == checkout.KeyHMAC {
			shape, length = base62HMACSecret, 86
		}
		if !ok || !shape.MatchString(rest) {
			t.Errorf("NewAPIKey(%+v) secret = %q; want %s and %d base62 characters", tt.p, secret, tt.prefix, length)
		}
		if k.SealedSecret != "" {
			t.Errorf("NewAPIKey: SealedSecret = %q; want it left to the service", k.SealedSecret)
		}
		if !keyIDPattern.MatchString(k.ID) {
			t.Errorf("NewAPIKey: id = %q; want key_ and 32 hex", k.ID)
		}
		if k.MerchantID != storeID || k.Mode != tt.p.Mode || k.Type != tt.p.Type || k.RevokedAt != nil {
			t.Errorf("NewAPIKey(%+v) = %+v", tt.p, k)
		}
		if !reflect.DeepEqual(k.Permissions, tt.wantPerms) {
			t.Errorf("NewAPIKey(%+v) permissions = %v; want %v (deduplicated, sorted)", tt.p, k.Permissions, tt.wantPerms)
		}
		if k.SecretHash != checkout.HashSecret(secret) || strings.Contains(k.SecretHash, rest) {
			t.Errorf("NewAPIKey: hash = %q; want the SHA-256 of the secret", k.SecretHash)
		}
		if k.SecretHint != secret[len(secret)-4:] {
			t.Errorf("NewAPIKey: hint = %q; want the secret's last 4 characters", k.SecretHint)
		}
		if !k.CreatedAt.Equal(t0.Truncate(time.Second)) {
			t.Errorf("NewAPIKey: CreatedAt = %v; want %v", k.CreatedAt, t0.Truncate(time.Second))
		}
		if !k.MatchesSecret(secret) {
			t.Errorf("NewAPIKey: key does not match its own secret")
		}
		mode, typ, ok := checkout.ParseSecret(secret)
		if !ok || mode != tt.p.Mode || typ != tt.p.Type {
			t.Errorf("ParseSecret(%q) = %v, %v, %v; want %v, %v, true", secret, mode, typ, ok, tt.p.Mode, tt.p.Type)
		}
	}
}

func TestNewAPIKeyInvalid(t *testing.T) {
	write := []checkout.Permission{checkout.PermCheckoutsWrite}
	tests := []struct {
		name     string
		p        checkout.APIKeyParams
		problems []string
	}{
		{"store not a uuid", checkout.APIKeyParams{MerchantID: "acme", Mode: checkout.ModeTest, Type: checkout.KeyBearer, Permissions: write},
			[]string{"invalid_format store"}},
		{"store upper case", checkout.APIKeyParams{MerchantID: strings.ToUpper(storeID), Mode: checkout.ModeTest, Type: checkout.KeyBearer, Permissions: write},
			[]string{"invalid_format store"}},
		{"mode", checkout.APIKeyParams{MerchantID: storeID, Mode: "prod", Type: checkout.KeyBearer, Permissions: write}, []string{"invalid_value mode"}},
		{"type", checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeTest, Type: "oauth", Permissions: write}, []string{"invalid_value type"}},
		{"no permissions", checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeTest, Type: checkout.KeyBearer}, []string{"required permissions"}},
		{"unknown permission", checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsRead, "refunds:read"}}, []string{"invalid_value permissions"}},
		{"everything", checkout.APIKeyParams{}, []string{"invalid_format store", "invalid_value mode", "invalid_value type", "required permissions"}},
		{"name too long", checkout.APIKeyParams{Name: strings.Repeat("é", checkout.MaxAPIKeyName+1), MerchantID: storeID, Mode: checkout.ModeTest,
			Type: checkout.KeyBearer, Permissions: write}, []string{"too_long name"}},
		{"name with a newline", checkout.APIKeyParams{Name: "Shop\nserver", MerchantID: storeID, Mode: checkout.ModeTest,
			Type: checkout.KeyBearer, Permissions: write}, []string{"invalid_characters name"}},
	}
	for _, tt := range tests {
		k, secret, err := checkout.NewAPIKey(tt.p, t0)
		if err == nil {
			t.Errorf("%s: NewAPIKey(%+v) = %+v, %q; want an error", tt.name, tt.p, k, secret)
			continue
		}
		if k != nil || secret != "" {
			t.Errorf("%s: NewAPIKey returned a key or secret with its error", tt.name)
		}
		if got := problems(err); !reflect.DeepEqual(got, tt.problems) {
			t.Errorf("%s: NewAPIKey(%+v) problems = %q; want %q", tt.name, tt.p, got, tt.problems)
		}
	}
}

// A key's name is optional and trimmed; MaxAPIKeyName characters pass.
func TestNewAPIKeyName(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"", ""},
		{"   ", ""},
		{"  Production server ", "Production server"},
		{strings.Repeat("é", checkout.MaxAPIKeyName), strings.Repeat("é", checkout.MaxAPIKeyName)},
	} {
		k, _, err := checkout.NewAPIKey(checkout.APIKeyParams{Name: tt.name, MerchantID: storeID, Mode: checkout.ModeTest,
			Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsRead}}, t0)
		if err != nil || k.Name != tt.want {
			t.Errorf("NewAPIKey(name %q) = %v, %v; want name %q", tt.name, k, err, tt.want)
		}
	}
}

func TestParseSecret(t *testing.T) {
	s43 := strings.Repeat("aZ0", 14) + "x"
	s86 := s43 + s43
	tests := []struct {
		secret string
		mode   checkout.Mode
		typ    checkout.KeyType
		ok     bool
	}{
		{"ck_test_sk_" + s43, checkout.ModeTest, checkout.KeyBearer, true},
		{"ck_live_sk_" + s43, checkout.ModeLive, checkout.KeyBearer, true},
		{"ck_test_hk_" + s86, checkout.ModeTest, checkout.KeyHMAC, true},
		{"ck_live_hk_" + s86, checkout.ModeLive, checkout.KeyHMAC, true},
		{"ck_test_hk_" + s43, "", "", false}, // a bearer secret's length
		{"ck_test_sk_" + s86, "", "", false}, // an HMAC secret's length
		{"ck_test_hk_" + s86[:85], "", "", false},
		{"ck_test_hk_" + s86 + "a", "", "", false},
		{"ck_live_hk_" + s86[:85] + "-", "", "", false},
		{"ck_test", "", "", false},
		{"ck_test_s", "", "", false},
		{"", "", "", false},
		{"ck_test_sk_", "", "", false},
		{"ck_test_sk_" + s43[:42], "", "", false},
		{"ck_test_sk_" + s43 + "a", "", "", false},
		{"ck_prod_sk_" + s43, "", "", false},
		{"ck_test_pk_" + s43, "", "", false},
		{"ck_test-sk_" + s43, "", "", false},
		{"ck_test_sk-" + s43, "", "", false},
		{"CK_test_sk_" + s43, "", "", false},
		{"ck_TEST_sk_" + s43, "", "", false},
		{"xk_test_sk_" + s43, "", "", false},
		{"whsec_" + s43, "", "", false},
		{"ck_test_sk_" + s43[:42] + "-", "", "", false},
		{"ck_test_sk_" + s43[:42] + "_", "", "", false},
		{"ck_test_sk_" + s43[:41] + "é", "", "", false}, // 43 bytes, 42 characters
		{" ck_test_sk_" + s43[:42], "", "", false},
	}
	for _, tt := range tests {
		mode, typ, ok := checkout.ParseSecret(tt.secret)
		if mode != tt.mode || typ != tt.typ || ok != tt.ok {
			t.Errorf("ParseSecret(%q) = %q, %q, %v; want %q, %q, %v", tt.secret, mode, typ, ok, tt.mode, tt.typ, tt.ok)
		}
	}
}

func TestMatchesSecret(t *testing.T) {
	k, secret, err := checkout.NewAPIKey(checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	_, other, _ := checkout.NewAPIKey(checkout.APIKeyParams{MerchantID: storeID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}}, t0)
	flipped := []byte(secret)
	flipped[len(flipped)-1] ^= 1
	tests := []struct {
		secret string
		want   bool
	}{
		{secret, true},
		{other, false},
		{string(flipped), false},
		{strings.Replace(secret, "_test_", "_live_", 1), false},
		{secret[:len(secret)-1], false},
		{"", false},
		{k.SecretHash, false},
	}
	for _, tt := range tests {
		if got := k.MatchesSecret(tt.secret); got != tt.want {
			t.Errorf("MatchesSecret(%q) = %v; want %v", tt.secret, got, tt.want)
		}
	}
}

func TestAllows(t *testing.T) {
	r, w := checkout.PermCheckoutsRead, checkout.PermCheckoutsWrite
	tests := []struct {
		has  []checkout.Permission
		perm checkout.Permission
		want bool
	}{
		{[]checkout.Permission{r}, r, true},
		{[]checkout.Permission{r}, w, false},
		{[]checkout.Permission{w}, w, true},
		{[]checkout.Permission{w}, r, true}, // write includes read
		{[]checkout.Permission{r, w}, w, true},
		{nil, r, false},
		{nil, w, false},
		{[]checkout.Permission{w}, checkout.PermRefundsWrite, false}, // a key that creates sessions cannot refund
		{[]checkout.Permission{r, w}, checkout.PermRefundsWrite, false},
		{[]checkout.Permission{checkout.PermRefundsWrite}, checkout.PermRefundsWrite, true},
		{[]checkout.Permission{checkout.PermRefundsWrite}, r, false},
		{[]checkout.Permission{checkout.PermRefundsWrite}, w, false},
	}
	for _, tt := range tests {
		k := &checkout.APIKey{Permissions: tt.has}
		if got := k.Allows(tt.perm); got != tt.want {
			t.Errorf("key with %v: Allows(%s) = %v; want %v", tt.has, tt.perm, got, tt.want)
		}
	}
	// Payments and refunds are read with checkouts:read (or write) or
	// refunds:write.
	for has, want := range map[checkout.Permission]bool{r: true, w: true, checkout.PermRefundsWrite: true, "": false} {
		k := &checkout.APIKey{Permissions: []checkout.Permission{has}}
		if got := k.CanReadPayments(); got != want {
			t.Errorf("key with %s: CanReadPayments = %v; want %v", has, got, want)
		}
	}
}

func TestRevoked(t *testing.T) {
	now := t0
	if (&checkout.APIKey{}).Revoked() || !(&checkout.APIKey{RevokedAt: &now}).Revoked() {
		t.Errorf("Revoked does not follow RevokedAt")
	}
}

func TestParsePermissions(t *testing.T) {
	tests := []struct {
		s    string
		want []checkout.Permission
	}{
		{"", nil},
		{"checkouts:write", []checkout.Permission{checkout.PermCheckoutsWrite}},
		{" checkouts:read , ,checkouts:write ", []checkout.Permission{checkout.PermCheckoutsRead, checkout.PermCheckoutsWrite}},
	}
	for _, tt := range tests {
		got := checkout.ParsePermissions(tt.s)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParsePermissions(%q) = %v; want %v", tt.s, got, tt.want)
		}
		if back := checkout.ParsePermissions(checkout.JoinPermissions(got)); !reflect.DeepEqual(back, tt.want) {
			t.Errorf("ParsePermissions(JoinPermissions(%v)) = %v", got, back)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want checkout.Mode
		ok   bool
	}{{"test", checkout.ModeTest, true}, {"live", checkout.ModeLive, true}, {"Live", "", false}, {"", "", false}} {
		if got, ok := checkout.ParseMode(tt.s); got != tt.want || ok != tt.ok {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, %v", tt.s, got, ok, tt.want, tt.ok)
		}
	}
	if checkout.ModeTest.Live() || !checkout.ModeLive.Live() {
		t.Errorf("Mode.Live is wrong")
	}
}
