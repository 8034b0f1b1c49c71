package password

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
)

// Cheap parameters for tests that hash many times; TestDefault covers the
// real ones.
var cheap = Params{Memory: 64, Time: 1, Threads: 1}

func TestCheck(t *testing.T) {
	tests := []struct {
		pw   string
		code string // "" when accepted
	}{
		{"", "too_short"},
		{strings.Repeat("a", MinRunes-1), "too_short"},
		{strings.Repeat("a", MinRunes), ""},
		// Characters, not bytes: 11 two-byte runes are 22 bytes but too
		// short; 12 of them are enough.
		{strings.Repeat("é", MinRunes-1), "too_short"},
		{strings.Repeat("é", MinRunes), ""},
		{strings.Repeat("😀", MinRunes), ""},
		{strings.Repeat("a", MaxBytes), ""},
		{strings.Repeat("a", MaxBytes+1), "too_long"},
		// The bound is in bytes: 512 two-byte runes fit, 513 do not.
		{strings.Repeat("é", MaxBytes/2), ""},
		{strings.Repeat("é", MaxBytes/2+1), "too_long"},
		{strings.Repeat("a", MinRunes) + "\xff", "invalid_characters"},
		// Spaces count and are kept: a passphrase is welcome.
		{"correct horse battery", ""},
	}
	for _, tt := range tests {
		err := Check(tt.pw)
		if tt.code == "" {
			if err != nil {
				t.Errorf("Check(%d bytes) = %v; want nil", len(tt.pw), err)
			}
			continue
		}
		ce, ok := err.(*checkout.Error)
		if !ok || ce.Code != checkout.EValidationFailed || ce.Param != "password" || len(ce.Details) != 1 || ce.Details[0].Code != tt.code {
			t.Errorf("Check(%d bytes, %d runes) = %#v; want validation_failed on password, %s", len(tt.pw), len([]rune(tt.pw)), err, tt.code)
		}
	}
}

// The dummy hash costs what a hash of Default costs, and matches nothing
// anyone can type.
func TestDummy(t *testing.T) {
	if p, err := ParamsOf(dummy); p != Default || err != nil {
		t.Errorf("ParamsOf(dummy) = %+v, %v; want Default %+v: make a new dummy with Hash", p, err, Default)
	}
	before := Derivations()
	VerifyDummy("correct horse battery staple")
	if n := Derivations() - before; n != 1 {
		t.Errorf("VerifyDummy computed %d hashes; want 1", n)
	}
}

func TestHashVerify(t *testing.T) {
	pw := "correct horse battery staple"
	h := hashWith(pw, cheap)
	ok, err := Verify(pw, h)
	if err != nil || !ok {
		t.Fatalf("Verify(right password) = %v, %v", ok, err)
	}
	for _, wrong := range []string{"", "correct horse battery stapl", "correct horse battery staple ", "Correct horse battery staple",
		strings.Repeat("a", MaxBytes+1)} {
		if ok, err := Verify(wrong, h); ok || err != nil {
			t.Errorf("Verify(%.30q) = %v, %v; want false, nil", wrong, ok, err)
		}
	}
	// A fresh salt every time: the same password never hashes the same.
	if h2 := hashWith(pw, cheap); h2 == h {
		t.Errorf("two hashes of one password are equal: %s", h)
	}
}

func TestDefault(t *testing.T) {
	h := Hash("correct horse battery staple")
	parts := strings.Split(h, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" || parts[3] != "m=19456,t=2,p=1" {
		t.Fatalf("Hash = %s; want $argon2id$v=19$m=19456,t=2,p=1$salt$key", h)
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) != 16 || len(key) != 32 {
		t.Errorf("salt %q, key %q: want 16 and 32 bytes in unpadded base64", parts[4], parts[5])
	}
	if ok, err := Verify("correct horse battery staple", h); !ok || err != nil {
		t.Errorf("Verify(Hash) = %v, %v", ok, err)
	}
	if p, err := ParamsOf(h); p != Default || err != nil {
		t.Errorf("ParamsOf = %+v, %v; want %+v", p, err, Default)
	}
}

// Hashes made under other parameters, as after Default is raised, still
// verify: the parameters are read from the string.
func TestParametersComeFromTheHash(t *testing.T) {
	pw := "correct horse battery staple"
	for _, p := range []Params{{Memory: 32, Time: 1, Threads: 1}, {Memory: 128, Time: 3, Threads: 2}, {Memory: 256, Time: 1, Threads: 4}} {
		h := hashWith(pw, p)
		if got, err := ParamsOf(h); got != p || err != nil {
			t.Errorf("ParamsOf(%s) = %+v, %v; want %+v", h, got, err, p)
		}
		if ok, err := Verify(pw, h); !ok || err != nil {
			t.Errorf("Verify under %+v = %v, %v", p, ok, err)
		}
		// The same salt and key under other parameters is another hash.
		other := strings.Replace(h, ",t="+strconv.Itoa(int(p.Time))+",", ",t="+strconv.Itoa(int(p.Time+1))+",", 1)
		if ok, err := Verify(pw, other); ok || err != nil {
			t.Errorf("Verify with t changed = %v, %v; want false, nil", ok, err)
		}
	}
}

func TestTampered(t *testing.T) {
	pw := "correct horse battery staple"
	h := hashWith(pw, cheap)
	parts := strings.Split(h, "$")
	flip := func(b64 string) string {
		raw, _ := base64.RawStdEncoding.DecodeString(b64)
		raw[0] ^= 1
		return base64.RawStdEncoding.EncodeToString(raw)
	}
	for name, bad := range map[string]string{
		"key changed":  strings.Join([]string{"", parts[1], parts[2], parts[3], parts[4], flip(parts[5])}, "$"),
		"salt changed": strings.Join([]string{"", parts[1], parts[2], parts[3], flip(parts[4]), parts[5]}, "$"),
	} {
		if ok, err := Verify(pw, bad); ok || err != nil {
			t.Errorf("%s: Verify = %v, %v; want false, nil", name, ok, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	pw := "correct horse battery staple"
	h := hashWith(pw, cheap)
	parts := strings.Split(h, "$")
	salt, key := parts[4], parts[5]
	with := func(alg, v, params, s, k string) string { return strings.Join([]string{"", alg, v, params, s, k}, "$") }
	for name, bad := range map[string]string{
		"empty":              "",
		"sha256 hex":         checkout.HashSecret(pw),
		"argon2i":            with("argon2i", "v=19", "m=64,t=1,p=1", salt, key),
		"argon2d":            with("argon2d", "v=19", "m=64,t=1,p=1", salt, key),
		"bcrypt":             "$2b$12$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234",
		"version 16":         with("argon2id", "v=16", "m=64,t=1,p=1", salt, key),
		"no version":         strings.Join([]string{"", "argon2id", "m=64,t=1,p=1", salt, key}, "$"),
		"params reordered":   with("argon2id", "v=19", "t=1,m=64,p=1", salt, key),
		"unknown parameter":  with("argon2id", "v=19", "m=64,t=1,p=1,x=2", salt, key),
		"keyid parameter":    with("argon2id", "v=19", "m=64,t=1,p=1,keyid=abc", salt, key),
		"missing parameter":  with("argon2id", "v=19", "m=64,t=1", salt, key),
		"t zero":             with("argon2id", "v=19", "m=64,t=0,p=1", salt, key),
		"p zero":             with("argon2id", "v=19", "m=64,t=1,p=0", salt, key),
		"m below 8p":         with("argon2id", "v=19", "m=7,t=1,p=1", salt, key),
		"m too large":        with("argon2id", "v=19", "m=4194304,t=1,p=1", salt, key),
		"t too large":        with("argon2id", "v=19", "m=64,t=1000,p=1", salt, key),
		"p too large":        with("argon2id", "v=19", "m=4096,t=1,p=300", salt, key),
		"negative":           with("argon2id", "v=19", "m=-64,t=1,p=1", salt, key),
		"leading zero":       with("argon2id", "v=19", "m=064,t=1,p=1", salt, key),
		"m overflows uint32": with("argon2id", "v=19", "m=4294967360,t=1,p=1", salt, key),
		"padded salt":        with("argon2id", "v=19", "m=64,t=1,p=1", salt+"==", key),
		"salt not base64":    with("argon2id", "v=19", "m=64,t=1,p=1", "!!!!"+salt, key),
		"short salt":         with("argon2id", "v=19", "m=64,t=1,p=1", "YWJj", key),
		"short key":          with("argon2id", "v=19", "m=64,t=1,p=1", salt, "YWJjZGVmZ2g"),
		"no key":             with("argon2id", "v=19", "m=64,t=1,p=1", salt, ""),
		"extra field":        h + "$x",
		"no leading dollar":  strings.TrimPrefix(h, "$"),
	} {
		ok, err := Verify(pw, bad)
		if ok || err != ErrMalformed {
			t.Errorf("%s: Verify(%q) = %v, %v; want false, ErrMalformed", name, bad, ok, err)
		}
	}
}

func BenchmarkHashDefault(b *testing.B) {
	for b.Loop() {
		Hash("correct horse battery staple")
	}
}

func TestNeedsRehash(t *testing.T) {
	weaker := Params{Memory: 8 * 1024, Time: 1, Threads: 1}
	for _, tt := range []struct {
		hash string
		want bool
	}{
		{Hash("correct horse battery staple"), false},
		{HashWith("correct horse battery staple", weaker), true},
		{HashWith("correct horse battery staple", Params{Memory: Default.Memory, Time: Default.Time + 1, Threads: 1}), true},
		{"not a hash", false},
	} {
		if got := NeedsRehash(tt.hash); got != tt.want {
			t.Errorf("NeedsRehash(%s) = %v; want %v", tt.hash, got, tt.want)
		}
	}
	if ok, err := Verify("correct horse battery staple", HashWith("correct horse battery staple", weaker)); !ok || err != nil {
		t.Errorf("a hash under other parameters does not verify: %v, %v", ok, err)
	}
}
