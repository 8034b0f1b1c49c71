package checkout

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Identifier prefixes (DESIGN.md section 3).
const (
	PrefixSession  = "cs_"
	PrefixPayment  = "pay_"
	PrefixEvent    = "evt_"
	PrefixEndpoint = "we_"
	PrefixDelivery = "whd_"
	PrefixAPIKey   = "key_"
	PrefixRequest  = "req_"
	PrefixRefund   = "re_"
	PrefixDispute  = "dp_"
)

// NewID returns prefix followed by the hex of n random bytes.
func NewID(prefix string, n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand documents it)
	return prefix + hex.EncodeToString(b)
}

// NewOrderedID returns prefix followed by the hex of n bytes (n > 6): the
// first six the time in milliseconds since 1970, big-endian, the rest
// random. Such ids sort by when they were made (to the millisecond), so a
// table's index of them grows at its end, a page or two written per batch,
// where ids at random places in it would write a page per row: the ids of
// the rows written on every request (request logs, events, deliveries). The
// time they tell is no secret (their rows show it); their random part, 80
// bits at 16 bytes, keeps them unique. Ids that grant anything (sessions,
// API keys) stay wholly random (NewID).
func NewOrderedID(prefix string, n int) string {
	b := make([]byte, n)
	ms := time.Now().UnixMilli()
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	rand.Read(b[6:])
	return prefix + hex.EncodeToString(b)
}

// NewSessionID returns a new checkout session id: cs_ and 64 hex characters.
func NewSessionID() string { return NewID(PrefixSession, 32) }

// NewPaymentID returns a new payment id: pay_ and 32 hex characters.
func NewPaymentID() string { return NewID(PrefixPayment, 16) }

// NewRefundID returns a new refund id: re_ and 32 hex characters.
func NewRefundID() string { return NewID(PrefixRefund, 16) }

// NewDisputeID returns a new dispute id: dp_ and 32 hex characters.
func NewDisputeID() string { return NewID(PrefixDispute, 16) }

// NewRequestID returns a new request id: req_ and 32 hex characters, in
// the order they are made (NewOrderedID).
func NewRequestID() string { return NewOrderedID(PrefixRequest, 16) }

// NewEventID returns a new event id: evt_ and 32 hex characters, in the
// order they are made (NewOrderedID).
func NewEventID() string { return NewOrderedID(PrefixEvent, 16) }

// NewDeliveryID returns a new delivery id: whd_ and 32 hex characters, in
// the order they are made (NewOrderedID).
func NewDeliveryID() string { return NewOrderedID(PrefixDelivery, 16) }

// NewAPIKeyID returns a new API key id: key_ and 32 hex characters.
func NewAPIKeyID() string { return NewID(PrefixAPIKey, 16) }

// NewStoreID returns a new random (version 4) UUID in its canonical form.
func NewStoreID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// ValidSessionID reports whether id has the shape of a checkout session id,
// the legacy 32-hex form included.
// Every API request checks its path's ids: by hand, not by regular
// expression, which took 1.5% of a retrieve's CPU.
func ValidSessionID(id string) bool {
	hex, ok := strings.CutPrefix(id, PrefixSession)
	return ok && (len(hex) == 32 || len(hex) == 64) && lowerHex(hex)
}

// ValidStoreID reports whether id is a UUID in canonical lower-case form.
func ValidStoreID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := range len(id) {
		switch i {
		case 8, 13, 18, 23:
			if id[i] != '-' {
				return false
			}
		default:
			if !lowerHex(id[i : i+1]) {
				return false
			}
		}
	}
	return true
}

// lowerHex reports whether s is made of lower-case hex digits only.
func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// secretLen is the number of base62 characters of a secret: 43 of them carry
// 256 bits.
const secretLen = 43

// hmacSecretLen is the number of base62 characters of an HMAC key's
// secret: 86 of them carry 512 bits, since RFC 9421 libraries want keys of
// at least 64 bytes for hmac-sha256 (DESIGN.md 3).
const hmacSecretLen = 86

// NewSecret returns 43 random base62 characters (256 bits), drawn without
// modulo bias.
func NewSecret() string { return randomBase62(secretLen) }

// randomBase62 returns n random base62 characters, drawn without modulo
// bias.
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, 64)
	for len(out) < n {
		rand.Read(buf)
		for _, c := range buf {
			if c >= 248 { // 248 = 4*62: reject to keep the draw uniform
				continue
			}
			out = append(out, base62[c%62])
			if len(out) == n {
				break
			}
		}
	}
	return string(out)
}

// HashSecret returns the hex SHA-256 of a secret: what is stored in place of
// an API key secret. The secret carries 256 random bits, so a fast hash is
// enough.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
