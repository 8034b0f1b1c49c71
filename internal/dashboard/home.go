package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// The store's home shows its figures over a range of days (the last 30
// unless the range form asks for others: service.HomeFigures), as figures,
// as a chart of each day's gross and net volume drawn here as SVG (no
// script: the page's Content-Security-Policy stays), and as a table of the
// same days for screen readers and for anyone who wants the numbers.

// homeRangeForm is the range form's values as typed, and its errors by
// field.
type homeRangeForm struct {
	From, To string
	// Chosen says the range was asked for: the form links back to the
	// last 30 days.
	Chosen bool
	Errors map[string]string
}

// figure is one of the home's figures: its label, its value as shown,
// and a line saying what it counts.
type figure struct {
	ID, Label, Value, Hint string
	Bad                    bool // a loss: shown in red when not zero
}

// homeFigures is the figures part of the store's home.
type homeFigures struct {
	From, To time.Time
	Currency string
	Figures  []figure
	Days     []homeDayRow
	Chart    chart
	// Empty says nothing happened in the range: the chart is left out.
	Empty bool
	// Export is the query of the range for the export links.
	Export string
}

// homeDayRow is a day of the table.
type homeDayRow struct {
	Day                                     time.Time
	Gross, Refunded, DisputesLost, Net      string
	Payments, SessionsCreated, SessionsPaid int64
}

// readHomeRange reads the range form of a GET: dates (YYYY-MM-DD, UTC),
// each optional. A date that does not parse is reported under its field.
func readHomeRange(q url.Values) (homeRangeForm, service.HomeRange) {
	f := homeRangeForm{From: strings.TrimSpace(q.Get("from")), To: strings.TrimSpace(q.Get("to")), Errors: map[string]string{}}
	f.Chosen = f.From != "" || f.To != ""
	var r service.HomeRange
	parse := func(field, s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		t, err := time.Parse(dateLayout, s)
		if err != nil || t.Year() < 2000 || t.Year() > 9999 {
			f.Errors[field] = "Enter the date as YYYY-MM-DD, such as 2026-01-31."
			return time.Time{}
		}
		return t
	}
	r.From, r.To = parse("from", f.From), parse("to", f.To)
	return f, r
}

func newHomeFigures(h *service.Home) *homeFigures {
	money := func(n int64) string { return checkout.FormatAmount(n, h.Currency) }
	t := h.Total
	conv := "—"
	if c, ok := h.Conversion(); ok {
		conv = strconv.FormatFloat(c*100, 'f', 1, 64) + "%"
	}
	v := &homeFigures{From: h.From, To: h.To, Currency: h.Currency, Empty: t == (checkout.HomeDay{}),
		Export: "?" + url.Values{"from": {h.From.Format(dateLayout)}, "to": {h.To.Format(dateLayout)}}.Encode(),
		Figures: []figure{
			{ID: "gross", Label: "Gross volume", Value: money(t.Gross), Hint: "What the payments that succeeded took in."},
			{ID: "refunds", Label: "Refunds", Value: money(t.Refunded), Hint: "What refunds gave back.", Bad: t.Refunded != 0},
			{ID: "disputes", Label: "Disputes lost", Value: money(t.DisputesLost), Hint: "What lost disputes took: amount and fee.", Bad: t.DisputesLost != 0},
			{ID: "net", Label: "Net volume", Value: money(t.Net()), Hint: "Gross volume less refunds and disputes lost.", Bad: t.Net() < 0},
			{ID: "payments", Label: "Successful payments", Value: groupThousands(int(t.Payments)), Hint: "Payments that succeeded."},
			{ID: "conversion", Label: "Conversion", Value: conv,
				Hint: fmt.Sprintf("%s of %s sessions paid.", groupThousands(int(t.SessionsPaid)), groupThousands(int(t.SessionsCreated)))},
		}}
	for _, d := range h.Days {
		v.Days = append(v.Days, homeDayRow{Day: d.Day, Gross: money(d.Gross), Refunded: money(d.Refunded), DisputesLost: money(d.DisputesLost),
			Net: money(d.Net()), Payments: d.Payments, SessionsCreated: d.SessionsCreated, SessionsPaid: d.SessionsPaid})
	}
	v.Chart = newChart(h.Days, money)
	return v
}

// The chart's drawing area, in the SVG's own units: the SVG stretches to
// the width of the page (preserveAspectRatio none), so it holds no text;
// its labels are HTML around it, readable at any width.
const (
	chartWidth  = 1000
	chartHeight = 300
	chartPad    = 10 // above the highest value and below the lowest
)

// chart is the SVG chart of each day's gross volume (bars) and net volume
// (a line of steps, one per day, as wide as the day's bar slot).
type chart struct {
	Width, Height int
	Bars          []chartBar
	// Net is the net line's points; ZeroY the height of zero.
	Net   string
	ZeroY string
	// Top and Bottom label the chart's highest and lowest values; First
	// and Last its first and last days.
	Top, Bottom string
	First, Last time.Time
}

// chartBar is a day's gross volume bar, with a tooltip.
type chartBar struct {
	X, Y, W, H string
	Title      string
}

func newChart(days []checkout.HomeDay, money func(int64) string) chart {
	c := chart{Width: chartWidth, Height: chartHeight}
	if len(days) == 0 {
		return c
	}
	c.First, c.Last = days[0].Day, days[len(days)-1].Day
	var top, bottom int64
	for _, d := range days {
		top = max(top, d.Gross, d.Net())
		bottom = min(bottom, d.Net())
	}
	if top == bottom {
		top = bottom + 1
	}
	c.Top, c.Bottom = money(top), money(bottom)
	y := func(v int64) float64 {
		return chartPad + float64(top-v)/float64(top-bottom)*(chartHeight-2*chartPad)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	slot := float64(chartWidth) / float64(len(days))
	var net strings.Builder
	for i, d := range days {
		x := float64(i) * slot
		if d.Gross > 0 {
			c.Bars = append(c.Bars, chartBar{X: f(x + slot*0.15), Y: f(y(d.Gross)), W: f(slot * 0.7), H: f(y(0) - y(d.Gross)),
				Title: d.Day.Format("Jan 2, 2006") + ": gross " + money(d.Gross) + ", net " + money(d.Net())})
		}
		fmt.Fprintf(&net, "%s,%s %s,%s ", f(x), f(y(d.Net())), f(x+slot), f(y(d.Net())))
	}
	c.Net, c.ZeroY = strings.TrimSpace(net.String()), f(y(0))
	return c
}

// attentionView is what needs attention on the store's home, but for the
// open disputes.
type attentionView struct {
	// FailedDeliveries counts the failed deliveries of the last days;
	// FailedMore says the count stopped at its limit; FailedLink is the
	// deliveries list filtered to them.
	FailedDeliveries int
	FailedMore       bool
	FailedLink       string
	Payouts          []payoutRow
	PayoutsMore      bool
}

// payoutRow is a crypto refund waiting for the merchant's payout.
type payoutRow struct {
	ID, PaymentID, Amount string
	Crypto                *cryptoRefundRow
	AddressedAt           time.Time
}

// Empty says nothing needs attention (open disputes aside).
func (a *attentionView) Empty() bool { return a.FailedDeliveries == 0 && len(a.Payouts) == 0 }

func newAttentionView(a *service.Attention, s *scope, checkoutBaseURL string) *attentionView {
	v := &attentionView{FailedDeliveries: a.FailedDeliveries, FailedMore: a.FailedDeliveries >= service.MaxAttentionFailed,
		FailedLink:  s.path(sectionDeliveries) + "?" + url.Values{"status": {string(checkout.DeliveryFailed)}, "from": {a.FailedSince.Format(dateLayout)}}.Encode(),
		PayoutsMore: a.PayoutsMore}
	for _, r := range a.Payouts {
		v.Payouts = append(v.Payouts, payoutRow{ID: r.ID, PaymentID: r.PaymentID, Amount: checkout.FormatAmount(r.Amount, r.Currency),
			Crypto: newCryptoRefundRow(r, checkoutBaseURL), AddressedAt: time.UnixMilli(r.Crypto.AddressedAt)})
	}
	return v
}

// csvResponse is an export's HTTP response: its headers are sent with its
// first bytes, so an export refused before it starts (a wrong range) is
// still answered with a page; each Flush sends what was written so far.
type csvResponse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	name    string
	started bool
}

func (c *csvResponse) Write(b []byte) (int, error) {
	if !c.started {
		c.started = true
		h := c.w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="`+c.name+`"`)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		c.w.WriteHeader(http.StatusOK)
	}
	return c.w.Write(b)
}

func (c *csvResponse) Flush() error {
	if !c.started {
		return nil // nothing to send yet: no headers before the first bytes
	}
	if err := c.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// HandleExport serves GET .../export/{file}: sessions.csv or payments.csv
// of the store's mode over ?from=&to= (UTC dates; the last 30 days by
// default), streamed as the service writes it. A wrong range is answered
// 400 with why; an export that fails once started is cut off (the
// connection is reset), so a browser shows the download failed rather than
// a file that looks whole.
func (d *Dashboard) HandleExport() http.Handler {
	return d.storePage(checkout.ActionViewPayments, func(w http.ResponseWriter, r *http.Request, s *scope) {
		what := strings.TrimSuffix(r.PathValue("file"), ".csv")
		run := map[string]func(context.Context, checkout.Scope, service.HomeRange, io.Writer) error{
			"sessions": d.svc.ExportSessions, "payments": d.svc.ExportPayments}[what]
		if run == nil || !strings.HasSuffix(r.PathValue("file"), ".csv") {
			d.notFound(w, r, s.user)
			return
		}
		form, rng := readHomeRange(r.URL.Query())
		if len(form.Errors) > 0 {
			d.renderErrorFor(w, r, s.user, http.StatusBadRequest, firstError(form.Errors))
			return
		}
		out := &csvResponse{w: w, rc: http.NewResponseController(w), name: d.svc.ExportName(what, s.checkoutScope(), rng)}
		err := run(r.Context(), s.checkoutScope(), rng, out)
		switch {
		case err == nil:
		case !out.started:
			if errs, ok := fieldErrors(err); ok {
				d.renderErrorFor(w, r, s.user, http.StatusBadRequest, firstError(errs))
				return
			}
			d.fail(w, r, err)
		default:
			web.Logger(r.Context()).ErrorContext(r.Context(), "export cut off", "export", what, "err", err)
			panic(http.ErrAbortHandler)
		}
	})
}

// firstError is one of a form's errors, the range's from before its to.
func firstError(errs map[string]string) string {
	for _, k := range []string{"from", "to"} {
		if m, ok := errs[k]; ok {
			return m
		}
	}
	for _, m := range errs {
		return m
	}
	return ""
}
