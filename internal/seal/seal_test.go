package seal_test

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/seal"
)

var raw = []byte("0123456789abcdef0123456789abcdef")

func mustKey(t *testing.T, b []byte) *seal.Key {
	t.Helper()
	k, err := seal.NewKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Each way of writing 32 bytes gives the same key; anything else is
// refused with an error that does not repeat it.
func TestParseKey(t *testing.T) {
	want := mustKey(t, raw).ID()
	for _, s := range []string{
		hex.EncodeToString(raw),
		strings.ToUpper(hex.EncodeToString(raw)),
		base64.StdEncoding.EncodeToString(raw),
		base64.RawStdEncoding.EncodeToString(raw),
		base64.URLEncoding.EncodeToString(raw),
		" " + base64.StdEncoding.EncodeToString(raw) + "\n",
	} {
		k, err := seal.ParseKey(s)
		if err != nil || k.ID() != want {
			t.Errorf("ParseKey(%q) = %v, %v; want the key %s", s, k, err, want)
		}
	}
	for _, s := range []string{
		"",
		"short",
		hex.EncodeToString(raw[:31]),
		base64.StdEncoding.EncodeToString(raw[:16]),
		base64.StdEncoding.EncodeToString(append(raw, 'x')),
		hex.EncodeToString(raw)[:63] + "g",
	} {
		k, err := seal.ParseKey(s)
		if err == nil {
			t.Errorf("ParseKey(%q) = %v; want an error", s, k)
			continue
		}
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("ParseKey(%q) error %q repeats the key", s, err)
		}
	}
}

func TestSealOpen(t *testing.T) {
	k := mustKey(t, raw)
	const secret = "ck_test_hk_abc"
	sealed := k.Seal(secret, "key_1")
	if strings.Contains(sealed, secret) || strings.Contains(sealed, "abc") {
		t.Errorf("Seal = %q; holds the secret", sealed)
	}
	if !strings.HasPrefix(sealed, "v1."+k.ID()+".") {
		t.Errorf("Seal = %q; want v1.%s.", sealed, k.ID())
	}
	if again := k.Seal(secret, "key_1"); again == sealed {
		t.Errorf("Seal twice = the same value; want a fresh nonce each time")
	}
	if got, err := k.Open(sealed, "key_1"); err != nil || got != secret {
		t.Errorf("Open = %q, %v; want %q", got, err, secret)
	}
}

// Every way a sealed value can fail to open says why, and never holds the
// secret.
func TestOpenFails(t *testing.T) {
	k := mustKey(t, raw)
	other := mustKey(t, []byte("fedcba9876543210fedcba9876543210"))
	const secret = "ck_live_hk_Zq9"
	sealed := k.Seal(secret, "key_1")
	// Alter a byte of the ciphertext, not a character of the text: a
	// character flipped in the text is not always base64 any more.
	head := sealed[:strings.LastIndex(sealed, ".")+1]
	body, err := base64.RawURLEncoding.DecodeString(sealed[len(head):])
	if err != nil {
		t.Fatal(err)
	}
	body[len(body)-1] ^= 1
	flipped := head + base64.RawURLEncoding.EncodeToString(body)
	tests := []struct {
		name, sealed, ad, want string
		key                    *seal.Key
	}{
		{"another key", sealed, "key_1", "sealed with another secrets key", other},
		{"another owner", sealed, "key_2", "moved from another row", k},
		{"altered", flipped, "key_1", "altered", k},
		{"cut", sealed[:len("v1.")+16+5], "key_1", "damaged", k},
		{"empty", "", "key_1", "known version", k},
		{"plain", secret, "key_1", "known version", k},
	}
	for _, tt := range tests {
		got, err := tt.key.Open(tt.sealed, tt.ad)
		if err == nil || got != "" {
			t.Errorf("%s: Open = %q, %v; want an error", tt.name, got, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: Open error = %q; want it to say %q, without the secret", tt.name, err, tt.want)
		}
	}
	if _, err := other.Open(sealed, "key_1"); !errors.Is(err, seal.ErrOtherKey) || !strings.Contains(err.Error(), k.ID()) || !strings.Contains(err.Error(), other.ID()) {
		t.Errorf("Open with another key = %v; want ErrOtherKey naming both ids", err)
	}
}

func TestKeyStringHidesKey(t *testing.T) {
	k := mustKey(t, raw)
	if s := k.String(); strings.Contains(s, string(raw)) || strings.Contains(s, hex.EncodeToString(raw)) || !strings.Contains(s, k.ID()) {
		t.Errorf("String = %q; want the id only", s)
	}
}

// A list of keys seals with the first and opens what any of them sealed:
// a key is rotated while its values are sealed again. Each entry is read
// as ParseKey reads one; an entry that is not a key is refused, saying
// which, never what it was.
func TestParseKeys(t *testing.T) {
	oldRaw := []byte("fedcba9876543210fedcba9876543210")
	old, cur := mustKey(t, oldRaw), mustKey(t, raw)
	sealedOld := old.Seal("ck_test_hk_secret", "key_1")
	for _, s := range []string{
		base64.StdEncoding.EncodeToString(raw) + "," + hex.EncodeToString(oldRaw),
		base64.StdEncoding.EncodeToString(raw) + "\n" + base64.StdEncoding.EncodeToString(oldRaw) + "\n\n",
		" " + hex.EncodeToString(raw) + " ,\r\n " + base64.RawURLEncoding.EncodeToString(oldRaw) + " ",
	} {
		ring, err := seal.ParseKeys(s)
		if err != nil {
			t.Fatalf("ParseKeys = %v", err)
		}
		if ids := ring.IDs(); len(ids) != 2 || ids[0] != cur.ID() || ids[1] != old.ID() || ring.ID() != cur.ID() {
			t.Errorf("ParseKeys IDs = %v; want [%s %s]", ids, cur.ID(), old.ID())
		}
		if got, err := ring.Open(sealedOld, "key_1"); err != nil || got != "ck_test_hk_secret" {
			t.Errorf("the ring opens the old key's value = %q, %v", got, err)
		}
		resealed := ring.Seal("ck_test_hk_secret", "key_1")
		if _, err := old.Open(resealed, "key_1"); !errors.Is(err, seal.ErrOtherKey) {
			t.Errorf("the ring sealed with the old key: %v", err)
		}
		if got, err := ring.Newest().Open(resealed, "key_1"); err != nil || got != "ck_test_hk_secret" {
			t.Errorf("the newest key alone opens the new value = %q, %v", got, err)
		}
		if _, err := ring.Newest().Open(sealedOld, "key_1"); !errors.Is(err, seal.ErrOtherKey) {
			t.Errorf("the newest key alone opened the old value: %v", err)
		}
	}
	one, err := seal.ParseKeys(hex.EncodeToString(raw))
	if err != nil || len(one.IDs()) != 1 {
		t.Errorf("ParseKeys of one key = %v, %v", one, err)
	}
	for _, s := range []string{"", " , \n", hex.EncodeToString(raw) + ",not-a-key-at-all"} {
		_, err := seal.ParseKeys(s)
		if err == nil || strings.Contains(err.Error(), "not-a-key") {
			t.Errorf("ParseKeys(%q) = %v; want an error that does not repeat the text", s, err)
		}
	}
	if _, err := seal.ParseKeys(hex.EncodeToString(raw) + ",abc"); err == nil || !strings.Contains(err.Error(), "key 2") {
		t.Errorf("a bad second key = %v; want an error naming key 2", err)
	}
	// Generate makes a key its text parses back to.
	k, text := seal.Generate()
	if p, err := seal.ParseKey(text); err != nil || p.ID() != k.ID() {
		t.Errorf("Generate's text parses to %v, %v; want %s", p, err, k.ID())
	}
	if k2, _ := seal.Generate(); k2.ID() == k.ID() {
		t.Errorf("two generated keys are the same")
	}
}
