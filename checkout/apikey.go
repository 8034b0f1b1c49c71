package checkout

import (
	"crypto/subtle"
	"slices"
	"strings"
	"time"
)

// Mode is test or live. Keys, sessions, webhook endpoints and events each
// belong to exactly one mode.
type Mode string

// The two modes.
const (
	ModeTest Mode = "test"
	ModeLive Mode = "live"
)

// Live reports whether m is live mode.
func (m Mode) Live() bool { return m == ModeLive }

// ParseMode returns the mode named s ("test" or "live").
func ParseMode(s string) (Mode, bool) {
	switch Mode(s) {
	case ModeTest, ModeLive:
		return Mode(s), true
	}
	return "", false
}

// KeyType is how a key authenticates: a bearer secret or an HMAC signature.
type KeyType string

// Key types.
const (
	KeyBearer KeyType = "bearer"
	KeyHMAC   KeyType = "hmac"
)

// Permission gates an API operation.
type Permission string

// Permissions. PermCheckoutsWrite includes PermCheckoutsRead. Reading a
// payment or a refund takes PermCheckoutsRead or PermRefundsWrite
// (APIKey.CanReadPayments); refunding takes PermRefundsWrite, which
// PermCheckoutsWrite does not include: a key that creates sessions cannot
// give money back.
const (
	PermCheckoutsRead  Permission = "checkouts:read"
	PermCheckoutsWrite Permission = "checkouts:write"
	PermRefundsWrite   Permission = "refunds:write"
	// PermDisputesWrite answers disputes with evidence; like refunds, no
	// other permission includes it.
	PermDisputesWrite Permission = "disputes:write"
)

// AllPermissions lists every permission in a stable order.
var AllPermissions = []Permission{PermCheckoutsRead, PermCheckoutsWrite, PermRefundsWrite, PermDisputesWrite}

// APIKey is a merchant's credential for the API. The secret is shown once,
// when the key is made. A bearer key keeps only a hash of it; an HMAC key
// must also keep the secret itself, to verify signatures with it, and keeps
// it sealed with the operator's secrets key (SealedSecret).
type APIKey struct {
	ID string
	// Name tells a store's keys apart ("Production server"); "" when the
	// key was made without one.
	Name        string
	MerchantID  string
	Mode        Mode
	Type        KeyType
	Permissions []Permission
	SecretHash  string // hex SHA-256 of the whole secret
	SecretHint  string // the secret's last four characters, to recognise it
	// SealedSecret is an HMAC key's secret encrypted with the operator's
	// secrets key (package seal), bound to the key's id; "" for a bearer
	// key. The service seals and opens it; nothing else reads it.
	SealedSecret string
	CreatedAt    time.Time
	RevokedAt    *time.Time
	// LastUsedAt is when the key last authenticated an API request, to
	// within APIKeyUseGranularity; nil when it never has.
	LastUsedAt *time.Time
}

// APIKeyUseGranularity is how precise APIKey.LastUsedAt is: it is written
// at most once per this long per key, so that a busy key costs a write a
// minute rather than one per request.
const APIKeyUseGranularity = time.Minute

// MaxAPIKeyName is the most characters a key's name may have.
const MaxAPIKeyName = 100

// Allows reports whether the key carries perm; checkouts:write includes
// checkouts:read.
func (k *APIKey) Allows(perm Permission) bool {
	if slices.Contains(k.Permissions, perm) {
		return true
	}
	return perm == PermCheckoutsRead && slices.Contains(k.Permissions, PermCheckoutsWrite)
}

// CanReadPayments reports whether the key may read payments, refunds and
// disputes: with checkouts:read (or checkouts:write), refunds:write or
// disputes:write.
func (k *APIKey) CanReadPayments() bool {
	return k.Allows(PermCheckoutsRead) || k.Allows(PermRefundsWrite) || k.Allows(PermDisputesWrite)
}

// Revoked reports whether the key has been revoked.
func (k *APIKey) Revoked() bool { return k.RevokedAt != nil }

// APIKeyParams are the inputs to NewAPIKey.
type APIKeyParams struct {
	Name        string // optional; trimmed, at most MaxAPIKeyName characters
	MerchantID  string
	Mode        Mode
	Type        KeyType
	Permissions []Permission
}

// NewAPIKey validates p and returns a new key and its secret. The secret is
// returned only here; the key keeps only its hash.
func NewAPIKey(p APIKeyParams, now time.Time) (*APIKey, string, error) {
	var v violations
	name := strings.TrimSpace(p.Name)
	if name != "" {
		v.checkText("name", name, 1, MaxAPIKeyName, false)
	}
	if !ValidStoreID(p.MerchantID) {
		v.add("invalid_format", "store", "store must be a store id (a uuid).")
	}
	if _, ok := ParseMode(string(p.Mode)); !ok {
		v.add("invalid_value", "mode", "mode must be test or live.")
	}
	var kind string
	n := secretLen
	switch p.Type {
	case KeyBearer:
		kind = "sk"
	case KeyHMAC:
		kind, n = "hk", hmacSecretLen
	default:
		v.add("invalid_value", "type", "type must be bearer or hmac.")
	}
	if len(p.Permissions) == 0 {
		v.add("required", "permissions", "permissions must name at least one permission.")
	}
	perms := make([]Permission, 0, len(p.Permissions))
	for _, perm := range p.Permissions {
		if !slices.Contains(AllPermissions, perm) {
			v.add("invalid_value", "permissions", "unknown permission "+quote(string(perm))+"; known: checkouts:read, checkouts:write, refunds:write, disputes:write.")
			continue
		}
		if !slices.Contains(perms, perm) {
			perms = append(perms, perm)
		}
	}
	if err := v.err(); err != nil {
		return nil, "", err
	}
	slices.Sort(perms)
	secret := "ck_" + string(p.Mode) + "_" + kind + "_" + randomBase62(n)
	return &APIKey{
		ID:          NewAPIKeyID(),
		Name:        name,
		MerchantID:  p.MerchantID,
		Mode:        p.Mode,
		Type:        p.Type,
		Permissions: perms,
		SecretHash:  HashSecret(secret),
		SecretHint:  secret[len(secret)-4:],
		CreatedAt:   now.Truncate(time.Second),
	}, secret, nil
}

// ParseSecret checks the shape of an API key secret and returns its mode and
// type: a bearer secret has 43 base62 characters after its prefix, an HMAC
// key's 86. A secret of another shape can never match a key.
func ParseSecret(secret string) (Mode, KeyType, bool) {
	rest, ok := strings.CutPrefix(secret, "ck_")
	if !ok || len(rest) < len("test_sk_") {
		return "", "", false
	}
	mode, ok := ParseMode(rest[:4])
	if !ok || rest[4] != '_' || rest[7] != '_' {
		return "", "", false
	}
	var typ KeyType
	n := secretLen
	switch rest[5:7] {
	case "sk":
		typ = KeyBearer
	case "hk":
		typ, n = KeyHMAC, hmacSecretLen
	default:
		return "", "", false
	}
	if len(rest) != len("test_sk_")+n {
		return "", "", false
	}
	for i := 8; i < len(rest); i++ {
		if strings.IndexByte(base62, rest[i]) < 0 {
			return "", "", false
		}
	}
	return mode, typ, true
}

// MatchesSecret reports, in constant time, whether secret is this key's.
func (k *APIKey) MatchesSecret(secret string) bool {
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(k.SecretHash)) == 1
}

// ParsePermissions splits a comma-separated list of permissions.
func ParsePermissions(s string) []Permission {
	var out []Permission
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, Permission(p))
		}
	}
	return out
}

// JoinPermissions is the inverse of ParsePermissions.
func JoinPermissions(ps []Permission) string {
	ss := make([]string, len(ps))
	for i, p := range ps {
		ss[i] = string(p)
	}
	return strings.Join(ss, ",")
}
