package checkout

import (
	"regexp"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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

// maxUnescapes is how many layers of escaping RedactSecrets looks through:
// a JSON string holding a percent-encoded URL is two, a double-encoded query
// parameter two as well. Each layer costs a pass over the text.
const maxUnescapes = 3

// RedactSecrets returns s with every secret-shaped string replaced by
// [redacted], whatever its spelling: it looks through JSON escapes
// (\u0063k_live_sk_..., \/ and the like) and percent-encoding
// (ck%5Flive%5Fsk%5F..., in either case), up to maxUnescapes layers of them,
// whether or not the text around them is valid JSON or a valid URL. The
// text around each secret is kept as it was spelled; a secret is replaced
// whole, escapes included.
func RedactSecrets(s string) string {
	if !strings.ContainsAny(s, `%\`) {
		return redactLiteral(s)
	}
	var found []span
	text, spans := s, []span(nil) // spans == nil: text is s itself
	for layer := 0; ; layer++ {
		for _, m := range secretPattern.FindAllStringIndex(text, -1) {
			if spans == nil {
				found = append(found, span{m[0], m[1]})
			} else {
				found = append(found, span{spans[m[0]].start, spans[m[1]-1].end})
			}
		}
		if layer == maxUnescapes || !strings.ContainsAny(text, `%\`) {
			break
		}
		next, nextSpans, changed := unescape(text)
		if !changed {
			break
		}
		if spans != nil {
			for i, sp := range nextSpans {
				nextSpans[i] = span{spans[sp.start].start, spans[sp.end-1].end}
			}
		}
		text, spans = next, nextSpans
	}
	if len(found) == 0 {
		return s
	}
	sort.Slice(found, func(i, j int) bool { return found[i].start < found[j].start })
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for i := 0; i < len(found); {
		start, end := found[i].start, found[i].end
		for i++; i < len(found) && found[i].start < end; i++ {
			end = max(end, found[i].end)
		}
		b.WriteString(s[at:start])
		b.WriteString(Redacted)
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

// redactLiteral redacts the secrets of a text without escapes.
func redactLiteral(s string) string {
	// Every match holds "ck_" or "whsec_". Most strings (every path, nearly
	// every body) hold neither, and checking that is far cheaper than the
	// regexp, which has no literal prefix to skip ahead with and so tries a
	// match at every byte: it was a tenth of the CPU of an API request.
	if !strings.Contains(s, "ck_") && !strings.Contains(s, "whsec_") {
		return s
	}
	return secretPattern.ReplaceAllLiteralString(s, Redacted)
}

// span is a range [start, end) of bytes of a text.
type span struct{ start, end int }

// unescape decodes one layer of JSON escapes and percent-encoding in s,
// anywhere in it, and returns the result with, for each of its bytes, the
// bytes of s it came from. An escape that does not decode (%zz, \x, a \u
// without four hex digits) is kept as it is; a lone surrogate (\ud800)
// becomes U+FFFD.
func unescape(s string) (string, []span, bool) {
	out := make([]byte, 0, len(s))
	spans := make([]span, 0, len(s))
	changed := false
	emit := func(start, end int, bs ...byte) {
		for _, c := range bs {
			out = append(out, c)
			spans = append(spans, span{start, end})
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			emit(i, i+3, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 3
			changed = true
			continue
		case c == '\\' && i+1 < len(s):
			if d, ok := jsonEscapes[s[i+1]]; ok {
				emit(i, i+2, d)
				i += 2
				changed = true
				continue
			}
			if r, ok := hex4(s, i+2); s[i+1] == 'u' && ok {
				end := i + 6
				if utf16.IsSurrogate(r) {
					r2, ok2 := hex4(s, i+8)
					if ok2 && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
						if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
							r, end = pair, i+12
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				emit(i, end, utf8.AppendRune(nil, r)...)
				i = end
				changed = true
				continue
			}
		}
		emit(i, i+1, c)
		i++
	}
	return string(out), spans, changed
}

// jsonEscapes are JSON's two-character escapes and what they stand for.
var jsonEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		if !isHex(c) {
			return 0, false
		}
		r = r<<4 | rune(unhex(c))
	}
	return r, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// StorableText returns s as valid UTF-8 without NUL characters, which
// PostgreSQL's text type refuses: for bodies and messages that came from
// outside (request logs, webhook responses) and are kept as text.
func StorableText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
