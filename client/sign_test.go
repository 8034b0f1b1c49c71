package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// RFC 9421's HMAC example (appendix B.2.5), byte for byte: its signature
// base, and its signature with its shared secret.
func TestSignatureBaseRFC9421Example(t *testing.T) {
	key, _ := base64.StdEncoding.DecodeString("uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==")
	base := signatureBase([]component{
		{"date", "Tue, 20 Apr 2021 02:07:55 GMT"},
		{"@authority", "example.com"},
		{"content-type", "application/json"},
	}, `("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"`)
	want := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@authority": example.com
"content-type": application/json
"@signature-params": ("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"`
	if base != want {
		t.Fatalf("signatureBase = %q; want %q", base, want)
	}
	if got := base64.StdEncoding.EncodeToString(hmacSHA256(key, base)); got != "pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=" {
		t.Errorf("signature = %s; want the RFC's", got)
	}
}

var sigInputRE = regexp.MustCompile(`^sig1=\(("@method" "@target-uri"(?: "content-digest" "content-type")?)\);created=(\d+);keyid="key_1";nonce="([0-9a-f]{32})";alg="hmac-sha256"$`)

// What WithHMAC sends, checked by rebuilding the signature from DESIGN.md
// section 6 alone: no Authorization, Content-Digest of the body, the
// covered components of each method, a fresh nonce per attempt.
func TestWithHMACSignsEachAttempt(t *testing.T) {
	const secret = "ck_test_hk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwx"
	type seen struct {
		header http.Header
		body   []byte
		url    string
	}
	var reqs []seen
	p := &proxy{fault: func(n int, r *http.Request) (*http.Response, error) {
		var b []byte
		if r.Body != nil {
			b, _ = io.ReadAll(r.Body)
		}
		reqs = append(reqs, seen{r.Header.Clone(), b, r.URL.String()})
		if n == 1 {
			return unavailable(503, ""), nil
		}
		return unavailable(400, ""), nil
	}}
	now := time.Unix(1790000000, 0)
	c := New("https://api.example.com", "7d1f6c8e-1c9a-4c55-9f9e-2b7a1c3d4e5f", WithBearer("ck_test_sk_x"), WithHMAC("key_1", secret), WithHTTPClient(&http.Client{Transport: p}))
	c.now = func() time.Time { return now }
	c.sleep = func(context.Context, time.Duration) error { now = now.Add(time.Second); return nil }
	c.Create(context.Background(), sword())
	c.Get(context.Background(), "cs_x")
	if len(reqs) != 3 {
		t.Fatalf("%d requests; want 3 (a create retried, a get)", len(reqs))
	}
	nonces := map[string]bool{}
	for i, r := range reqs {
		post := i < 2
		if r.header.Get("Authorization") != "" {
			t.Errorf("request %d has Authorization beside its signature", i)
		}
		m := sigInputRE.FindStringSubmatch(r.header.Get("Signature-Input"))
		if m == nil || (m[1] == `"@method" "@target-uri" "content-digest" "content-type"`) != post {
			t.Errorf("request %d: Signature-Input %q", i, r.header.Get("Signature-Input"))
			continue
		}
		nonces[m[3]] = true
		method := "GET"
		lines := ""
		if post {
			method = "POST"
			sum := sha256.Sum256(r.body)
			digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
			if r.header.Get("Content-Digest") != digest {
				t.Errorf("request %d: Content-Digest %q; want %q", i, r.header.Get("Content-Digest"), digest)
			}
			lines = "\"content-digest\": " + digest + "\n\"content-type\": application/json\n"
		} else if r.header.Get("Content-Digest") != "" {
			t.Errorf("request %d: a GET with Content-Digest", i)
		}
		base := "\"@method\": " + method + "\n\"@target-uri\": " + r.url + "\n" + lines +
			"\"@signature-params\": " + r.header.Get("Signature-Input")[len("sig1="):]
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(base))
		if want := "sig1=:" + base64.StdEncoding.EncodeToString(mac.Sum(nil)) + ":"; r.header.Get("Signature") != want {
			t.Errorf("request %d: Signature %q; want %q over\n%s", i, r.header.Get("Signature"), want, base)
		}
	}
	if len(nonces) != 3 {
		t.Errorf("%d distinct nonces in 3 attempts", len(nonces))
	}
	if reqs[0].header.Get("Idempotency-Key") != reqs[1].header.Get("Idempotency-Key") {
		t.Error("the retry of a signed create changed its Idempotency-Key")
	}
}
