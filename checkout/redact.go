package checkout

import (
	"regexp"
	"strings"
)

// secretPattern matches every secret-shaped string checkoutd issues: API key
// secrets (ck_test_sk_..., ck_live_hk_...) and webhook signing secrets
// (whsec_...). It is deliberately loose about the tail, so a truncated or
// mangled secret is caught too.
var secretPattern = regexp.MustCompile(`ck_(?:test|live)_(?:sk|hk)_[0-9A-Za-z]*|whsec_[0-9A-Za-z]*`)

// Redacted replaces a secret in request logs.
const Redacted = "[redacted]"

// RedactSecrets returns s with every secret-shaped string replaced by
// [redacted].
func RedactSecrets(s string) string {
	return secretPattern.ReplaceAllLiteralString(s, Redacted)
}

// StorableText returns s as valid UTF-8 without NUL characters, which
// PostgreSQL's text type refuses: for bodies and messages that came from
// outside (request logs, webhook responses) and are kept as text.
func StorableText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
