// Package seal encrypts the secrets checkoutd must keep recoverable (the
// secrets of HMAC API keys, which the server needs to verify a signature)
// with the operator's secrets key: AES-256-GCM, a random 96-bit nonce per
// secret, and additional data binding each sealed value to its owner (the
// key's id), so a sealed value copied onto another row does not open.
//
// A sealed value is text, "v1.<key id>.<base64url of nonce and
// ciphertext>". The key id is a fingerprint of the secrets key (the first 8
// bytes of a SHA-256 over it, in hex): it says which key sealed a value, so a
// server started with another key fails with an error that says so rather
// than with "message authentication failed", and it tells an attacker
// nothing the ciphertext does not.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a secrets key: 32 bytes, for AES-256.
const KeySize = 32

// version starts every sealed value, so that another scheme can follow.
const version = "v1"

// Key is an operator's secrets key. Its String never shows the key. A key
// may carry older keys (ParseKeys, WithOlder): it seals with itself and
// opens what any of them sealed, so that a key can be rotated while the
// values it sealed are sealed again.
type Key struct {
	aead  cipher.AEAD
	id    string
	older []*Key
}

// ParseKeys reads one or more secrets keys separated by commas or line
// breaks (ParseKey's forms), the newest first: the returned key seals with
// the first and opens what any of them sealed. Blank entries are skipped.
func ParseKeys(s string) (*Key, error) {
	var keys []*Key
	for i, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, err := ParseKey(part)
		if err != nil {
			if i > 0 {
				return nil, fmt.Errorf("key %d of the list: %w", i+1, err)
			}
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no secrets key is given (generate one with: openssl rand -base64 32)")
	}
	return keys[0].WithOlder(keys[1:]...), nil
}

// WithOlder returns k that also opens what the older keys sealed.
func (k *Key) WithOlder(older ...*Key) *Key {
	out := &Key{aead: k.aead, id: k.id}
	for _, o := range older {
		if o.id != k.id {
			out.older = append(out.older, &Key{aead: o.aead, id: o.id})
		}
	}
	return out
}

// Newest returns k alone, without the older keys it carries.
func (k *Key) Newest() *Key { return &Key{aead: k.aead, id: k.id} }

// IDs returns the fingerprints of k and of the older keys it carries, k's
// first.
func (k *Key) IDs() []string {
	ids := []string{k.id}
	for _, o := range k.older {
		ids = append(ids, o.id)
	}
	return ids
}

// Generate returns a new random secrets key, and its text as base64 (what
// ParseKey reads).
func Generate() (*Key, string) {
	raw := make([]byte, KeySize)
	rand.Read(raw) // never fails (crypto/rand documents it)
	k, _ := NewKey(raw)
	return k, base64.StdEncoding.EncodeToString(raw)
}

// ParseKey reads a secrets key: 32 bytes written as 64 hex digits or as
// base64 (standard or URL alphabet, padded or not; what
// `openssl rand -base64 32` prints). Surrounding white space is ignored.
// The error never repeats the text it was given.
func ParseKey(s string) (*Key, error) {
	s = strings.TrimSpace(s)
	raw, err := decodeKey(s)
	if err != nil {
		return nil, err
	}
	return NewKey(raw)
}

func decodeKey(s string) ([]byte, error) {
	if len(s) == hex.EncodedLen(KeySize) {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != KeySize {
				return nil, fmt.Errorf("the secrets key is %d bytes; it must be %d (generate one with: openssl rand -base64 32)", len(b), KeySize)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("the secrets key must be %d bytes written as 64 hex digits or as base64 (generate one with: openssl rand -base64 32)", KeySize)
}

// NewKey returns the key of 32 raw bytes.
func NewKey(raw []byte) (*Key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("the secrets key is %d bytes; it must be %d", len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("checkoutd secrets key\x00"), raw...))
	return &Key{aead: aead, id: hex.EncodeToString(sum[:8])}, nil
}

// ID is the key's fingerprint, safe to log and show: which key sealed a
// value.
func (k *Key) ID() string { return k.id }

// String shows the fingerprint only, so that a key printed by mistake
// (a %v of a config) does not leak.
func (k *Key) String() string { return "secrets key " + k.id }

// Seal encrypts secret for the owner named by ad (the API key's id).
func (k *Key) Seal(secret, ad string) string {
	nonce := make([]byte, k.aead.NonceSize())
	rand.Read(nonce)
	out := k.aead.Seal(nonce, nonce, []byte(secret), []byte(ad))
	return version + "." + k.id + "." + base64.RawURLEncoding.EncodeToString(out)
}

// ErrOtherKey is returned by Open for a value sealed with another secrets
// key; errors.Is finds it.
var ErrOtherKey = errors.New("sealed with another secrets key")

// Open decrypts a value Seal made for the owner ad. It fails, without ever
// saying what the secret is, when the value was sealed with another key
// (ErrOtherKey, naming both keys' ids), for another owner, or was altered.
func (k *Key) Open(sealed, ad string) (string, error) {
	ver, rest, _ := strings.Cut(sealed, ".")
	id, body, ok := strings.Cut(rest, ".")
	if ver != version || !ok {
		return "", errors.New("not a sealed secret of a known version")
	}
	if id != k.id {
		for _, o := range k.older {
			if o.id == id {
				return o.Open(sealed, ad)
			}
		}
		return "", fmt.Errorf("%w: the value was sealed with the key whose id is %s, and this one's is %s: start checkoutd with the secrets key the secret was sealed with", ErrOtherKey, id, strings.Join(k.IDs(), ", "))
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	n := k.aead.NonceSize()
	if err != nil || len(raw) < n+k.aead.Overhead() {
		return "", errors.New("the sealed secret is damaged: it is not base64 of a nonce and a ciphertext")
	}
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(ad))
	if err != nil {
		return "", errors.New("the sealed secret does not open with this key: it was altered, or moved from another row")
	}
	return string(plain), nil
}
