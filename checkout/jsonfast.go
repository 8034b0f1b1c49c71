package checkout

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// fastParse decodes body, valid UTF-8, into what parseObject's decoder makes
// of it (the same object, values and duplicate-key violations) in one pass
// over the bytes, without encoding/json's token stream, which allocated for
// every token and was most of a create's parsing. It reports false for
// anything but one well-formed JSON object, nested at most maxJSONDepth
// deep, with nothing but white space after it: parseObject then runs the
// decoder, whose errors the API reports. FuzzFastParse holds the two to the
// same answers.
func fastParse(body []byte) (*object, violations, bool) {
	p := fastParser{b: body}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil, nil, false
	}
	p.i++
	obj, ok := p.object("", 1)
	if !ok {
		return nil, nil, false
	}
	p.space()
	if p.i != len(p.b) {
		return nil, nil, false
	}
	return obj, p.dups, true
}

type fastParser struct {
	b    []byte
	i    int
	dups violations
}

func (p *fastParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads the members of an object whose '{' is read, and its '}'.
func (p *fastParser) object(path string, depth int) (*object, bool) {
	obj := &object{vals: map[string]any{}}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return obj, true
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(join(path, key), depth+1)
		if !ok {
			return nil, false
		}
		if _, dup := obj.vals[key]; dup {
			p.dups.add("duplicate_field", join(path, key), join(path, key)+" appears more than once.")
		} else {
			obj.keys = append(obj.keys, key)
			obj.vals[key] = v
		}
		if more, ok := p.after('}'); !ok || !more {
			return obj, ok
		}
	}
}

// after reads what follows a member or an element: a comma (more to come)
// or the closing byte (the end), with white space around.
func (p *fastParser) after(closing byte) (more, ok bool) {
	p.space()
	if p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return true, true
	case closing:
		p.i++
		return false, true
	}
	return false, false
}

func (p *fastParser) value(path string, depth int) (any, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		return p.object(path, depth)
	case c == '[':
		p.i++
		arr := []any{}
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return arr, true
		}
		for n := 0; ; n++ {
			v, ok := p.value(path+"["+strconv.Itoa(n)+"]", depth+1)
			if !ok {
				return nil, false
			}
			arr = append(arr, v)
			if more, ok := p.after(']'); !ok || !more {
				return arr, ok
			}
		}
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, false
}

func (p *fastParser) literal(word string) bool {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// number reads a number as JSON writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *fastParser) number() (any, bool) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case digits() == 0:
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return json.Number(p.b[start:p.i]), true
}

// str reads a string whose '"' is next, as encoding/json decodes it: a lone
// surrogate's escape becomes U+FFFD (parseObject refuses it after).
func (p *fastParser) str() (string, bool) {
	p.i++ // '"'
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := string(p.b[start:p.i])
			p.i++
			return s, true
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// escaped reads the rest of a string from its first escape, at p.i.
func (p *fastParser) escaped(start int) (string, bool) {
	out := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", false
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				r = p.lowHalf(r)
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return "", false
}

// lowHalf returns the character of the surrogate pair whose high half is
// r, its low half's escape next (and read), or U+FFFD when none follows,
// leaving what follows to be read on its own: as encoding/json does.
func (p *fastParser) lowHalf(r rune) rune {
	if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
		save := p.i
		p.i += 2
		if r2, ok := p.hex4(); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d
			}
		}
		p.i = save
	}
	return utf8.RuneError
}

func (p *fastParser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}
