package checkout

import (
	"regexp"
	"strings"
)

// secretPattern matches every secret-shaped string checkoutd issues: API key
// secrets (ck_test_sk_..., ck_live_hk_...) and webhook signing secrets
// (whsec_...). It is deliberately loose about the tail, so a truncated or
// mangled secret is caught too. The tail takes underscores as well: when two
// secrets run together (ck_test_sk_Xck_live_sk_Y) the first match would
// otherwise end at the second's "ck" and leave "_live_sk_Y" in the clear.
var secretPattern = regexp.MustCompile(`ck_(?:test|live)_(?:sk|hk)_[0-9A-Za-z_]*|whsec_[0-9A-Za-z_]*`)

// Redacted replaces a secret in request logs.
const Redacted = "[redacted]"

// RedactSecrets returns s with every secret-shaped string replaced by
// [redacted].
func RedactSecrets(s string) string {
	// Every match holds "ck_" or "whsec_". Most strings (every path, nearly
	// every body) hold neither, and checking that is far cheaper than the
	// regexp, which has no literal prefix to skip ahead with and so tries a
	// match at every byte: it was a tenth of the CPU of an API request.
	if !strings.Contains(s, "ck_") && !strings.Contains(s, "whsec_") {
		return s
	}
	return secretPattern.ReplaceAllLiteralString(s, Redacted)
}

// StorableText returns s as valid UTF-8 without NUL characters, which
// PostgreSQL's text type refuses: for bodies and messages that came from
// outside (request logs, webhook responses) and are kept as text.
func StorableText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
