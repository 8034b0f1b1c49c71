package checkout

import (
	"testing"
	"time"
)

func TestCursorRoundTrip(t *testing.T) {
	c := Cursor{At: time.UnixMilli(1_790_000_000_123), ID: "req_abc:def"}
	got, err := ParseCursor(c.String())
	if err != nil || !got.At.Equal(c.At) || got.ID != c.ID {
		t.Fatalf("ParseCursor(%q) = %+v, %v; want %+v", c.String(), got, err, c)
	}
	if z, err := ParseCursor(""); err != nil || !z.IsZero() || (Cursor{}).String() != "" {
		t.Fatalf("the empty cursor = %+v, %v", z, err)
	}
}

func TestParseCursorRefusesForgeries(t *testing.T) {
	for _, s := range []string{"%%%", "bm9jb2xvbg", "LTE6eA", "MTI6", "YWJjOng"} { // not base64, no colon, negative, no id, not a number
		if _, err := ParseCursor(s); !IsCode(err, EValidationFailed) {
			t.Errorf("ParseCursor(%q) = %v, want validation_failed", s, err)
		}
	}
}
