package client

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the header that carries a delivery's signature:
// t=<unix seconds>,v1=<hex>[,v1=<hex>...].
const SignatureHeader = "Service-Webhook-Signature"

// DefaultTolerance is how far a signature's timestamp may be from now.
const DefaultTolerance = 5 * time.Minute

// MaxWebhookBody bounds the body WebhookHandler reads: events are a few
// KiB, so anything near this is not checkoutd's.
const MaxWebhookBody = 1 << 20

// The reasons a delivery fails verification, for errors.Is. An error that
// is ErrReserialized is also ErrNoMatchingSignature.
var (
	// ErrMalformedHeader: no Service-Webhook-Signature header, or not
	// t=<unix>,v1=<64 hex>.
	ErrMalformedHeader = errors.New("checkoutd webhook: malformed " + SignatureHeader + " header")
	// ErrNoMatchingSignature: no v1= is the HMAC of the body with any of
	// the secrets: a wrong secret, or a body that is not what was sent.
	ErrNoMatchingSignature = errors.New("checkoutd webhook: no signature matches the body")
	// ErrReserialized: no signature matches, and the body is JSON that is
	// not in the form checkoutd sends (re-indented, keys reordered,
	// characters escaped differently): it was decoded and encoded again
	// before verification, which no signature survives.
	ErrReserialized = errors.New("the body must be the raw bytes received; it looks re-serialized")
	// ErrStaleTimestamp: the signature matches but its timestamp is more
	// than the tolerance away from now: a replay of an old delivery, or a
	// clock far off.
	ErrStaleTimestamp = errors.New("checkoutd webhook: signature timestamp outside the tolerance")
	// ErrNoSecret: no secret was given, or an empty one (an unset
	// environment variable, say), with which anyone could sign. It is the
	// receiver's configuration that is wrong, not the delivery.
	ErrNoSecret = errors.New("checkoutd webhook: no signing secret given (an empty one is refused)")
)

// Verifier checks webhook deliveries.
type Verifier struct {
	// Secrets are the endpoint's signing secrets, whsec_ included; during
	// a roll with overlap, give the new and the old one, and a delivery
	// signed with either passes.
	Secrets []string
	// Tolerance is how far the signature's timestamp may be from Now
	// (DefaultTolerance when 0).
	Tolerance time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// VerifyWebhook checks body (the raw bytes received) against header (the
// Service-Webhook-Signature header) with any of secrets, and decodes the
// event. It is Verifier{Secrets: secrets}.Verify.
func VerifyWebhook(body []byte, header string, secrets ...string) (*Event, error) {
	return (&Verifier{Secrets: secrets}).Verify(body, header)
}

// Verify checks body (the raw bytes received, not JSON decoded and encoded
// again) against header, the Service-Webhook-Signature header, and decodes
// the event. The error is one of the Err... values, wrapped.
func (v *Verifier) Verify(body []byte, header string) (*Event, error) {
	if len(v.Secrets) == 0 || slices.Contains(v.Secrets, "") {
		return nil, ErrNoSecret
	}
	ts, sigs, err := parseSignatureHeader(header)
	if err != nil {
		return nil, err
	}
	if !v.matches(ts, sigs, body) {
		return nil, v.mismatch(body)
	}
	t, _ := strconv.ParseInt(ts, 10, 64)
	now, tol := v.now(), cmpOr(v.Tolerance, DefaultTolerance)
	if d := now.Sub(time.Unix(t, 0)); d > tol || d < -tol {
		return nil, fmt.Errorf("%w: signed at %s, %s from now (tolerance %s)", ErrStaleTimestamp, time.Unix(t, 0).UTC().Format(time.RFC3339), d.Round(time.Second), tol)
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("checkoutd webhook: signed body is not an event: %w", err)
	}
	return &e, nil
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// matches reports whether any v1= is the signature of body with any secret.
// Every comparison is made, in constant time, so the time taken says
// nothing about how close a forged signature was.
func (v *Verifier) matches(ts string, sigs [][]byte, body []byte) bool {
	ok := false
	for _, secret := range v.Secrets {
		want := sign(secret, ts, body)
		for _, sig := range sigs {
			if hmac.Equal(want, sig) {
				ok = true
			}
		}
	}
	return ok
}

// mismatch is the error of a body no signature matches, saying what most
// likely went wrong.
func (v *Verifier) mismatch(body []byte) error {
	switch {
	case len(body) == 0:
		return fmt.Errorf("%w: the body is empty (was it read before verification?)", ErrNoMatchingSignature)
	case looksReserialized(body):
		return fmt.Errorf("%w: %w", ErrNoMatchingSignature, ErrReserialized)
	}
	for _, s := range v.Secrets {
		if !strings.HasPrefix(s, "whsec_") {
			return fmt.Errorf("%w: the secret is the whole whsec_... string, prefix included", ErrNoMatchingSignature)
		}
	}
	return fmt.Errorf("%w: wrong secret (was it rolled?) or a body changed on the way", ErrNoMatchingSignature)
}

// looksReserialized reports whether body is JSON checkoutd could not have
// sent as it is: checkoutd sends Go's compact encoding (no white space, <,
// > and & escaped as \u003c...) with "id" first, so spacing, a trailing
// newline, other escaping or sorted keys (a map encoded again starts with
// "api_version") betray a body decoded and encoded again.
func looksReserialized(body []byte) bool {
	if !json.Valid(body) {
		return false
	}
	compact, err := json.Marshal(json.RawMessage(body))
	if err != nil || !bytes.Equal(compact, body) {
		return true
	}
	d := json.NewDecoder(bytes.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return true
	}
	first, err := d.Token()
	return err != nil || first != "id"
}

// sign returns the hex HMAC-SHA256 of "<ts>.<body>" keyed with the whole
// secret.
func sign(secret, ts string, body []byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return []byte(hex.EncodeToString(mac.Sum(nil)))
}

// WebhookSignature returns the Service-Webhook-Signature header checkoutd
// would send for body, signed with secret at t: for testing a receiver.
func WebhookSignature(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + string(sign(secret, ts, body))
}

// parseSignatureHeader splits t=<unix>,v1=<hex>[,v1=<hex>...]. Other
// schemes (a v0= or a future v2=) are skipped, as the scheme's verifiers
// do; v1= values that are not 64 hex characters are too, but at least one
// must be.
func parseSignatureHeader(h string) (string, [][]byte, error) {
	if strings.TrimSpace(h) == "" {
		return "", nil, fmt.Errorf("%w: the header is missing", ErrMalformedHeader)
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(h, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			if ts != "" {
				return "", nil, fmt.Errorf("%w: two t= values", ErrMalformedHeader)
			}
			ts = val
		case "v1":
			if len(val) == sha256.Size*2 && isHex(val) {
				sigs = append(sigs, []byte(strings.ToLower(val)))
			}
		}
	}
	if _, err := strconv.ParseInt(ts, 10, 64); err != nil {
		return "", nil, fmt.Errorf("%w: no t=<unix seconds>", ErrMalformedHeader)
	}
	if len(sigs) == 0 {
		return "", nil, fmt.Errorf("%w: no v1=<64 hex characters>", ErrMalformedHeader)
	}
	return ts, sigs, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// WebhookHandler returns a handler that verifies each delivery with
// secrets (see Verifier) and passes the event to fn. It is
// Verifier{Secrets: secrets}.Handler(fn).
func WebhookHandler(secrets []string, fn func(*Event) error) http.Handler {
	return (&Verifier{Secrets: secrets}).Handler(fn)
}

// Handler returns a handler that reads a delivery's body as received (at
// most MaxWebhookBody bytes), verifies it and passes the event to fn. It
// answers 200 when fn returns nil; 500 when fn fails or no secret is
// configured, so checkoutd tries again later (on its schedule: a minute,
// then longer); 400 for a malformed
// signature header, 401 for a signature that does not match or is stale,
// 405 for another method than POST and 413 for a body too large, none of
// which a retry would change. fn should skip an event id it already
// handled: delivery is at least once.
func (v *Verifier) Handler(fn func(*Event) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "webhooks are POSTed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxWebhookBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		e, err := v.Verify(body, r.Header.Get(SignatureHeader))
		if err != nil {
			status := http.StatusUnauthorized
			switch {
			case errors.Is(err, ErrMalformedHeader):
				status = http.StatusBadRequest
			case errors.Is(err, ErrNoSecret):
				// The receiver is misconfigured: 500, so that the delivery
				// is tried again once it is fixed.
				status = http.StatusInternalServerError
			}
			http.Error(w, err.Error(), status)
			return
		}
		if err := fn(e); err != nil {
			http.Error(w, "the receiver failed to handle the event", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}
