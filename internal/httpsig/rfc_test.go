package httpsig

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"
)

// The HMAC-SHA256 example of RFC 9421 (appendix B.2.5): the signature base
// is built byte for byte as the RFC shows it, and its signature verifies
// with the RFC's shared secret.
func TestRFC9421HMACExample(t *testing.T) {
	key, _ := base64.StdEncoding.DecodeString("uzvJfB4u3N0Jy4T7NZ75MDVcr8zSTInedJtkgcu46YW4XByzNJjxBdtjUkdJPBtbmHhIDi6pcl8jsasjlTMtDQ==")
	u, _ := url.Parse("/foo?param=Value&Pet=dog")
	r := Request{Method: "POST", BaseURL: "https://example.com", URL: u, Header: http.Header{
		"Date":         {"Tue, 20 Apr 2021 02:07:55 GMT"},
		"Content-Type": {"application/json"},
	}}
	in, err := parseDictionary(`sig-b25=("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"`)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := parseDictionary(`sig-b25=:pxcQw6G3AjtMBQjwo8XzkZf/bws5LelbaMk5rGIGtE8=:`)
	if err != nil {
		t.Fatal(err)
	}
	base, err := signatureBase(r, in[0].list, in[0].params)
	want := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@authority": example.com
"content-type": application/json
"@signature-params": ("date" "@authority" "content-type");created=1618884473;keyid="test-shared-secret"`
	if err != nil || base != want {
		t.Fatalf("signature base = %q, %v; want %q", base, err, want)
	}
	s := &Signed{Base: base, sig: sig[0].bytes}
	if err := s.Verify(string(key)); err != nil {
		t.Errorf("Verify(the RFC's example) = %v", err)
	}
}
