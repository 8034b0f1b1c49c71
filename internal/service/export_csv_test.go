package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// createBody makes a session of the fixture's store from a request body,
// at the clock's time.
func (f *fixture) createBody(t *testing.T, body string) *checkout.Session {
	t.Helper()
	p, err := checkout.ParseCreateRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.CreateSession(ctx, service.CreateSessionParams{Key: f.key, StoreID: f.m.ID, Params: p})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	var s checkout.SessionJSON
	if err := json.Unmarshal(res.Data, &s); err != nil {
		t.Fatal(err)
	}
	got, err := f.db.SessionGet(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func csvTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// The exports of a small set, byte for byte: a session with text that
// needs quoting (a comma, quotes) and text a spreadsheet
// would take for a formula (apostrophe added), paid by card; one paid and
// refunded in part; one paid and disputed, the dispute lost; one unpaid; a
// session the day after the range, not exported.
func TestExportExact(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newPayFixture(t, db)
		scope := checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}
		day := checkout.DayOf(t0)
		f.clock.Set(day)
		a := f.createBody(t, `{"items":[{"name":"Sword","amount":1500}],"title":"Sword, \"sharp\"",
			"customer":{"email":"jo@example.com","name":"=HYPERLINK(\"http://evil.example\")"},"metadata":{"order":"@SUM(1)"}}`)
		pay := func(id, number string) *checkout.Payment {
			t.Helper()
			if _, err := f.svc.PayByCard(ctx, id, card(number)); err != nil {
				t.Fatal(err)
			}
			return f.paidOnce(t, id)
		}
		reload := func(id string) *checkout.Payment {
			t.Helper()
			p, err := db.PaymentGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		pa := pay(a.ID, "4242424242424242")
		f.clock.Advance(time.Minute)
		b := f.createBody(t, `{"items":[{"name":"Shield","amount":2000}],"customer":{"name":"-2+3"}}`)
		pb := pay(b.ID, "5555555555554444")
		if _, err := f.svc.RefundPayment(ctx, service.RefundRequest{PaymentID: pb.ID, Params: checkout.RefundParams{Amount: amount(500)}, By: operator}); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Minute)
		c := f.createBody(t, `{"items":[{"name":"Bow","amount":1500}]}`)
		pc := pay(c.ID, "4000000000002685")
		f.clock.Advance(checkout.DisputeDelay)
		f.processDue(t)
		d := f.createBody(t, `{"items":[{"name":"Arrow","amount":100}]}`)
		dp, _ := f.svc.DisputeOfPayment(ctx, pc.ID)
		f.clock.Set(dp.EvidenceDueBy)
		f.processDue(t)
		f.clock.Set(day.Add(checkout.Day))
		f.createBody(t, `{"items":[{"name":"Late","amount":100}]}`)

		r := service.HomeRange{From: day, To: day}
		var got bytes.Buffer
		if err := f.svc.ExportSessions(ctx, scope, r, &got); err != nil {
			t.Fatal(err)
		}
		a, b, c, d = f.reload(t, a.ID), f.reload(t, b.ID), f.reload(t, c.ID), f.reload(t, d.ID)
		want := "id,created_at,status,currency,amount_total,customer_email,customer_name,title,payment_id,completed_at,expires_at,metadata\n" +
			fmt.Sprintf("%s,%s,complete,USD,15.00,jo@example.com,\"'=HYPERLINK(\"\"http://evil.example\"\")\",\"Sword, \"\"sharp\"\"\",%s,%s,%s,\"'{\"\"order\"\":\"\"@SUM(1)\"\"}\"\n",
				a.ID, csvTime(a.CreatedAt), pa.ID, csvTime(*a.CompletedAt), csvTime(a.ExpiresAt))
		want = strings.Replace(want, `"'{""order""`, `"{""order""`, 1) // metadata's JSON starts with {: no guard needed
		want += fmt.Sprintf("%s,%s,complete,USD,20.00,,'-2+3,%s,%s,%s,%s,\n", b.ID, csvTime(b.CreatedAt), b.Title, pb.ID, csvTime(*b.CompletedAt), csvTime(b.ExpiresAt)) +
			fmt.Sprintf("%s,%s,complete,USD,15.00,,,%s,%s,%s,%s,\n", c.ID, csvTime(c.CreatedAt), c.Title, pc.ID, csvTime(*c.CompletedAt), csvTime(c.ExpiresAt)) +
			fmt.Sprintf("%s,%s,%s,USD,1.00,,,%s,,,%s,\n", d.ID, csvTime(d.CreatedAt), d.Status, d.Title, csvTime(d.ExpiresAt))
		if got.String() != want {
			t.Errorf("sessions export =\n%s\nwant\n%s", got.String(), want)
		}

		got.Reset()
		if err := f.svc.ExportPayments(ctx, scope, r, &got); err != nil {
			t.Fatal(err)
		}
		pa, pb, pc = reload(pa.ID), reload(pb.ID), reload(pc.ID)
		row := func(p *checkout.Payment, status, refunded, dispute, net, brand, last4 string) string {
			return fmt.Sprintf("%s,%s,%s,card,%s,USD,%s,%s,%s,%s,%s,%s,%s,Jo Buyer,,,%s\n", p.ID, csvTime(p.CreatedAt), p.SessionID, status,
				checkout.AmountDecimal(p.Amount, "USD"), checkout.AmountDecimal(p.Fee, "USD"), refunded, dispute, net, brand, last4, csvTime(*p.SucceededAt))
		}
		want = "id,created_at,session_id,method,status,currency,amount,fee,amount_refunded,dispute_status,net,card_brand,card_last4,customer_name,receipt_email,failure_code,succeeded_at\n" +
			strings.Replace(row(pa, "succeeded", "0.00", "", "14.26", "visa", "4242"), ",,,", ",jo@example.com,,", 1) +
			row(pb, "partially_refunded", "5.00", "", "14.12", "mastercard", "4444") +
			row(pc, "dispute_lost", "0.00", "lost", "-15.74", "visa", "2685")
		if got.String() != want {
			t.Errorf("payments export =\n%s\nwant\n%s", got.String(), want)
		}
	})
}

// exportStore counts the pages an export reads, and checks that each page
// after the first is read only once every row of the pages before it was
// written out (flushed to the writer).
type exportStore struct {
	*store.DB
	t       *testing.T
	out     *bytes.Buffer
	pages   int
	maxRows int
}

func (s *exportStore) SessionExportPage(ctx context.Context, p checkout.ExportParams) ([]*checkout.Session, error) {
	if lines := bytes.Count(s.out.Bytes(), []byte("\n")); lines != 1+s.pages*service.ExportPageSize {
		s.t.Fatalf("page %d is read with %d lines written; want the header and the %d pages before", s.pages+1, lines, s.pages)
	}
	page, err := s.DB.SessionExportPage(ctx, p)
	s.pages++
	s.maxRows = max(s.maxRows, len(page))
	return page, err
}

// An export of 50,000 sessions reads the store a page of ExportPageSize at
// a time, writing each page out before it reads the next: never more than
// a page in memory, however long the range.
func TestExportStreams(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		const n = 50_000
		day := checkout.DayOf(t0)
		if err := db.InTx(ctx, func(tx checkout.Tx) error {
			for i := range n {
				at := day.Add(time.Duration(i) * time.Second)
				s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: f.m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen,
					Title: "Order", Currency: "USD", Amount: 100, TotalAmount: 100, Items: []checkout.Item{{Name: "Sword", Amount: 100, Quantity: 1}},
					Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
				if err := tx.SessionInsert(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		counting := &exportStore{DB: db, t: t, out: &out}
		svc := service.New(service.Config{Store: counting, Now: f.clock.Now, CacheNow: f.cache.Now})
		r := service.HomeRange{From: day, To: day}
		if err := svc.ExportSessions(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}, r, &out); err != nil {
			t.Fatal(err)
		}
		if lines := bytes.Count(out.Bytes(), []byte("\n")); lines != n+1 {
			t.Errorf("the export has %d lines; want %d and the header", lines, n)
		}
		if want := n/service.ExportPageSize + 1; counting.pages != want || counting.maxRows != service.ExportPageSize {
			t.Errorf("the export read %d pages of at most %d rows; want %d of %d", counting.pages, counting.maxRows, want, service.ExportPageSize)
		}
	})
}

// A range that runs backwards is refused before anything is written.
func TestExportRange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		var out bytes.Buffer
		day := checkout.DayOf(t0)
		err := f.svc.ExportPayments(ctx, checkout.Scope{MerchantID: f.m.ID, Mode: checkout.ModeTest}, service.HomeRange{From: day, To: day.AddDate(0, 0, -1)}, &out)
		if ce, ok := err.(*checkout.Error); !ok || ce.Param != "to" || out.Len() != 0 {
			t.Errorf("a backwards range = %v, %d bytes written; want validation_failed on to, nothing written", err, out.Len())
		}
	})
}
