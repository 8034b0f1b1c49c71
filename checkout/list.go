package checkout

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// The dashboard's lists (request logs, events, deliveries) are read one page
// at a time, newest first, with keyset cursors: a page starts after the last
// row of the previous one, so reading page 1,000 costs what page 1 does and
// a row written meanwhile never shifts a page (OFFSET would do both wrong).

// Page is one page of a list, newest first.
type Page[T any] struct {
	Items []T
	// Next is the cursor of the following (older) page; "" when this page
	// is the last.
	Next string
}

// Cursor is a position in a list ordered by (time, id) descending: the
// page after it holds the rows strictly older, or as old with a smaller id.
type Cursor struct {
	At time.Time
	ID string
}

// IsZero reports whether c is the start of a list.
func (c Cursor) IsZero() bool { return c.At.IsZero() && c.ID == "" }

// String encodes c opaquely for a URL: callers never build or read one.
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.At.UnixMilli(), 10) + ":" + c.ID))
}

// ParseCursor decodes a cursor made by Cursor.String; "" is the start. A
// cursor that was not made by String fails with validation_failed.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	bad := Errorf(EValidationFailed, "The page cursor is not valid; start from the first page.")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 200 {
		return Cursor{}, bad
	}
	ms, id, ok := strings.Cut(string(b), ":")
	if !ok || id == "" {
		return Cursor{}, bad
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n < 0 {
		return Cursor{}, bad
	}
	return Cursor{At: time.UnixMilli(n), ID: id}, nil
}
