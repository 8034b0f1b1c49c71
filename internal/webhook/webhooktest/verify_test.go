package webhooktest

import (
	"os"
	"strings"
	"testing"
)

// The receiver's check in docs/webhooks.md is verify, which the tests run
// on what checkoutd sends.
func TestDocsVerify(t *testing.T) {
	fn := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		start := strings.Index(s, "func verify(")
		end := strings.Index(s[max(start, 0):], "\n}\n")
		if start < 0 || end < 0 {
			t.Fatalf("no func verify in %s", path)
		}
		return s[start : start+end+2]
	}
	if docs, test := fn("../../../docs/webhooks.md"), fn("verify.go"); docs != test {
		t.Errorf("docs/webhooks.md's verify is not the test's:\n%s\nwant:\n%s", docs, test)
	}
}
