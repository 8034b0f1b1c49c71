package checkout_test

import (
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// TestIDShapes checks every generator against DESIGN.md section 3.
func TestIDShapes(t *testing.T) {
	tests := []struct {
		name    string
		gen     func() string
		pattern string
	}{
		{"NewSessionID", checkout.NewSessionID, `^cs_[0-9a-f]{64}$`},
		{"NewEventID", checkout.NewEventID, `^evt_[0-9a-f]{32}$`},
		{"NewAPIKeyID", checkout.NewAPIKeyID, `^key_[0-9a-f]{32}$`},
		{"NewRequestID", checkout.NewRequestID, `^req_[0-9a-f]{32}$`},
		{"NewID(pay_, 16)", func() string { return checkout.NewID(checkout.PrefixPayment, 16) }, `^pay_[0-9a-f]{32}$`},
		{"NewID(we_, 16)", func() string { return checkout.NewID(checkout.PrefixEndpoint, 16) }, `^we_[0-9a-f]{32}$`},
		{"NewID(whd_, 16)", func() string { return checkout.NewID(checkout.PrefixDelivery, 16) }, `^whd_[0-9a-f]{32}$`},
		{"NewDeliveryID", checkout.NewDeliveryID, `^whd_[0-9a-f]{32}$`},
		{"NewStoreID", checkout.NewStoreID, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`},
		{"NewSecret", checkout.NewSecret, `^[0-9A-Za-z]{43}$`},
	}
	for _, tt := range tests {
		re := regexp.MustCompile(tt.pattern)
		seen := map[string]bool{}
		for range 200 {
			id := tt.gen()
			if !re.MatchString(id) {
				t.Fatalf("%s() = %q; want %s", tt.name, id, tt.pattern)
			}
			if seen[id] {
				t.Fatalf("%s() gave %q twice", tt.name, id)
			}
			seen[id] = true
		}
	}
}

// Request, event and delivery ids begin with the time they were made, in
// milliseconds: made later, they sort after; their last 80 bits are random.
func TestOrderedIDs(t *testing.T) {
	for name, gen := range map[string]func() string{"NewRequestID": checkout.NewRequestID, "NewEventID": checkout.NewEventID,
		"NewDeliveryID": checkout.NewDeliveryID} {
		before := time.Now().UnixMilli()
		id := gen()
		after := time.Now().UnixMilli()
		_, hexPart, _ := strings.Cut(id, "_")
		b, err := hex.DecodeString(hexPart)
		if err != nil || len(b) != 16 {
			t.Fatalf("%s() = %q", name, id)
		}
		var ms int64
		for _, c := range b[:6] {
			ms = ms<<8 | int64(c)
		}
		if ms < before || ms > after {
			t.Errorf("%s() = %q tells %d ms; want the time it was made, %d to %d", name, id, ms, before, after)
		}
		// A millisecond later, every id sorts after.
		for time.Now().UnixMilli() <= after {
			time.Sleep(100 * time.Microsecond) // waiting for the clock to pass a millisecond
		}
		if next := gen(); next <= id {
			t.Errorf("%s() made after %q = %q; want it to sort after", name, id, next)
		}
		// The random part differs between two ids of the same millisecond.
		if a, b := gen(), gen(); a[len(a)-20:] == b[len(b)-20:] {
			t.Errorf("%s() gave %q and %q: the same random part", name, a, b)
		}
	}
}

// A store id is a version 4, RFC 4122 variant UUID.
func TestNewStoreIDIsUUIDv4(t *testing.T) {
	for range 100 {
		id := checkout.NewStoreID()
		b, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
		if err != nil || len(b) != 16 {
			t.Fatalf("NewStoreID() = %q: not 16 hex bytes", id)
		}
		if v := b[6] >> 4; v != 4 {
			t.Errorf("NewStoreID() = %q: version %d; want 4", id, v)
		}
		if b[8]&0xc0 != 0x80 {
			t.Errorf("NewStoreID() = %q: variant bits %02b; want 10", id, b[8]>>6)
		}
		if !checkout.ValidStoreID(id) {
			t.Errorf("ValidStoreID(NewStoreID() = %q) = false", id)
		}
	}
}

// Secrets use all of base62, each character about as often: a secret is
// uniform over 62^43 values (256 bits), not skewed by a modulo.
func TestNewSecretAlphabet(t *testing.T) {
	counts := map[rune]int{}
	const n = 2000
	for range n {
		for _, c := range checkout.NewSecret() {
			counts[c]++
		}
	}
	if len(counts) != 62 {
		t.Fatalf("secrets used %d distinct characters; want 62", len(counts))
	}
	mean := float64(n*43) / 62
	for c, k := range counts {
		// 1387 draws per character on average, standard deviation 37:
		// 260 is 7 of them, which chance does not reach.
		if float64(k) < mean-260 || float64(k) > mean+260 {
			t.Errorf("character %q drawn %d times; want about %.0f", c, k, mean)
		}
	}
}

func TestValidSessionID(t *testing.T) {
	hex32 := strings.Repeat("0123456789abcdef", 2)
	tests := []struct {
		id   string
		want bool
	}{
		{"cs_" + hex32 + hex32, true},
		{"cs_" + hex32, true}, // the earliest sessions
		{"cs_" + hex32 + hex32[:16], false},
		{"cs_" + hex32[:31], false},
		{"cs_" + hex32 + hex32 + "0", false},
		{"cs_" + strings.ToUpper(hex32), false},
		{"CS_" + hex32, false},
		{"cs" + hex32, false},
		{"pay_" + hex32, false},
		{"cs_" + hex32[:31] + "g", false},
		{"cs_" + hex32 + "\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := checkout.ValidSessionID(tt.id); got != tt.want {
			t.Errorf("ValidSessionID(%q) = %v; want %v", tt.id, got, tt.want)
		}
	}
}

func TestValidStoreID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60", true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"3F1C9A2E-8B7D-4C1E-9F0A-1B2C3D4E5F60", false}, // canonical form is lower case
		{"3f1c9a2e8b7d4c1e9f0a1b2c3d4e5f60", false},
		{"{3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60}", false},
		{"3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f6", false},
		{"3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := checkout.ValidStoreID(tt.id); got != tt.want {
			t.Errorf("ValidStoreID(%q) = %v; want %v", tt.id, got, tt.want)
		}
	}
}

func TestHashSecret(t *testing.T) {
	// SHA-256 of "abc".
	if got, want := checkout.HashSecret("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("HashSecret(abc) = %s; want %s", got, want)
	}
}

func TestNormalizeCurrency(t *testing.T) {
	tests := []struct {
		code string
		want string
		ok   bool
	}{
		{"USD", "USD", true},
		{"usd", "USD", true},
		{"uSd", "USD", true},
		{"jpy", "JPY", true},
		{"kwd", "KWD", true},
		{"EUR", "EUR", true},
		{"XYZ", "XYZ", false},
		{"XAU", "XAU", false}, // gold: no minor units
		{"XTS", "XTS", false}, // the testing code
		{"HRK", "HRK", false}, // withdrawn
		{"US", "", false},
		{"USDX", "", false},
		{"", "", false},
		{"ÜSD", "", false},
	}
	for _, tt := range tests {
		got, ok := checkout.NormalizeCurrency(tt.code)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeCurrency(%q) = %q, %v; want %q, %v", tt.code, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCurrencyExponent(t *testing.T) {
	tests := []struct {
		code string
		want int
	}{
		{"JPY", 0}, {"KRW", 0}, {"CLP", 0}, {"VND", 0},
		{"USD", 2}, {"EUR", 2}, {"GBP", 2},
		{"KWD", 3}, {"BHD", 3}, {"TND", 3},
		{"CLF", 4}, {"UYW", 4},
		{"XYZ", 2}, // unknown: the common case
	}
	for _, tt := range tests {
		if got := checkout.CurrencyExponent(tt.code); got != tt.want {
			t.Errorf("CurrencyExponent(%q) = %d; want %d", tt.code, got, tt.want)
		}
	}
	// Lower case is normalized first.
	if code, _ := checkout.NormalizeCurrency("jpy"); checkout.CurrencyExponent(code) != 0 {
		t.Errorf("CurrencyExponent(NormalizeCurrency(jpy)) = %d; want 0", checkout.CurrencyExponent(code))
	}
}

// Every accepted code is three upper-case letters with a sane exponent,
// and the list is about the size of ISO 4217's.
func TestCurrencyList(t *testing.T) {
	n := 0
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			for c := 'A'; c <= 'Z'; c++ {
				code := string([]rune{a, b, c})
				got, ok := checkout.NormalizeCurrency(strings.ToLower(code))
				if !ok {
					continue
				}
				n++
				if got != code {
					t.Errorf("NormalizeCurrency(%q) = %q", strings.ToLower(code), got)
				}
				if e := checkout.CurrencyExponent(code); e != 0 && e != 2 && e != 3 && e != 4 {
					t.Errorf("CurrencyExponent(%s) = %d", code, e)
				}
			}
		}
	}
	if n < 150 || n > 180 {
		t.Errorf("%d currencies accepted; ISO 4217 has about 160 with minor units", n)
	}
}

func TestRedactSecrets(t *testing.T) {
	s43 := strings.Repeat("aZ0", 14) + "x"
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"nothing secret", "nothing secret"},
		{"ck_test_sk_" + s43, "[redacted]"},
		{"ck_live_sk_" + s43, "[redacted]"},
		{"ck_test_hk_" + s43, "[redacted]"},
		{"ck_live_hk_" + s43, "[redacted]"},
		{"whsec_" + s43, "[redacted]"},
		{`{"key":"ck_test_sk_` + s43 + `","other":"x"}`, `{"key":"[redacted]","other":"x"}`},
		{"Bearer ck_live_sk_abc, then whsec_def.", "Bearer [redacted], then [redacted]."},
		{"truncated ck_test_sk_", "truncated [redacted]"},
		{"ck_test_sk_" + s43 + "ck_live_sk_" + s43, "[redacted]"}, // one run of base62
		{"ck_test_sk_abc-ck_live_hk_def", "[redacted]-[redacted]"},
		{"whsec_abc_ck_test_sk_def rest", "[redacted] rest"},
		{"xck_test_sk_abc", "x[redacted]"},
		{"ck_test_pk_abc ck_prod_sk_abc cs_abc key_abc", "ck_test_pk_abc ck_prod_sk_abc cs_abc key_abc"},
		{"CK_TEST_SK_abc", "CK_TEST_SK_abc"},
	}
	for _, tt := range tests {
		if got := checkout.RedactSecrets(tt.in); got != tt.want {
			t.Errorf("RedactSecrets(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestEventMarshalJSON(t *testing.T) {
	for _, mode := range []checkout.Mode{checkout.ModeTest, checkout.ModeLive} {
		e := &checkout.Event{ID: "evt_0123456789abcdef0123456789abcdef", MerchantID: storeID, Mode: mode, Type: checkout.EventCheckoutCreated,
			CreatedAt: t0, Object: json.RawMessage(`{"id":"cs_1","object":"checkout_session","amount":1500}`)}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("Marshal(event) = %s: %v", b, err)
		}
		want := map[string]any{
			"id":          "evt_0123456789abcdef0123456789abcdef",
			"object":      "event",
			"type":        "checkout.created",
			"livemode":    mode == checkout.ModeLive,
			"created":     json.Number("1793534400"),
			"api_version": "v1",
			"data": map[string]any{"object": map[string]any{
				"id": "cs_1", "object": "checkout_session", "amount": json.Number("1500"),
			}},
		}
		if !jsonEqual(got, want) {
			t.Errorf("Marshal(%s event) = %s; want %v", mode, b, want)
		}
		if strings.Contains(string(b), storeID) {
			t.Errorf("Marshal(event) = %s; the store id is not part of the Event object", b)
		}
	}
}

func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestNewEvent(t *testing.T) {
	obj := map[string]string{"status": "open"}
	e, err := checkout.NewEvent(checkout.EventCheckoutExpired, storeID, checkout.ModeLive, obj, t0)
	if err != nil {
		t.Fatal(err)
	}
	obj["status"] = "expired" // the event keeps the state of its moment
	if string(e.Object) != `{"status":"open"}` {
		t.Errorf("NewEvent: Object = %s; want the object as it was", e.Object)
	}
	if !regexp.MustCompile(`^evt_[0-9a-f]{32}$`).MatchString(e.ID) || e.MerchantID != storeID || e.Mode != checkout.ModeLive ||
		e.Type != checkout.EventCheckoutExpired || !e.CreatedAt.Equal(t0.Truncate(1e9)) {
		t.Errorf("NewEvent = %+v", e)
	}
	if _, err := checkout.NewEvent(checkout.EventCheckoutCreated, storeID, checkout.ModeTest, func() {}, t0); err == nil {
		t.Errorf("NewEvent(unmarshalable) = nil error")
	}
}

func TestErrorHelpers(t *testing.T) {
	cause := &checkout.Error{Code: checkout.EConflict, Message: "taken"}
	internal := checkout.Internal(cause)
	tests := []struct {
		err      error
		code     string
		message  string
		contains string
	}{
		{nil, "", "An internal error occurred.", ""},
		{checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", "x"), "store_not_found", "No such store: x.", "store_not_found: No such store: x."},
		{internal, "internal_error", "An internal error occurred.", "taken"},
		{json.Unmarshal([]byte("{"), new(any)), "internal_error", "An internal error occurred.", "unexpected end"},
	}
	for _, tt := range tests {
		if got := checkout.ErrorCode(tt.err); got != tt.code {
			t.Errorf("ErrorCode(%v) = %q; want %q", tt.err, got, tt.code)
		}
		if tt.err == nil {
			continue
		}
		if got := checkout.ErrorMessage(tt.err); got != tt.message {
			t.Errorf("ErrorMessage(%v) = %q; want %q", tt.err, got, tt.message)
		}
		if !strings.Contains(tt.err.Error(), tt.contains) {
			t.Errorf("Error() = %q; want it to contain %q", tt.err.Error(), tt.contains)
		}
	}
	if internal.Unwrap() != cause {
		t.Errorf("Internal(cause).Unwrap() is not the cause")
	}
}

// The checks of path ids accept what their patterns accept, and only that.
func FuzzValidIDs(f *testing.F) {
	session := regexp.MustCompile(`^cs_[0-9a-f]{32}([0-9a-f]{32})?$`)
	store := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for _, s := range []string{checkout.NewSessionID(), "cs_" + strings.Repeat("a", 32), checkout.NewStoreID(),
		"3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f6g", "3f1c9a2e-8b7d-4c1e-9f0a_1b2c3d4e5f60", "cs_" + strings.Repeat("0", 48), ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := checkout.ValidSessionID(s), session.MatchString(s); got != want {
			t.Errorf("ValidSessionID(%q) = %v; the pattern says %v", s, got, want)
		}
		if got, want := checkout.ValidStoreID(s), store.MatchString(s); got != want {
			t.Errorf("ValidStoreID(%q) = %v; the pattern says %v", s, got, want)
		}
	})
}
