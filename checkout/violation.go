package checkout

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// violations collects every broken rule of a request, so a merchant can fix
// a request in one go.
type violations []Violation

func (v *violations) add(code, param, msg string) {
	*v = append(*v, Violation{Code: code, Param: param, Message: msg})
}

// err returns nil when nothing was broken. Otherwise an *Error whose code is
// amount_mismatch when that is the only problem, and validation_failed
// otherwise; Param is the first offending field and Details lists them all.
func (v violations) err() error {
	if len(v) == 0 {
		return nil
	}
	code := EAmountMismatch
	for _, x := range v {
		if x.Code != EAmountMismatch {
			code = EValidationFailed
			break
		}
	}
	msg := v[0].Message
	if len(v) > 1 {
		msg += fmt.Sprintf(" (%d problems in all; see details.)", len(v))
	}
	return &Error{Code: code, Message: msg, Param: v[0].Param, Details: v}
}

// checkText checks that s is min to max characters long and free of control
// characters (newlines and tabs are allowed when multiline). It reports
// whether s passed.
func (v *violations) checkText(param, s string, min, max int, multiline bool) bool {
	n := utf8.RuneCountInString(s)
	switch {
	case n < min && n == 0:
		v.add("too_short", param, fmt.Sprintf("%s must not be empty.", param))
		return false
	case n < min:
		v.add("too_short", param, fmt.Sprintf("%s must be at least %d characters.", param, min))
		return false
	case n > max:
		v.add("too_long", param, fmt.Sprintf("%s must be at most %d characters; it has %d.", param, max, n))
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			v.add("invalid_characters", param, param+" must not contain control characters.")
			return false
		}
	}
	return true
}

// field reads obj[key] for validation: present is false when the key is
// absent or null (an optional field sent as null counts as not sent).
func field(obj *object, key string) (val any, present bool) {
	val, ok := obj.vals[key]
	return val, ok && val != nil
}

func (v *violations) wantString(param string, val any) (string, bool) {
	s, ok := val.(string)
	if !ok {
		v.add("invalid_type", param, fmt.Sprintf("%s must be a string, not %s.", param, typeName(val)))
	}
	return s, ok
}

func (v *violations) wantObject(param string, val any) (*object, bool) {
	o, ok := val.(*object)
	if !ok {
		v.add("invalid_type", param, fmt.Sprintf("%s must be an object, not %s.", param, typeName(val)))
	}
	return o, ok
}

// wantInt reads an integer written without fraction or exponent and checks
// it lies in [min, max].
func (v *violations) wantInt(param string, val any, min, max int64) (int64, bool) {
	num, ok := val.(json.Number)
	if !ok {
		v.add("invalid_type", param, fmt.Sprintf("%s must be an integer, not %s.", param, typeName(val)))
		return 0, false
	}
	s := string(num)
	if strings.ContainsAny(s, ".eE") {
		v.add("invalid_type", param, fmt.Sprintf("%s must be an integer (in minor units, without a fraction or exponent); got %s.", param, s))
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < min || n > max {
		v.add("out_of_range", param, fmt.Sprintf("%s must be between %d and %d; got %s.", param, min, max, s))
		return 0, false
	}
	return n, true
}

// rejectUnknown reports every key of obj not in known.
func (v *violations) rejectUnknown(path string, obj *object, known ...string) {
	for _, k := range obj.keys {
		found := false
		for _, kk := range known {
			if k == kk {
				found = true
				break
			}
		}
		if !found {
			p := join(path, k)
			v.add("unknown_field", p, fmt.Sprintf("%s is not a known field.", p))
		}
	}
}

func quote(s string) string { return strconv.Quote(s) }
