package httpsig_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/yaronf/httpsign"

	"github.com/checkoutd/checkoutd/internal/httpsig"
)

const (
	base   = "https://api.example.com"
	path   = "/v1/stores/3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60/checkouts"
	keyID  = "key_0123456789abcdef0123456789abcdef"
	secret = "ck_test_hk_" + "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP"
	body   = `{"items":[{"name":"Sword","amount":1500}]}`
)

var t0 = time.Unix(1_790_000_000, 0)

// signedPost is a POST to the API signed by httpsig.Sign at t0.
func signedPost(t *testing.T) httpsig.Request {
	t.Helper()
	u, _ := url.Parse(path)
	r := httpsig.Request{Method: "POST", BaseURL: base, URL: u, Body: []byte(body), Header: http.Header{
		"Content-Type":   {"application/json"},
		"Content-Digest": {httpsig.ContentDigest([]byte(body))},
	}}
	in, sig, err := httpsig.Sign(r, keyID, secret, "nonce-1", t0)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Signature-Input", in)
	r.Header.Set("Signature", sig)
	return r
}

func TestSignParseVerify(t *testing.T) {
	r := signedPost(t)
	if got := r.Header.Get("Signature-Input"); got != `sig1=("@method" "@target-uri" "content-digest" "content-type");created=1790000000;keyid="`+keyID+`";nonce="nonce-1";alg="hmac-sha256"` {
		t.Errorf("Signature-Input = %s", got)
	}
	s, err := httpsig.Parse(r, t0.Add(httpsig.Window))
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	if s.KeyID != keyID || s.Nonce != "nonce-1" || !s.Created.Equal(t0) {
		t.Errorf("Parse = %+v", s)
	}
	wantBase := `"@method": POST
"@target-uri": https://api.example.com` + path + `
"content-digest": ` + httpsig.ContentDigest([]byte(body)) + `
"content-type": application/json
"@signature-params": ("@method" "@target-uri" "content-digest" "content-type");created=1790000000;keyid="` + keyID + `";nonce="nonce-1";alg="hmac-sha256"`
	if s.Base != wantBase {
		t.Errorf("Base =\n%s\nwant\n%s", s.Base, wantBase)
	}
	if err := s.Verify(secret); err != nil {
		t.Errorf("Verify = %v", err)
	}

	// A GET covers @method and @target-uri only.
	u, _ := url.Parse(path + "/cs_x?expand=none")
	get := httpsig.Request{Method: "GET", BaseURL: base + "/", URL: u, Header: http.Header{}}
	in, sig, err := httpsig.Sign(get, keyID, secret, "nonce-2", t0)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Signature-Input", in)
	get.Header.Set("Signature", sig)
	s, err = httpsig.Parse(get, t0)
	if err != nil || !strings.Contains(s.Base, `"@target-uri": https://api.example.com`+path+"/cs_x?expand=none\n") {
		t.Fatalf("Parse(GET) = %+v, %v", s, err)
	}
	if err := s.Verify(secret); err != nil {
		t.Errorf("Verify(GET) = %v", err)
	}
}

// Every refusal names the check that failed, and never holds the value the
// server expected (the body's digest, the signature).
func TestRefusals(t *testing.T) {
	good := signedPost(t)
	goodSig := good.Header.Get("Signature")
	with := func(f func(r *httpsig.Request)) httpsig.Request {
		r := good
		r.Header = good.Header.Clone()
		f(&r)
		return r
	}
	setInput := func(v string) func(r *httpsig.Request) {
		return func(r *httpsig.Request) { r.Header.Set("Signature-Input", v) }
	}
	params := `;created=1790000000;keyid="` + keyID + `";nonce="nonce-1";alg="hmac-sha256"`
	all := `("@method" "@target-uri" "content-digest" "content-type")`
	tests := []struct {
		name  string
		r     httpsig.Request
		now   time.Time
		check string
	}{
		{"no Signature", with(func(r *httpsig.Request) { r.Header.Del("Signature") }), t0, httpsig.CheckMalformed},
		{"garbage input", with(setInput("sig1=(@method")), t0, httpsig.CheckMalformed},
		{"two signatures", with(setInput("sig1=" + all + params + ", sig2=" + all + params)), t0, httpsig.CheckMalformed},
		{"another label", with(setInput("sig2=" + all + params)), t0, httpsig.CheckMalformed},
		{"no alg", with(setInput(`sig1=` + all + `;created=1790000000;keyid="` + keyID + `";nonce="n"`)), t0, httpsig.CheckAlg},
		{"another alg", with(setInput(`sig1=` + all + `;created=1790000000;keyid="` + keyID + `";nonce="n";alg="ed25519"`)), t0, httpsig.CheckAlg},
		{"no created", with(setInput(`sig1=` + all + `;keyid="` + keyID + `";nonce="n";alg="hmac-sha256"`)), t0, httpsig.CheckMalformed},
		{"no keyid", with(setInput(`sig1=` + all + `;created=1790000000;nonce="n";alg="hmac-sha256"`)), t0, httpsig.CheckMalformed},
		{"no nonce", with(setInput(`sig1=` + all + `;created=1790000000;keyid="` + keyID + `";alg="hmac-sha256"`)), t0, httpsig.CheckMalformed},
		{"nonce too long", with(setInput(`sig1=` + all + `;created=1790000000;keyid="k";nonce="` + strings.Repeat("n", 129) + `";alg="hmac-sha256"`)), t0, httpsig.CheckMalformed},
		{"stale", good, t0.Add(httpsig.Window + time.Second), httpsig.CheckStale},
		{"expired", with(setInput("sig1=" + all + params + ";expires=1790000010")), t0.Add(10 * time.Second), httpsig.CheckStale},
		{"expires not an integer", with(setInput("sig1=" + all + params + `;expires="soon"`)), t0, httpsig.CheckMalformed},
		{"from the future", good, t0.Add(-httpsig.Window - time.Second), httpsig.CheckStale},
		{"content-type not covered", with(setInput(`sig1=("@method" "@target-uri" "content-digest")` + params)), t0, httpsig.CheckComponent},
		{"content-digest not covered", with(setInput(`sig1=("@method" "@target-uri" "content-type")` + params)), t0, httpsig.CheckComponent},
		{"@target-uri not covered", with(setInput(`sig1=("@method" "content-digest" "content-type")` + params)), t0, httpsig.CheckComponent},
		{"@method not covered", with(setInput(`sig1=("@target-uri" "content-digest" "content-type")` + params)), t0, httpsig.CheckComponent},
		{"covers a missing header", with(setInput(`sig1=("@method" "@target-uri" "content-digest" "content-type" "x-missing")` + params)), t0, httpsig.CheckComponent},
		{"no Content-Digest", with(func(r *httpsig.Request) { r.Header.Del("Content-Digest") }), t0, httpsig.CheckDigest},
		{"Content-Digest of another body", with(func(r *httpsig.Request) { r.Body = []byte(body + " ") }), t0, httpsig.CheckDigest},
		{"Content-Digest sha-512 only", with(func(r *httpsig.Request) { r.Header.Set("Content-Digest", "sha-512=:AAAA:") }), t0, httpsig.CheckDigest},
	}
	digest := httpsig.ContentDigest([]byte(body))
	for _, tt := range tests {
		s, err := httpsig.Parse(tt.r, tt.now)
		f, ok := err.(*httpsig.Failure)
		if !ok || f.Check != tt.check {
			t.Errorf("%s: Parse = %+v, %v; want a failure of %s", tt.name, s, err, tt.check)
			continue
		}
		if strings.Contains(f.Message, digest[len("sha-256=:"):len(digest)-1]) || strings.Contains(f.Message, goodSig[len("sig1=:"):len(goodSig)-1]) {
			t.Errorf("%s: message %q holds an expected value", tt.name, f.Message)
		}
	}

	// An expires still ahead passes, and is signed like every parameter.
	notYet := with(setInput("sig1=" + all + params + ";expires=1790000010"))
	if s, err := httpsig.Parse(notYet, t0.Add(9*time.Second)); err != nil || !strings.HasSuffix(s.Base, `alg="hmac-sha256";expires=1790000010`) {
		t.Errorf("Parse(expires ahead) = %+v, %v; want it accepted, in the base", s, err)
	}

	// What only the key can tell: another secret, or a request changed
	// after signing, is a bad signature.
	s, err := httpsig.Parse(good, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(secret[:len(secret)-1] + "X"); err == nil || err.(*httpsig.Failure).Check != httpsig.CheckSignature {
		t.Errorf("Verify(another secret) = %v; want bad_signature", err)
	}
	for name, r := range map[string]httpsig.Request{
		"another method":   with(func(r *httpsig.Request) { r.Method = "PUT" }),
		"another base URL": with(func(r *httpsig.Request) { r.BaseURL = "https://evil.example.com" }),
		"another path":     with(func(r *httpsig.Request) { r.URL, _ = url.Parse(path + "x") }),
		"another type":     with(func(r *httpsig.Request) { r.Header.Set("Content-Type", "text/plain") }),
	} {
		s, err := httpsig.Parse(r, t0)
		if err != nil {
			t.Errorf("%s: Parse = %v", name, err)
			continue
		}
		if err := s.Verify(secret); err == nil || err.(*httpsig.Failure).Check != httpsig.CheckSignature {
			t.Errorf("%s: Verify = %v; want bad_signature", name, err)
		}
	}
}

// An independent implementation of RFC 9421, github.com/yaronf/httpsign
// (v0.4.2), signs a request as a merchant would, and it verifies here; and
// what httpsig.Sign makes verifies there. Both sides use the real clock:
// httpsign sets created to its own time.
func TestInteropHTTPSign(t *testing.T) {
	fields := httpsign.Headers("@method", "@target-uri", "content-digest", "content-type")
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rc := io.NopCloser(strings.NewReader(body))
	digest, err := httpsign.GenerateContentDigestHeader(&rc, []string{httpsign.DigestSha256})
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Digest", digest)
	signer, err := httpsign.NewHMACSHA256Signer([]byte(secret), httpsign.NewSignConfig().SetKeyID(keyID).SetNonce("interop-nonce"), fields)
	if err != nil {
		t.Fatal(err)
	}
	in, sig, err := httpsign.SignRequest("sig1", *signer, req)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(path)
	r := httpsig.Request{Method: "POST", BaseURL: base, URL: u, Body: []byte(body), Header: http.Header{
		"Content-Type": {"application/json"}, "Content-Digest": {digest}, "Signature-Input": {in}, "Signature": {sig},
	}}
	s, err := httpsig.Parse(r, time.Now())
	if err != nil {
		t.Fatalf("Parse(httpsign's request, %s) = %v", in, err)
	}
	if err := s.Verify(secret); err != nil {
		t.Errorf("Verify(httpsign's signature) = %v\nbase:\n%s", err, s.Base)
	}

	// The other way: httpsig.Sign's headers verify with httpsign.
	r = httpsig.Request{Method: "POST", BaseURL: base, URL: u, Body: []byte(body), Header: http.Header{
		"Content-Type": {"application/json"}, "Content-Digest": {httpsig.ContentDigest([]byte(body))},
	}}
	in, sig, err = httpsig.Sign(r, keyID, secret, "our-nonce", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest("POST", base+path, bytes.NewReader([]byte(body)))
	req.Header = r.Header.Clone()
	req.Header.Set("Signature-Input", in)
	req.Header.Set("Signature", sig)
	verifier, err := httpsign.NewHMACSHA256Verifier([]byte(secret), httpsign.NewVerifyConfig().SetKeyID(keyID).SetNotOlderThan(time.Minute).SetNotNewerThan(time.Minute), fields)
	if err != nil {
		t.Fatal(err)
	}
	if err := httpsign.VerifyRequest("sig1", *verifier, req); err != nil {
		t.Errorf("httpsign.VerifyRequest(our signature) = %v", err)
	}
}

// KeyID reads the keyid of the one signature of Signature-Input, and
// nothing from a header that holds none, several, or one without a keyid.
func TestKeyID(t *testing.T) {
	for _, tt := range []struct {
		input []string
		want  string
	}{
		{[]string{`sig1=("@method" "@target-uri");created=1;keyid="key_abc";nonce="n";alg="hmac-sha256"`}, "key_abc"},
		{[]string{`sig1=("@method");keyid="key_abc"`}, "key_abc"},
		{nil, ""},
		{[]string{"nonsense"}, ""},
		{[]string{`sig1=("@method");created=1`}, ""},
		{[]string{`sig1=("@method");keyid=12`}, ""},
		{[]string{`sig1=("@method");keyid="a"`, `sig2=("@method");keyid="b"`}, ""},
		{[]string{`sig1=:AAAA:`}, ""},
	} {
		h := http.Header{}
		for _, v := range tt.input {
			h.Add("Signature-Input", v)
		}
		if got := httpsig.KeyID(h); got != tt.want {
			t.Errorf("KeyID(%q) = %q; want %q", tt.input, got, tt.want)
		}
	}
}
