package httpsig

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// This file parses and serializes the few Structured Field Values (RFC
// 8941) that Signature-Input and Signature hold: a dictionary whose members
// are inner lists of strings with parameters (Signature-Input) or byte
// sequences (Signature). Anything else is refused rather than guessed at.

// param is one parameter, in the order it came.
type param struct {
	name  string
	value any // int64, string, token, bool
}

// token is a bare token value (RFC 8941 3.3.4), kept apart from strings so
// that it serializes back as it came.
type token string

// item is a string with parameters: one covered component.
type item struct {
	value  string
	params []param
}

// member is one member of a dictionary: an inner list with its
// parameters, or a byte sequence.
type member struct {
	name   string
	list   []item // nil for a byte sequence
	isList bool
	bytes  []byte
	params []param
}

type sfParser struct {
	s   string
	pos int
}

func (p *sfParser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *sfParser) skipSP() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

func (p *sfParser) skipOWS() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// parseDictionary parses a whole header value as a dictionary.
func parseDictionary(s string) ([]member, error) {
	p := &sfParser{s: s}
	p.skipSP()
	var out []member
	for p.pos < len(p.s) {
		name, err := p.key()
		if err != nil {
			return nil, err
		}
		m := member{name: name}
		if p.peek() != '=' {
			return nil, errors.New("a member without a value")
		}
		p.pos++
		switch c := p.peek(); {
		case c == '(':
			m.isList = true
			if m.list, err = p.innerList(); err != nil {
				return nil, err
			}
		case c == ':':
			if m.bytes, err = p.byteSequence(); err != nil {
				return nil, err
			}
		default:
			return nil, errors.New("a member that is neither an inner list nor a byte sequence")
		}
		if m.params, err = p.parameters(); err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.name == m.name {
				return nil, errors.New("the label " + m.name + " twice")
			}
		}
		out = append(out, m)
		p.skipOWS()
		if p.pos == len(p.s) {
			break
		}
		if p.peek() != ',' {
			return nil, errors.New("members not separated by commas")
		}
		p.pos++
		p.skipOWS()
		if p.pos == len(p.s) {
			return nil, errors.New("a trailing comma")
		}
	}
	return out, nil
}

func (p *sfParser) key() (string, error) {
	start := p.pos
	if c := p.peek(); !(c >= 'a' && c <= 'z' || c == '*') {
		return "", errors.New("a key that does not start with a lower-case letter")
	}
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == '*') {
			break
		}
		p.pos++
	}
	return p.s[start:p.pos], nil
}

func (p *sfParser) innerList() ([]item, error) {
	p.pos++ // (
	list := []item{}
	for {
		p.skipSP()
		if p.peek() == ')' {
			p.pos++
			return list, nil
		}
		if p.peek() != '"' {
			return nil, errors.New("a covered component that is not a string")
		}
		v, err := p.str()
		if err != nil {
			return nil, err
		}
		it := item{value: v}
		if it.params, err = p.parameters(); err != nil {
			return nil, err
		}
		list = append(list, it)
		if c := p.peek(); c != ' ' && c != ')' {
			return nil, errors.New("an inner list not closed")
		}
	}
}

func (p *sfParser) str() (string, error) {
	p.pos++ // "
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		p.pos++
		switch {
		case c == '\\':
			if p.pos == len(p.s) || (p.s[p.pos] != '"' && p.s[p.pos] != '\\') {
				return "", errors.New("a bad escape in a string")
			}
			b.WriteByte(p.s[p.pos])
			p.pos++
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", errors.New("a string with a character out of range")
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("an unterminated string")
}

func (p *sfParser) byteSequence() ([]byte, error) {
	p.pos++ // :
	end := strings.IndexByte(p.s[p.pos:], ':')
	if end < 0 {
		return nil, errors.New("an unterminated byte sequence")
	}
	b, err := base64.StdEncoding.DecodeString(p.s[p.pos : p.pos+end])
	if err != nil {
		return nil, errors.New("a byte sequence that is not base64")
	}
	p.pos += end + 1
	return b, nil
}

func (p *sfParser) parameters() ([]param, error) {
	var out []param
	for p.peek() == ';' {
		p.pos++
		p.skipSP()
		name, err := p.key()
		if err != nil {
			return nil, err
		}
		var v any = true
		if p.peek() == '=' {
			p.pos++
			if v, err = p.bareItem(); err != nil {
				return nil, err
			}
		}
		for _, o := range out {
			if o.name == name {
				return nil, errors.New("the parameter " + name + " twice")
			}
		}
		out = append(out, param{name, v})
	}
	return out, nil
}

func (p *sfParser) bareItem() (any, error) {
	switch c := p.peek(); {
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		start := p.pos
		if c == '-' {
			p.pos++
		}
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		if p.pos-start > 15 || p.peek() == '.' {
			return nil, errors.New("a number that is not an integer of at most 15 digits")
		}
		return strconv.ParseInt(p.s[start:p.pos], 10, 64)
	case c == '?':
		p.pos++
		switch p.peek() {
		case '0', '1':
			p.pos++
			return p.s[p.pos-1] == '1', nil
		}
		return nil, errors.New("a bad boolean")
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '*':
		start := p.pos
		for p.pos < len(p.s) && strings.IndexByte("!#$%&'*+-.^_`|~:/", p.s[p.pos]) >= 0 || p.pos < len(p.s) && isAlnum(p.s[p.pos]) {
			p.pos++
		}
		return token(p.s[start:p.pos]), nil
	}
	return nil, errors.New("a parameter value of an unknown kind")
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// serializeString writes s as an RFC 8941 string.
func serializeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

func serializeParams(b *strings.Builder, ps []param) {
	for _, p := range ps {
		b.WriteByte(';')
		b.WriteString(p.name)
		switch v := p.value.(type) {
		case bool:
			if !v {
				b.WriteString("=?0")
			}
		case int64:
			b.WriteByte('=')
			b.WriteString(strconv.FormatInt(v, 10))
		case string:
			b.WriteByte('=')
			serializeString(b, v)
		case token:
			b.WriteByte('=')
			b.WriteString(string(v))
		}
	}
}

// serializeInnerList writes an inner list with its parameters: the value
// of @signature-params.
func serializeInnerList(list []item, ps []param) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, it := range list {
		if i > 0 {
			b.WriteByte(' ')
		}
		serializeString(&b, it.value)
		serializeParams(&b, it.params)
	}
	b.WriteByte(')')
	serializeParams(&b, ps)
	return b.String()
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
