// Package password hashes and verifies dashboard account passwords with
// argon2id (RFC 9106), stored as PHC strings:
//
//	$argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>
//
// salt and key in unpadded standard base64. Verify reads the parameters from
// the stored string, so raising Default later leaves every stored hash
// verifiable. docs/dashboard.md explains the parameters.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/checkoutd/checkoutd/checkout"
)

// Limits of a password: at least MinRunes characters (code points, not
// bytes), at most MaxBytes bytes, so that nobody makes the server hash
// megabytes per attempt.
const (
	MinRunes = 12
	MaxBytes = 1024
)

// Params are argon2id's cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8  // lanes
}

// Default is what Hash uses: OWASP's argon2id configuration of 19 MiB, two
// passes, one lane (the password storage cheat sheet; RFC 9106 section 4
// for the reasoning on memory-constrained machines). docs/dashboard.md
// says why.
var Default = Params{Memory: 19 * 1024, Time: 2, Threads: 1}

// Bounds on the parameters Verify accepts from a stored hash: room to raise
// Default several times over, but a hash edited in the database cannot make
// one verification take gigabytes or minutes.
const (
	maxMemory  = 256 * 1024 // KiB: 256 MiB
	maxTime    = 16
	maxThreads = 16
	saltLen    = 16
	keyLen     = 32
	minSaltLen = 8
	maxSaltLen = 64
	minKeyLen  = 16
	maxKeyLen  = 64
)

// slots bounds how many hashes run at once on this node: each holds Memory
// KiB for its whole run, so a flood of sign-in attempts waits here instead
// of exhausting memory. A waiting attempt costs only its goroutine.
var slots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

// derivations counts the argon2id derivations this process ran.
var derivations atomic.Int64

// Derivations returns how many argon2id hashes this process computed (Hash
// and Verify each compute one): what a test counts to see that a sign-in
// with an unknown email costs what a wrong password costs.
func Derivations() int64 { return derivations.Load() }

// ErrMalformed is returned by Verify for a stored hash it cannot read: not
// argon2id, another version, parameters it does not know or outside its
// bounds, or bad base64.
var ErrMalformed = errors.New("password: malformed or unsupported hash")

// Check returns nil when pw is acceptable as a new password, and otherwise
// a validation_failed error naming param "password".
func Check(pw string) error {
	var code, msg string
	switch {
	case len(pw) > MaxBytes:
		code, msg = "too_long", fmt.Sprintf("password must be at most %d bytes.", MaxBytes)
	case !utf8.ValidString(pw):
		code, msg = "invalid_characters", "password must be text (valid UTF-8)."
	case utf8.RuneCountInString(pw) < MinRunes:
		code, msg = "too_short", fmt.Sprintf("password must be at least %d characters.", MinRunes)
	default:
		return nil
	}
	v := checkout.Violation{Code: code, Param: "password", Message: msg}
	return &checkout.Error{Code: checkout.EValidationFailed, Message: msg, Param: "password", Details: []checkout.Violation{v}}
}

// Hash returns the PHC string of pw under Default with a fresh 16-byte
// salt. It does not check pw: call Check first.
func Hash(pw string) string {
	return hashWith(pw, Default)
}

// HashWith is Hash under other parameters: what Default was before it was
// raised, for tests of the rehash at sign-in.
func HashWith(pw string, p Params) string { return hashWith(pw, p) }

// NeedsRehash reports whether a stored hash was made under parameters other
// than Default (or with another salt or key length): a successful sign-in
// then stores a new hash under Default, so raising Default reaches every
// account that signs in.
func NeedsRehash(hash string) bool {
	p, salt, key, err := parse(hash)
	return err == nil && (p != Default || len(salt) != saltLen || len(key) != keyLen)
}

func hashWith(pw string, p Params) string {
	salt := make([]byte, saltLen)
	rand.Read(salt) // never fails (crypto/rand documents it)
	key := derive(pw, salt, p, keyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

func derive(pw string, salt []byte, p Params, n int) []byte {
	slots <- struct{}{}
	defer func() { <-slots }()
	derivations.Add(1)
	return argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(n))
}

// Verify reports whether pw is the password of the stored hash, comparing in
// constant time. A hash it cannot read is ErrMalformed (and no match).
func Verify(pw, hash string) (bool, error) {
	p, salt, key, err := parse(hash)
	if err != nil {
		return false, err
	}
	if len(pw) > MaxBytes {
		// No stored password is this long (Check refuses it), and hashing
		// it would be work for nothing.
		return false, nil
	}
	got := derive(pw, salt, p, len(key))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// dummy is a hash under Default of a random password that was thrown away:
// what VerifyDummy checks against. A test keeps its parameters those of
// Default.
const dummy = "$argon2id$v=19$m=19456,t=2,p=1$Qubx9KYHCYUrQgbv8evqKA$HPYXjEpO+KrJ2NlQmnFTr7PmtoC0BMF7JPTwIgOjWCs"

// VerifyDummy does the work of Verify against a hash of Default, and
// always reports no match: a sign-in with an unknown email calls it, so
// that it costs what a wrong password costs.
func VerifyDummy(pw string) {
	Verify(pw, dummy)
}

// ParamsOf returns the parameters of a stored hash: a hash whose parameters
// are below Default can be rehashed at the next successful sign-in.
func ParamsOf(hash string) (Params, error) {
	p, _, _, err := parse(hash)
	return p, err
}

// parse reads a PHC argon2id string strictly: the version 19, the
// parameters m, t, p in that order and nothing else, unpadded base64.
func parse(hash string) (Params, []byte, []byte, error) {
	var p Params
	parts := strings.Split(hash, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, nil, nil, ErrMalformed
	}
	kv := strings.Split(parts[3], ",")
	if len(kv) != 3 {
		return p, nil, nil, ErrMalformed
	}
	var vals [3]uint64
	for i, name := range []string{"m", "t", "p"} {
		v, ok := strings.CutPrefix(kv[i], name+"=")
		if !ok || v == "" || (len(v) > 1 && v[0] == '0') {
			return p, nil, nil, ErrMalformed
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return p, nil, nil, ErrMalformed
		}
		vals[i] = n
	}
	p = Params{Memory: uint32(vals[0]), Time: uint32(vals[1]), Threads: uint8(min(vals[2], 255))}
	// RFC 9106 3.1: at least 8 KiB of memory per lane.
	if p.Time < 1 || p.Time > maxTime || vals[2] < 1 || vals[2] > maxThreads ||
		p.Memory < 8*uint32(p.Threads) || p.Memory > maxMemory {
		return p, nil, nil, ErrMalformed
	}
	b64 := base64.RawStdEncoding.Strict()
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < minSaltLen || len(salt) > maxSaltLen {
		return p, nil, nil, ErrMalformed
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < minKeyLen || len(key) > maxKeyLen {
		return p, nil, nil, ErrMalformed
	}
	return p, salt, key, nil
}
