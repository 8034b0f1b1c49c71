package dashboard

import (
	"net/http"

	"github.com/checkoutd/checkoutd/checkout"
	"net/url"
	"time"
)

// What the lists (Events, Logs, deliveries) share: a filter form sent by
// GET, so a filtered page is a link one can bookmark or share, and keyset
// pages, "Older" carrying the cursor of the last row shown.

// dateLayout is how the filters' dates are written: the value of an
// <input type="date">.
const dateLayout = "2006-01-02"

// dateRange reads the from and to query values: dates, in UTC, both
// inclusive. A date that does not parse is reported in errs under its
// field, and left open.
func dateRange(q url.Values, errs map[string]string) (from, to time.Time) {
	if s := q.Get("from"); s != "" {
		t, err := time.Parse(dateLayout, s)
		if err != nil {
			errs["from"] = "Enter the date as YYYY-MM-DD."
		}
		from = t
	}
	if s := q.Get("to"); s != "" {
		t, err := time.Parse(dateLayout, s)
		if err != nil {
			errs["to"] = "Enter the date as YYYY-MM-DD."
		} else {
			to = t.AddDate(0, 0, 1) // the whole day
		}
	}
	return from, to
}

// pager links the pages of a list.
type pager struct {
	// Older is the next page's URL, "" on the last page; Newest the first
	// page's, "" on the first page.
	Older, Newest string
}

// pagerFor returns the links of a list at r whose next page starts after
// the cursor next ("" when r's page is the last): the filters stay.
func pagerFor(r *http.Request, next string) pager {
	var p pager
	q := r.URL.Query()
	if q.Get("cursor") != "" {
		q.Del("cursor")
		p.Newest = r.URL.Path + query(q)
	}
	if next != "" {
		q.Set("cursor", next)
		p.Older = r.URL.Path + query(q)
	}
	return p
}

func query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// statusClass is the badge of an HTTP status: good, warn or bad.
func statusClass(code int) string {
	switch {
	case code >= 200 && code < 300:
		return "good"
	case code >= 400 && code < 500:
		return "warn"
	case code == 0 || code >= 500:
		return "bad"
	}
	return ""
}

// deliveryClass is the badge of a delivery's status.
func deliveryClass(s checkout.DeliveryStatus) string {
	switch s {
	case checkout.DeliverySucceeded:
		return "good"
	case checkout.DeliveryFailed:
		return "bad"
	case checkout.DeliveryPending:
		return "warn"
	}
	return ""
}
