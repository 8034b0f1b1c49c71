package httpsig_test

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/httpsig"
)

// The worked example of docs/signing.md.
const (
	exampleSecret  = "ck_test_hk_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP"
	exampleKeyID   = "key_0123456789abcdef0123456789abcdef"
	exampleBaseURL = "https://pay.example.com"
	examplePath    = "/v1/stores/5f0c6a7e-3b1d-4c2a-9e8f-1a2b3c4d5e6f/checkouts"
	exampleBody    = `{"items":[{"name":"Sword","amount":1500,"quantity":2}]}`
	exampleNonce   = "b3f1c2d4e5a69788"
	exampleCreated = 1790000000
)

// exampleBlock matches a block of docs/signing.md: the fenced block after
// an <!-- example: NAME --> comment.
var exampleBlock = regexp.MustCompile("(?s)<!-- example: ([a-z-]+) -->\n```[a-z]*\n(.*?)\n```")

func docBlocks(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/signing.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	for _, m := range exampleBlock.FindAllStringSubmatch(string(b), -1) {
		blocks[m[1]] = m[2]
	}
	return blocks
}

// exampleSigned is the worked example signed by this package: what the
// server verifies.
func exampleSigned(t *testing.T) (digest, base, input, signature string) {
	t.Helper()
	u, _ := url.Parse(examplePath)
	h := http.Header{"Content-Type": {"application/json"}, "Content-Digest": {httpsig.ContentDigest([]byte(exampleBody))}}
	r := httpsig.Request{Method: "POST", BaseURL: exampleBaseURL, URL: u, Header: h, Body: []byte(exampleBody)}
	input, signature, err := httpsig.Sign(r, exampleKeyID, exampleSecret, exampleNonce, time.Unix(exampleCreated, 0))
	if err != nil {
		t.Fatal(err)
	}
	r.Header = h.Clone()
	r.Header.Set("Signature-Input", input)
	r.Header.Set("Signature", signature)
	s, err := httpsig.Parse(r, time.Unix(exampleCreated, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(exampleSecret); err != nil {
		t.Fatalf("the example does not verify: %v", err)
	}
	return h.Get("Content-Digest"), s.Base, input, signature
}

// docs/signing.md's worked example is what the server computes, to the byte.
func TestDocsWorkedExample(t *testing.T) {
	blocks := docBlocks(t)
	digest, base, input, signature := exampleSigned(t)
	want := map[string]string{
		"content-digest": digest,
		"base":           base,
		"headers": "Content-Type: application/json\nContent-Digest: " + digest + "\nSignature-Input: " + input +
			"\nSignature: " + signature,
	}
	for name, w := range want {
		if blocks[name] != w {
			t.Errorf("docs/signing.md's %s block is\n%s\nwant\n%s", name, blocks[name], w)
		}
	}
	for _, v := range []string{exampleSecret, exampleKeyID, exampleBaseURL + examplePath, exampleBody, "1790000000", exampleNonce} {
		if !strings.Contains(blocks["inputs"], v) {
			t.Errorf("docs/signing.md's inputs do not show %s", v)
		}
	}
}

// The shell, Node and Python signers of docs/signing.md, run on the worked
// example, make its signature.
func TestDocsSigners(t *testing.T) {
	blocks := docBlocks(t)
	_, _, _, signature := exampleSigned(t)
	url := exampleBaseURL + examplePath
	tests := []struct {
		name, block, tool string
		args              func(code string) []string
		env               []string
	}{
		{"shell", "shell", "bash", func(code string) []string {
			// curl prints the signature it was given instead of sending.
			return []string{"-c", `curl() { for a in "$@"; do case "$a" in Signature:*) echo "${a#Signature: }";; esac; done; }` + "\n" + code}
		}, []string{"SECRET=" + exampleSecret, "KEY_ID=" + exampleKeyID, "URL=" + url, "BODY=" + exampleBody,
			"CREATED=1790000000", "NONCE=" + exampleNonce}},
		{"node", "node", "node", func(code string) []string {
			return []string{"-e", code + "\nconsole.log(sign(" + jsArgs(url) + ").Signature);"}
		}, nil},
		{"python", "python", "python3", func(code string) []string {
			return []string{"-c", code + "\nprint(sign(" + pyArgs(url) + ")['Signature'])"}
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code := blocks[tt.block]
			if code == "" {
				t.Fatalf("docs/signing.md has no %s block", tt.block)
			}
			path, err := exec.LookPath(tt.tool)
			if err != nil {
				t.Skipf("no %s here to run the %s example: %v", tt.tool, tt.name, err)
			}
			cmd := exec.Command(path, tt.args(code)...)
			cmd.Env = append(os.Environ(), tt.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", tt.name, err, out)
			}
			if got := strings.TrimSpace(string(out)); got != signature {
				t.Errorf("the %s example signs %q; want %q", tt.name, got, signature)
			}
		})
	}
}

func jsArgs(url string) string {
	return "'" + exampleSecret + "', '" + exampleKeyID + "', 'POST', '" + url + "', '" + exampleBody + "', " +
		"1790000000, '" + exampleNonce + "'"
}

func pyArgs(url string) string {
	return "'" + exampleSecret + "', '" + exampleKeyID + "', 'POST', '" + url + "', b'" + exampleBody + "', " +
		"1790000000, '" + exampleNonce + "'"
}
