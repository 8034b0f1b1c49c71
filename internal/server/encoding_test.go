package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A create body that is not Unicode text (bytes that are not UTF-8, an
// escaped lone surrogate) answers 400 invalid_json naming the problem; a
// surrogate pair is a character like any other, stored
// and returned as sent.
func TestCreateRefusesWhatIsNotText(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		for _, tt := range []struct {
			name, body string
			want       []string
		}{
			{"bytes 0xff 0xfe in a name", "{\"items\":[{\"name\":\"\xff\xfe bad\",\"amount\":1500}]}", []string{"UTF-8", "0xff", "byte 19"}},
			{"a bad byte in metadata", "{\"items\":[{\"name\":\"Sword\",\"amount\":1500}],\"metadata\":{\"k\":\"\xc3(\"}}", []string{"UTF-8", "0xc3"}},
			{"a lone surrogate in a name", `{"items":[{"name":"\ud800 bad","amount":1500}]}`, []string{"surrogate", `\ud800`, "byte 19"}},
			{"a lone surrogate in metadata", `{"items":[{"name":"Sword","amount":1500}],"metadata":{"k":"\uDFFF"}}`, []string{"surrogate", `\uDFFF`}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := h.with(t).post(tt.body)
				e := wantPlainError(t, r, http.StatusBadRequest, "invalid_json")
				for _, w := range tt.want {
					if !strings.Contains(e.Error.Message, w) {
						t.Errorf("message %q; want it to name %q", e.Error.Message, w)
					}
				}
			})
		}
		s := h.mustCreate(`{"items":[{"name":"\ud83d\udde1 Sword \uFFFD","amount":1500}],"metadata":{"k":"caf\u00e9 \ud83d\ude00"}}`)
		if got, want := s.Items[0].Name, "🗡 Sword \uFFFD"; got != want {
			t.Errorf("name = %q; want %q", got, want)
		}
		r := h.get(s.ID)
		var got checkout.SessionJSON
		if err := json.Unmarshal(r.envelope(t).Data, &got); err != nil {
			t.Fatal(err)
		}
		if got.Metadata["k"] != "café 😀" {
			t.Errorf("metadata k = %q; want %q", got.Metadata["k"], "café 😀")
		}
	})
}
