package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// openRaw opens a fresh store of the named database and a plain connection
// pool to the same database, to change rows behind the store's back.
func openRaw(t *testing.T, name string) (*store.DB, *sql.DB) {
	t.Helper()
	ctx := context.Background()
	var db *store.DB
	var raw *sql.DB
	var err error
	switch name {
	case "sqlite":
		path := storetest.SQLitePath(t)
		if db, err = sqlite.Open(ctx, path); err == nil {
			raw, err = sql.Open("sqlite", path)
		}
	case "postgres":
		url := storetest.PostgresURL(t)
		if db, err = postgres.Open(ctx, url); err == nil {
			raw, err = sql.Open("pgx", url)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close(); db.Close() })
	return db, raw
}

// The lists the background jobs read (sessions due to expire, payments due)
// skip a row that cannot be read, log it with its id at error level and
// count it, and return the others.
func TestJobListsSkipUnreadableRows(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, raw := openRaw(t, name)
			var logs logtest.Buffer
			db.SetLogger(slog.New(logs.JSONHandler()))

			at := time.Unix(1_790_000_000, 0)
			now := at.Add(2 * time.Hour)
			m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at, Pricing: checkout.DefaultPricing}
			newSession := func(expires time.Time) *checkout.Session {
				return &checkout.Session{ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen,
					Title: "Order", Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
					Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: expires}
			}
			var due []*checkout.Session
			for range 3 {
				due = append(due, newSession(at.Add(time.Hour)))
			}
			paid := newSession(now.Add(time.Hour))
			var payments []*checkout.Payment
			for i := range 3 {
				p := checkout.NewPayment(paid, checkout.MethodCard, at.Add(time.Duration(i)*time.Second))
				dueAt := at.Add(time.Duration(i) * time.Second)
				p.DueAt = &dueAt
				payments = append(payments, p)
			}
			err := db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.MerchantInsert(ctx, m); err != nil {
					return err
				}
				for _, s := range append(slices.Clone(due), paid) {
					if err := tx.SessionInsert(ctx, s); err != nil {
						return err
					}
				}
				for _, p := range payments {
					if err := tx.PaymentInsert(ctx, p); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			badSession, badPayment := due[1].ID, payments[1].ID
			for _, q := range []struct{ sql, id string }{
				{`UPDATE sessions SET items = 'not json' WHERE id = $1`, badSession},
				{`UPDATE payments SET details = '{' WHERE id = $1`, badPayment},
			} {
				if _, err := raw.ExecContext(ctx, q.sql, q.id); err != nil {
					t.Fatalf("%s: %v", q.sql, err)
				}
			}

			ss, err := db.SessionListDue(ctx, now, 10)
			var sids []string
			for _, s := range ss {
				sids = append(sids, s.ID)
			}
			if want := []string{due[0].ID, due[2].ID}; err != nil || !sameSet(sids, want) {
				t.Errorf("SessionListDue = %v, %v; want the readable %v", sids, err, want)
			}
			ps, err := db.PaymentListDue(ctx, now, 10)
			var pids []string
			for _, p := range ps {
				pids = append(pids, p.ID)
			}
			if want := []string{payments[0].ID, payments[2].ID}; err != nil || !slices.Equal(pids, want) {
				t.Errorf("PaymentListDue = %v, %v; want the readable %v", pids, err, want)
			}
			if s := db.Stats(); s.RowsSkipped != 2 || s.Other != 0 {
				t.Errorf("Stats = %+v; want 2 rows skipped and no error", s)
			}
			var logged []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var rec struct{ Level, ID, Table, Err string }
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if rec.Level != "ERROR" || rec.Err == "" {
					t.Errorf("log record %s; want an error with the cause", line)
				}
				logged = append(logged, rec.Table+" "+rec.ID)
			}
			if want := []string{"sessions " + badSession, "payments " + badPayment}; !slices.Equal(logged, want) {
				t.Errorf("logged %v; want %v", logged, want)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
