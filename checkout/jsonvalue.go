package checkout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting in request bodies. Nothing the API accepts is
// nested deeper than three levels.
const maxJSONDepth = 32

// object is a decoded JSON object that remembers its keys in order, so that
// validation reports problems in the order the caller wrote them.
type object struct {
	keys []string
	vals map[string]any // *object, []any, string, json.Number, bool or nil
}

// parseObject decodes body, which must be exactly one JSON object. Duplicate
// keys are reported as violations rather than silently resolved, since two
// parsers that resolve them differently disagree about what was sent.
//
// The body must be UTF-8 and its strings Unicode text: encoding/json would
// turn bytes that are not UTF-8, and escapes of a lone UTF-16 surrogate
// (\ud800), into U+FFFD, so that what is stored differs from what was sent.
func parseObject(body []byte) (*object, violations, error) {
	if err := checkUTF8(body); err != nil {
		return nil, nil, err
	}
	if obj, dups, ok := fastParse(body); ok {
		if err := checkSurrogates(body); err != nil {
			return nil, nil, err
		}
		return obj, dups, nil
	}
	return decodeObject(body)
}

// decodeObject is parseObject through encoding/json's decoder: for a body
// fastParse did not take, whose error it reports.
func decodeObject(body []byte) (*object, violations, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, invalidJSON(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, Errorf(EInvalidJSON, "The request body must be a JSON object.")
	}
	p := parser{dec: dec}
	obj, err := p.object("", 1)
	if err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, Errorf(EInvalidJSON, "The request body must hold exactly one JSON object; there is more after it.")
	}
	if err := checkSurrogates(body); err != nil {
		return nil, nil, err
	}
	return obj, p.dups, nil
}

// checkUTF8 fails with invalid_json, naming the first offending byte and
// its offset, unless body is valid UTF-8.
func checkUTF8(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	for i := 0; i < len(body); {
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n <= 1 {
			return Errorf(EInvalidJSON, "The request body is not valid UTF-8: byte 0x%02x at byte %d (counting from 0) does not begin a UTF-8 character.", body[i], i)
		}
		i += n
	}
	return nil
}

// checkSurrogates fails with invalid_json at the first \u escape of a UTF-16
// surrogate that is not a high one followed by an escaped low one: such an
// escape stands for no character. body is valid JSON.
func checkSurrogates(body []byte) error {
	if !bytes.Contains(body, []byte(`\u`)) {
		return nil
	}
	inString := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if body[i+1] != 'u' {
				i++ // a two-character escape: skip what it escapes
				continue
			}
			r := hex4At(body, i+2)
			switch {
			case !utf16.IsSurrogate(r):
			case r < 0xdc00 && i+11 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' &&
				utf16.DecodeRune(r, hex4At(body, i+8)) != utf8.RuneError:
				i += 6 // the pair's low half, checked
			default:
				return Errorf(EInvalidJSON, "The request body is not valid JSON text: %s at byte %d (counting from 0) is half of a UTF-16 surrogate pair without its other half, and stands for no character.",
					body[i:i+6], i)
			}
			i += 5
		}
	}
	return nil
}

// hex4At reads the four hex digits of a \u escape in valid JSON.
func hex4At(b []byte, i int) rune {
	v, _ := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(v)
}

func invalidJSON(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &Error{Code: EInvalidJSON, Message: "The request body is not valid JSON: " + se.Error() + " (at byte " + strconv.FormatInt(se.Offset, 10) + ")."}
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return Errorf(EInvalidJSON, "The request body is empty or ends too early; it must be a JSON object.")
	}
	return Errorf(EInvalidJSON, "The request body is not valid JSON.")
}

type parser struct {
	dec  *json.Decoder
	dups violations
}

func (p *parser) value(path string, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, Errorf(EInvalidJSON, "The request body is nested too deeply.")
	}
	tok, err := p.dec.Token()
	if err != nil {
		return nil, invalidJSON(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return p.object(path, depth)
		}
		var arr []any
		for i := 0; p.dec.More(); i++ {
			v, err := p.value(path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := p.dec.Token(); err != nil { // ']'
			return nil, invalidJSON(err)
		}
		if arr == nil {
			arr = []any{}
		}
		return arr, nil
	default:
		return t, nil
	}
}

func (p *parser) object(path string, depth int) (*object, error) {
	obj := &object{vals: map[string]any{}}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, invalidJSON(err)
		}
		key := tok.(string) // the decoder guarantees object keys are strings
		v, err := p.value(join(path, key), depth+1)
		if err != nil {
			return nil, err
		}
		if _, dup := obj.vals[key]; dup {
			p.dups.add("duplicate_field", join(path, key), join(path, key)+" appears more than once.")
			continue
		}
		obj.keys = append(obj.keys, key)
		obj.vals[key] = v
	}
	if _, err := p.dec.Token(); err != nil { // '}'
		return nil, invalidJSON(err)
	}
	return obj, nil
}

// join returns the path of key inside path. An empty key is written "" so
// that a violation about it still names a field.
func join(path, key string) string {
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case *object:
		return "an object"
	}
	return "a value"
}
