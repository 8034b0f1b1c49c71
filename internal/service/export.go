package service

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// CSV exports (docs/dashboard.md, Export): a store's sessions or payments
// of one mode created in a range of UTC days, oldest first, as CSV
// (RFC 4180, through encoding/csv), for the dashboard's download and the
// CLI's `checkoutd export`. An export is streamed in constant memory: the
// store is read a page of ExportPageSize rows at a time (keyset, never the
// whole range), and each page is written out, and flushed, before the next
// is read.
//
// Text that buyers and merchants typed (a session's title, a customer's
// name or email, metadata) may start with a character that a spreadsheet
// takes for a formula (= + - @, or a tab or carriage return before one): such
// a cell gets a leading apostrophe, which spreadsheets show as text and do
// not evaluate. Amounts are written as decimals in the currency's unit
// ("30.00"; "1500" for JPY), times in RFC 3339, UTC, to the millisecond.

// ExportPageSize is how many rows an export reads from the store at a time.
const ExportPageSize = 500

// SessionExportColumns and PaymentExportColumns are the exports' header
// rows.
var (
	SessionExportColumns = []string{"id", "created_at", "status", "currency", "amount_total", "customer_email", "customer_name",
		"title", "payment_id", "completed_at", "expires_at", "metadata"}
	PaymentExportColumns = []string{"id", "created_at", "session_id", "method", "status", "currency", "amount", "fee",
		"amount_refunded", "dispute_status", "net", "card_brand", "card_last4", "customer_name", "receipt_email", "failure_code", "succeeded_at"}
)

// flusher is a writer that can push what it holds to its reader: an HTTP
// response, whose download then grows page by page.
type flusher interface{ Flush() error }

// ExportSessions writes the scope's sessions created in r as CSV to w.
func (s *Service) ExportSessions(ctx context.Context, scope checkout.Scope, r HomeRange, w io.Writer) error {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return err
	}
	return export(ctx, s, scope, r, w, SessionExportColumns, s.store.SessionExportPage,
		func(x *checkout.Session) checkout.Cursor { return checkout.Cursor{At: x.CreatedAt, ID: x.ID} },
		func(x *checkout.Session) []string {
			meta := ""
			if len(x.Metadata) > 0 {
				b, _ := json.Marshal(x.Metadata)
				meta = string(b)
			}
			return []string{x.ID, csvTime(&x.CreatedAt), string(x.Status), x.Currency, checkout.AmountDecimal(x.TotalAmount, x.Currency),
				csvText(x.Customer.Email), csvText(x.Customer.Name), safeCell(x.Title), deref(x.PaymentID), csvTime(x.CompletedAt),
				csvTime(&x.ExpiresAt), safeCell(meta)}
		})
}

// ExportPayments writes the scope's payments created in r, each with what
// its refunds and dispute did to it, as CSV to w.
func (s *Service) ExportPayments(ctx context.Context, scope checkout.Scope, r HomeRange, w io.Writer) error {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return err
	}
	return export(ctx, s, scope, r, w, PaymentExportColumns, s.store.PaymentExportPage,
		func(x *checkout.ExportPayment) checkout.Cursor { return checkout.Cursor{At: x.CreatedAt, ID: x.ID} },
		func(x *checkout.ExportPayment) []string {
			amount := func(n int64) string { return checkout.AmountDecimal(n, x.Currency) }
			return []string{x.ID, csvTime(&x.CreatedAt), x.SessionID, string(x.Method), string(x.Status), x.Currency, amount(x.Amount),
				amount(x.Fee), amount(x.AmountRefunded), string(x.DisputeStatus), amount(x.Net()), deref(x.CardBrand), deref(x.CardLast4),
				csvText(x.CustomerName), csvText(x.ReceiptEmail), deref(x.FailureCode), csvTime(x.SucceededAt)}
		})
}

// export writes the header, then each page that page reads, a row per
// item, flushing w after each page. A validation error (the range) comes
// before anything is written.
func export[T any](ctx context.Context, s *Service, scope checkout.Scope, r HomeRange, w io.Writer, header []string,
	page func(context.Context, checkout.ExportParams) ([]T, error), cursor func(T) checkout.Cursor, row func(T) []string) error {
	from, to, err := dayRange(s.now(), r, 0)
	if err != nil {
		return err
	}
	p := checkout.ExportParams{MerchantID: scope.MerchantID, Mode: scope.Mode, From: from, To: to.Add(checkout.Day), Limit: ExportPageSize}
	cw := csv.NewWriter(w)
	flush := func() error {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if f, ok := w.(flusher); ok {
			return f.Flush()
		}
		return nil
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := flush(); err != nil { // the download starts at once
		return err
	}
	for {
		items, err := page(ctx, p)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := cw.Write(row(it)); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if len(items) < p.Limit {
			return nil
		}
		p.After = cursor(items[len(items)-1])
	}
}

// safeCell guards a cell of typed text against formula injection: text
// that a spreadsheet would evaluate (it starts with = + - @, or a tab or
// carriage return) gets a leading apostrophe.
func safeCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func csvText(s *string) string {
	if s == nil {
		return ""
	}
	return safeCell(*s)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// csvTime is t in RFC 3339, UTC, to the millisecond; "" for none.
func csvTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// ExportName is the file name of an export of what ("sessions",
// "payments") over r: the store, the mode and the range's days.
func (s *Service) ExportName(what string, scope checkout.Scope, r HomeRange) string {
	from, to, _ := dayRange(s.now(), r, 0)
	return what + "-" + scope.MerchantID[:min(8, len(scope.MerchantID))] + "-" + string(scope.Mode) + "-" + from.Format(time.DateOnly) + "-to-" + to.Format(time.DateOnly) + ".csv"
}
