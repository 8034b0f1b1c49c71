package checkout

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

// fastParse answers as the decoder does: the same object, values and
// duplicate-key violations for what the decoder takes, and false for what
// it refuses, so that parseObject reports the decoder's error (but for the
// surrogates, which parseObject checks after either).
func FuzzFastParse(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"a":1} `, `{"a":1,"a":2}`, `{"a":{"b":[1,2,{"c":null}],"b":true}}`, `{"items":[{"name":"Sword","amount":1500}]}`,
		`{"t":"\u00e9t\u00e9 \ud83d\ude00"}`, `{"t":"\ud83d"}`, `{"t":"\ud83d\u0041"}`, `{"t":"\ude00\ud83d"}`, `{"t":"\ud83dx"}`,
		`{"t":"a\"b\\c\/d\b\f\n\r\t"}`, `{"t":"\u0000"}`, `{"n":-0.5e+10}`, `{"n":01}`, `{"n":1.}`, `{"n":-}`, `{"n":1e}`,
		`{"a":1}{"b":2}`, `{"a":1} x`, `[1]`, `"x"`, ``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":[1,]}`, `{"a":tru}`,
		`{"a":nul}`, `{"a":"x` + "\x01" + `"}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"":1}`, `{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`, "{\"a\":\t\n\r 1}", `{"a":1e400}`, `{"a":-0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return // parseObject refuses it before either
		}
		want, wantDups, err := decodeObject(body)
		got, gotDups, ok := fastParse(body)
		if ok {
			// parseObject checks the surrogates after either.
			if serr := checkSurrogates(body); serr != nil {
				if !reflect.DeepEqual(serr, err) {
					t.Fatalf("parseObject(%q) = %v by fastParse; %v by the decoder", body, serr, err)
				}
				return
			}
		}
		if err != nil {
			if ok {
				t.Fatalf("fastParse(%q) took what the decoder refuses: %v", body, err)
			}
			return
		}
		if !ok {
			t.Fatalf("fastParse(%q) refused what the decoder takes", body)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotDups, wantDups) {
			t.Fatalf("fastParse(%q) = %#v, %v; the decoder makes %#v, %v", body, got, gotDups, want, wantDups)
		}
	})
}
