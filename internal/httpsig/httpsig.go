// Package httpsig verifies signed API requests as DESIGN.md section 6 fixes
// them: HTTP Message Signatures (RFC 9421) with hmac-sha256, keyed with the
// whole HMAC key secret, and Content-Digest (RFC 9530) with sha-256 over the
// raw body. It is pure: the caller finds the key named by keyid, opens its
// secret, checks the nonce was not used before (the database, across
// nodes), and gives the time.
//
// Every refusal is a *Failure whose message says which check failed
// (missing component, stale, digest mismatch, bad signature, ...) and never
// the value the server expected.
package httpsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Window is how far a signature's created time may be from the server's
// time, either way: older is stale, newer is from a clock too far ahead.
const Window = 300 * time.Second

// Alg is the one algorithm accepted.
const Alg = "hmac-sha256"

// MaxNonce is the longest nonce accepted, in bytes.
const MaxNonce = 128

// Failure is a refused signature: Check names the check that failed
// (for metrics and tests), Message says it to the client.
type Failure struct {
	Check   string
	Message string
}

func (f *Failure) Error() string { return f.Message }

// The checks, as Failure.Check names them.
const (
	CheckMalformed = "malformed"
	CheckComponent = "missing_component"
	CheckAlg       = "alg"
	CheckStale     = "stale"
	CheckDigest    = "digest"
	CheckKey       = "unknown_key"
	CheckReplayed  = "replayed"
	CheckSignature = "bad_signature"
)

func fail(check, format string, args ...any) *Failure {
	return &Failure{Check: check, Message: fmt.Sprintf(format, args...)}
}

// Request is what a signature covers.
type Request struct {
	Method string
	// BaseURL is the service's configured public address (--base-url),
	// from which @target-uri and @authority are rebuilt: never the Host
	// header, so signatures hold behind a TLS-terminating proxy.
	BaseURL string
	URL     *url.URL // the request's, for its path and query
	Header  http.Header
	Body    []byte
}

// Signed is a signature read from a request, its components checked; what
// the caller needs to find the key and verify it.
type Signed struct {
	KeyID   string
	Nonce   string
	Created time.Time
	// Base is the signature base (RFC 9421 2.5) the signature covers.
	Base string
	sig  []byte
}

// IsSigned reports whether a request carries a signature at all (either header): a
// request with one is verified as signed, never as a bearer.
func IsSigned(h http.Header) bool {
	return h.Get("Signature-Input") != "" || h.Get("Signature") != ""
}

// KeyID returns the keyid of the one signature Signature-Input holds, or
// "" when it holds none that names one: what needs no body, no clock and no
// key, for the caller that asks first whether the key may exist.
func KeyID(h http.Header) string {
	inputs, err := parseDictionary(strings.Join(h.Values("Signature-Input"), ", "))
	if err != nil || len(inputs) != 1 || !inputs[0].isList {
		return ""
	}
	for _, p := range inputs[0].params {
		if v, ok := p.value.(string); ok && p.name == "keyid" {
			return v
		}
	}
	return ""
}

// Parse reads the signature of r and checks everything that needs no key:
// its shape, alg, the covered components (@method and @target-uri always;
// content-digest and content-type when the request has a body, or is a
// POST), created within Window of now, a nonce, a keyid, and the
// Content-Digest against the body.
func Parse(r Request, now time.Time) (*Signed, error) {
	inputs, err := parseDictionary(strings.Join(r.Header.Values("Signature-Input"), ", "))
	if err != nil {
		return nil, fail(CheckMalformed, "Signature-Input is not a valid structured field: %v.", err)
	}
	sigs, err := parseDictionary(strings.Join(r.Header.Values("Signature"), ", "))
	if err != nil {
		return nil, fail(CheckMalformed, "Signature is not a valid structured field: %v.", err)
	}
	if len(inputs) != 1 || !inputs[0].isList {
		return nil, fail(CheckMalformed, "Signature-Input must hold exactly one signature: label=(components);created=...;keyid=...;nonce=...;alg=\"hmac-sha256\".")
	}
	in := inputs[0]
	i := slices.IndexFunc(sigs, func(m member) bool { return m.name == in.name })
	if i < 0 || sigs[i].isList || len(sigs[i].bytes) == 0 {
		return nil, fail(CheckMalformed, "Signature must hold the signature labelled %s, as a byte sequence (:base64:).", in.name)
	}
	s := &Signed{sig: sigs[i].bytes}
	var created, expires int64
	var alg string
	for _, p := range in.params {
		switch p.name {
		case "created":
			v, ok := p.value.(int64)
			if !ok {
				return nil, fail(CheckMalformed, "created must be an integer (Unix seconds).")
			}
			created = v
		case "expires":
			v, ok := p.value.(int64)
			if !ok {
				return nil, fail(CheckMalformed, "expires must be an integer (Unix seconds).")
			}
			expires = v
		case "keyid":
			v, ok := p.value.(string)
			if !ok {
				return nil, fail(CheckMalformed, "keyid must be a string: the key's id.")
			}
			s.KeyID = v
		case "nonce":
			v, ok := p.value.(string)
			if !ok {
				return nil, fail(CheckMalformed, "nonce must be a string.")
			}
			s.Nonce = v
		case "alg":
			v, ok := p.value.(string)
			if !ok {
				return nil, fail(CheckAlg, "alg must be the string \"hmac-sha256\".")
			}
			alg = v
		}
	}
	switch {
	case alg != Alg:
		return nil, fail(CheckAlg, "The signature's alg must be \"hmac-sha256\".")
	case created == 0:
		return nil, fail(CheckMalformed, "The signature has no created parameter.")
	case s.KeyID == "":
		return nil, fail(CheckMalformed, "The signature has no keyid parameter naming the key.")
	case s.Nonce == "" || len(s.Nonce) > MaxNonce:
		return nil, fail(CheckMalformed, "The signature needs a nonce parameter of 1 to %d characters.", MaxNonce)
	}
	s.Created = time.Unix(created, 0)
	if d := now.Sub(s.Created); d > Window || d < -Window {
		return nil, fail(CheckStale, "The signature is stale: created is more than %d seconds from the server's time.", int(Window/time.Second))
	}
	if expires != 0 && !now.Before(time.Unix(expires, 0)) {
		return nil, fail(CheckStale, "The signature is stale: its expires time has passed.")
	}
	covered := make([]string, len(in.list))
	for j, it := range in.list {
		if len(it.params) > 0 {
			return nil, fail(CheckMalformed, "Covered components with parameters are not supported (%q).", it.value)
		}
		covered[j] = it.value
	}
	for _, want := range required(r) {
		if !slices.Contains(covered, want) {
			return nil, fail(CheckComponent, "The signature does not cover %q, which it must.", want)
		}
	}
	if slices.Contains(covered, "content-digest") {
		if err := CheckContentDigest(r.Header.Values("Content-Digest"), r.Body); err != nil {
			return nil, err
		}
	}
	if s.Base, err = signatureBase(r, in.list, in.params); err != nil {
		return nil, err
	}
	return s, nil
}

// signatureBase is the signature base (RFC 9421 2.5) of r for the covered
// components and signature parameters.
func signatureBase(r Request, covered []item, params []param) (string, error) {
	var b strings.Builder
	for _, c := range covered {
		v, err := componentValue(r, c.value)
		if err != nil {
			return "", err
		}
		serializeString(&b, c.value)
		b.WriteString(": ")
		b.WriteString(v)
		b.WriteByte('\n')
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(serializeInnerList(covered, params))
	return b.String(), nil
}

// required lists the components every signature of r must cover.
func required(r Request) []string {
	if len(r.Body) > 0 || r.Method == http.MethodPost {
		return []string{"@method", "@target-uri", "content-digest", "content-type"}
	}
	return []string{"@method", "@target-uri"}
}

// componentValue is the value of a covered component (RFC 9421 2.1, 2.2).
func componentValue(r Request, name string) (string, error) {
	base, err := url.Parse(r.BaseURL)
	if err != nil {
		return "", fmt.Errorf("httpsig: the base URL: %w", err)
	}
	switch name {
	case "@method":
		return r.Method, nil
	case "@target-uri":
		return strings.TrimSuffix(r.BaseURL, "/") + r.URL.RequestURI(), nil
	case "@authority":
		return strings.ToLower(base.Host), nil
	case "@scheme":
		return strings.ToLower(base.Scheme), nil
	case "@path":
		return r.URL.EscapedPath(), nil
	case "@query":
		return "?" + r.URL.RawQuery, nil
	}
	if strings.HasPrefix(name, "@") || name != strings.ToLower(name) || name == "" {
		return "", fail(CheckMalformed, "The covered component %q is not supported.", name)
	}
	vs := r.Header.Values(name)
	if len(vs) == 0 {
		return "", fail(CheckComponent, "The signature covers the header %q, which the request does not have.", name)
	}
	for i, v := range vs {
		vs[i] = strings.Trim(v, " \t")
	}
	return strings.Join(vs, ", "), nil
}

// CheckContentDigest checks a Content-Digest header (RFC 9530) against the
// raw body: it must hold a sha-256 digest, and that must be the body's.
func CheckContentDigest(values []string, body []byte) error {
	if len(values) == 0 {
		return fail(CheckDigest, "The request has no Content-Digest header: send Content-Digest: sha-256=:<base64 of the SHA-256 of the body>:.")
	}
	ds, err := parseDictionary(strings.Join(values, ", "))
	if err != nil {
		return fail(CheckDigest, "Content-Digest is not a valid structured field: %v.", err)
	}
	i := slices.IndexFunc(ds, func(m member) bool { return m.name == "sha-256" })
	if i < 0 || ds[i].isList {
		return fail(CheckDigest, "Content-Digest must hold a sha-256 digest as a byte sequence.")
	}
	sum := sha256.Sum256(body)
	if subtle.ConstantTimeCompare(ds[i].bytes, sum[:]) != 1 {
		return fail(CheckDigest, "Content-Digest does not match the body: the sha-256 digest must be of the exact bytes sent.")
	}
	return nil
}

// Verify checks the signature with secret, the whole HMAC key secret string
// as the key, in constant time.
func (s *Signed) Verify(secret string) error {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(s.Base))
	if !hmac.Equal(mac.Sum(nil), s.sig) {
		return fail(CheckSignature, "The signature does not match: it was not made with this key's secret over this request.")
	}
	return nil
}

// Sign returns the Signature-Input and Signature values of a request signed
// with secret, as a client does (DESIGN.md 6): label sig1, the components
// required of r, and the given created and nonce. r must carry its
// Content-Digest and Content-Type already when it has a body.
func Sign(r Request, keyID, secret, nonce string, created time.Time) (input, signature string, err error) {
	list := make([]item, 0, 4)
	for _, c := range required(r) {
		list = append(list, item{value: c})
	}
	ps := []param{{"created", created.Unix()}, {"keyid", keyID}, {"nonce", nonce}, {"alg", Alg}}
	input = "sig1=" + serializeInnerList(list, ps)
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Signature-Input", input)
	h.Set("Signature", "sig1=:AA==:")
	r.Header = h
	s, err := Parse(r, created)
	if err != nil {
		return "", "", err
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(s.Base))
	return input, "sig1=:" + b64(mac.Sum(nil)) + ":", nil
}

// ContentDigest returns the Content-Digest value of body.
func ContentDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return "sha-256=:" + b64(sum[:]) + ":"
}
