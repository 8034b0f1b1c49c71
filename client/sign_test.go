package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
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

// The worked example of docs/signing.md, to the byte: what Create sends
// for its inputs is the page's headers block. The page is checkoutd's, not
// this module's: the test skips where the module is a copy of its own (in a
// merchant's module cache), and nowhere else.
func TestWithHMACDocsExample(t *testing.T) {
	raw, err := os.ReadFile("../docs/signing.md")
	if err != nil {
		if mod, merr := os.ReadFile("../go.mod"); merr != nil || !strings.HasPrefix(string(mod), "module github.com/checkoutd/checkoutd\n") {
			t.Skipf("not in checkoutd's repository: %v", err)
		}
		t.Fatal(err)
	}
	doc := string(raw)
	block := func(name string) string {
		_, after, ok := strings.Cut(doc, "<!-- example: "+name+" -->\n```\n")
		body, _, ok2 := strings.Cut(after, "\n```")
		if !ok || !ok2 {
			t.Fatalf("no example block %q in docs/signing.md", name)
		}
		return body
	}
	in := map[string]string{}
	for _, line := range strings.Split(block("inputs"), "\n") {
		k, v, _ := strings.Cut(line, "  ") // the label, then at least two spaces
		in[k] = strings.TrimSpace(v)
	}
	var got http.Header
	var gotBody []byte
	p := &proxy{fault: func(_ int, r *http.Request) (*http.Response, error) {
		got, gotBody = r.Header.Clone(), nil
		if r.Body != nil {
			gotBody, _ = io.ReadAll(r.Body)
		}
		if r.Method != in["method"] || r.URL.String() != in["URL"] {
			t.Errorf("request %s %s; want %s %s", r.Method, r.URL, in["method"], in["URL"])
		}
		return unavailable(400, ""), nil
	}}
	storeID := strings.TrimSuffix(strings.TrimPrefix(in["URL"], "https://pay.example.com/v1/stores/"), "/checkouts")
	c := New("https://pay.example.com", storeID, WithHMAC(in["key id"], in["secret"]), WithHTTPClient(&http.Client{Transport: p}))
	created, _ := strconv.ParseInt(in["created"], 10, 64)
	c.now = func() time.Time { return time.Unix(created, 0) }
	c.nonce = func() string { return in["nonce"] }
	var params CreateParams
	if err := json.Unmarshal([]byte(in["body"]), &params); err != nil {
		t.Fatal(err)
	}
	c.Create(context.Background(), params)
	if string(gotBody) != in["body"] {
		t.Fatalf("body %s; want the example's %s", gotBody, in["body"])
	}
	for _, line := range strings.Split(block("headers"), "\n") {
		k, want, _ := strings.Cut(line, ": ")
		if got.Get(k) != want {
			t.Errorf("%s: %s; want %s", k, got.Get(k), want)
		}
	}
}
