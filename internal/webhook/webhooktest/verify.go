package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Verify checks a Service-Webhook-Signature header as a merchant's receiver
// does, from the documentation alone, independently of checkoutd's signing
// code: t within 5 minutes of now, and a v1= among those sent (two during a
// roll with overlap) equal to the HMAC-SHA256 of "<t>.<raw body>" keyed with
// the whole secret.
func Verify(header string, body []byte, secret string, now time.Time) bool {
	return verify(header, body, secret, now)
}

// Signatures splits a Service-Webhook-Signature header,
// t=<unix>,v1=<hex>[,v1=<hex>...], into its timestamp and its signatures,
// in order.
func Signatures(header string) (ts string, v1 []string) {
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = append(v1, v)
		}
	}
	return ts, v1
}

// verify is the receiver's check of docs/webhooks.md (Verifying the
// signature), word for word (TestDocsVerify keeps the two the same), so that
// the tests that verify what checkoutd sends hold the documentation to it.
func verify(header string, body []byte, secret string, now time.Time) bool {
	var ts string
	var sigs []string // one, or two during a roll with overlap
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(t, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret)) // the whole secret, whsec_ included
	mac.Write([]byte(ts + "." + string(body)))
	want := []byte(hex.EncodeToString(mac.Sum(nil)))
	for _, sig := range sigs {
		if hmac.Equal(want, []byte(sig)) {
			return true
		}
	}
	return false
}
