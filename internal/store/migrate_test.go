package store_test

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// freshDatabase returns a new, empty database of the named kind: how to
// open it with the store (which migrates it), and the driver and data source
// to open it raw, for a test that undoes migrations by hand.
func freshDatabase(t *testing.T, name string) (open func() (*store.DB, error), driver, dsn string) {
	ctx := context.Background()
	switch name {
	case "sqlite":
		path := storetest.SQLitePath(t)
		return func() (*store.DB, error) { return sqlite.Open(ctx, path) }, "sqlite", path
	case "postgres":
		url := storetest.PostgresURL(t)
		return func() (*store.DB, error) { return postgres.Open(ctx, url) }, "pgx", url
	}
	t.Fatalf("no database %q", name)
	return nil, "", ""
}

// execRaw runs queries on the database at dsn through a connection of its
// own, as an older build's schema is made.
func execRaw(t *testing.T, driver, dsn string, queries []string) {
	t.Helper()
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range queries {
		if _, err := raw.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// undos take each migration back, by version, for the tests that migrate
// a database made by an older build.
var undos = map[int][]string{10: undo0010, 11: undo0011, 12: undo0012, 13: undo0013, 14: undo0014, 15: undo0015, 16: undo0016, 17: undo0017, 18: undo0018, 19: undo0019, 20: undo0020, 21: undo0021, 22: undo0022, 23: undo0023, 24: undo0024, 25: undo0025, 26: undo0026, 27: undo0027, 28: undo0028, 29: undo0029, 30: undo0030, 31: undo0031}

// undoFrom returns the statements that take a database back to before
// migration version: the undos from the newest migration down to version's.
func undoFrom(version int) []string {
	var qs []string
	for v := slices.Max(slices.Collect(maps.Keys(undos))); v >= version; v-- {
		qs = append(qs, undos[v]...)
	}
	return qs
}

// undo0024 undoes migration 0024 (the store's home) on either database;
// undo0023 follows it.
var undo0024 = []string{`DROP INDEX refunds_payout_pending`, `DROP INDEX sessions_list`, `DROP INDEX sessions_completed`, `DROP INDEX disputes_lost`,
	`DROP INDEX refunds_succeeded`, `DROP INDEX payments_succeeded`, `DROP TABLE home_days`}

// undo0025 undoes migration 0025 (the audit trail) on either database;
// undo0024 follows it.
var undo0025 = []string{`DROP TABLE audit_entries`}

// undo0026 undoes migration 0026 (the Sessions list) on either database;
// undo0025 follows it; sessions_list is 0024's.
var undo0026 = []string{`DROP INDEX events_object`, `ALTER TABLE events DROP COLUMN object_id`, `DROP TABLE session_metadata`,
	`DROP INDEX sessions_email`, `DROP INDEX sessions_status`}

// undo0031 undoes migration 0031 (commit marks) on either database;
// undo0030 follows it.
var undo0031 = []string{`DROP TABLE commit_marks`}

// undo0030 undoes migration 0030 (acquirer accounts) on either database;
// undo0029 follows it.
var undo0030 = []string{`DROP TABLE acquirer_accounts`}

// undo0029 undoes migration 0029 (the home's hours) on either database;
// undo0028 follows it.
var undo0029 = []string{`DROP TABLE home_hours`}

// undo0028 undoes migration 0028 (invitations) on either database;
// undo0027 follows it.
var undo0028 = []string{`DROP TABLE invitations`}

// undo0027 undoes migration 0027 (members' roles) on either database;
// undo0026 follows it.
var undo0027 = []string{`ALTER TABLE memberships DROP COLUMN role`}

// undo0023 undoes migration 0023 (crypto refunds) on either database;
// undo0022 follows it.
var undo0023 = []string{`DROP INDEX refunds_payout_address`, `DROP INDEX refunds_link_token`,
	`ALTER TABLE refunds DROP COLUMN payout_address`, `ALTER TABLE refunds DROP COLUMN link_token`, `ALTER TABLE refunds DROP COLUMN details`}

// undo0022 undoes migration 0022 (disputes) on either database; undo0021
// follows it.
var undo0022 = []string{`DROP TABLE disputes`, `ALTER TABLE payments DROP COLUMN dispute_fee`, `ALTER TABLE payments DROP COLUMN amount_disputed`}

// undo0021 undoes migration 0021 (refunds) on either database; undo0020
// follows it.
var undo0021 = []string{`DROP TABLE refunds`, `ALTER TABLE payments DROP COLUMN amount_refunding`}

// undo0020 undoes migration 0020 (the keys' index by creation) on either
// database; undo0019 follows it.
var undo0020 = []string{`DROP INDEX api_keys_created`}

// undo0019 undoes migration 0019 (the request logs' facet index) on
// either database; undo0018 follows it.
var undo0019 = []string{
	`DROP INDEX request_logs_facet`,
	`CREATE INDEX request_logs_class ON request_logs (store_id, mode, (status / 100), created_at_ms, request_id)`,
	`CREATE INDEX request_logs_method ON request_logs (store_id, mode, method, created_at_ms, request_id)`,
	`CREATE INDEX request_logs_route ON request_logs (store_id, mode, route, created_at_ms, request_id)`,
}

// undo0018 undoes migration 0018 (leases in a table of their own) on
// either database; undo0017 follows it.
var undo0018 = []string{
	`CREATE INDEX deliveries_pending_leases ON deliveries (endpoint_id, lease_until_ms) WHERE status = 'pending' AND lease_owner <> ''`,
	`DROP TABLE delivery_leases`,
}

// undo0017 undoes migration 0017 (the claim by endpoint) on either
// database.
var undo0017 = []string{
	`CREATE INDEX deliveries_leased ON deliveries (lease_until_ms) WHERE status = 'pending'`,
	`CREATE INDEX deliveries_due ON deliveries (next_attempt_at_ms) WHERE status = 'pending'`,
	`DROP INDEX deliveries_pending_leases`,
}

// undo0016 undoes migration 0016 (the Payments list) on either database;
// undo0015 follows it.
var undo0016 = []string{
	`DROP INDEX payments_refund_due`,
	`DROP INDEX payments_status`,
	`DROP INDEX payments_list`,
	`CREATE INDEX payments_store ON payments (store_id, mode, created_at_ms)`,
	`ALTER TABLE payments DROP COLUMN refund_due`,
}

// undo0015 undoes migration 0015 (chain cursors) on either database;
// undo0014 follows it.
var undo0015 = []string{`DROP TABLE chain_cursors`}

// undo0014 undoes migration 0014 (crypto keys) on either database; undo0013
// follows it.
var undo0014 = []string{
	`DROP INDEX crypto_quotes_address`,
	`DROP INDEX crypto_quotes_key_index`,
	`ALTER TABLE crypto_quotes DROP COLUMN expires_at_ms`,
	`ALTER TABLE crypto_quotes DROP COLUMN key_index`,
	`ALTER TABLE crypto_quotes DROP COLUMN key_id`,
	`DROP TABLE crypto_keys`,
}

// undo0013 undoes migration 0013 (listeners) on either database; undo0012
// follows it.
var undo0013 = []string{
	`DROP INDEX endpoints_listener`,
	`ALTER TABLE endpoints DROP COLUMN seen_at_ms`,
	`ALTER TABLE endpoints DROP COLUMN connection`,
	`ALTER TABLE endpoints DROP COLUMN listener_name`,
	`ALTER TABLE endpoints DROP COLUMN kind`,
}

// undo0012 undoes migration 0012 (HMAC keys' sealed secrets) on either
// database; undo0011 follows it.
var undo0012 = []string{
	`DROP TABLE signature_nonces`,
	`ALTER TABLE api_keys DROP COLUMN secret_sealed`,
}

// undo0011 undoes migration 0011 (the dashboard's lists) on either
// database; undo0010 follows it.
var undo0011 = []string{
	`ALTER TABLE api_keys DROP COLUMN last_used_at`,
	`ALTER TABLE api_keys DROP COLUMN name`,
	`DROP INDEX events_type`,
	`DROP INDEX events_list`,
	`CREATE INDEX events_store ON events (store_id, mode, seq)`,
	`DROP INDEX request_logs_key`,
	`DROP INDEX request_logs_route`,
	`DROP INDEX request_logs_method`,
	`DROP INDEX request_logs_class`,
	`DROP INDEX request_logs_list`,
	`CREATE INDEX request_logs_store ON request_logs (store_id, mode, created_at_ms)`,
	`ALTER TABLE request_logs DROP COLUMN route`,
}

// undo0010 undoes migration 0010 (the dashboard's webhooks) on either
// database.
var undo0010 = []string{
	`DROP INDEX deliveries_endpoint_retryable`,
	`DROP INDEX delivery_attempts_endpoint_failed`,
	`DROP INDEX delivery_attempts_endpoint_ok`,
	`DROP INDEX deliveries_endpoint_finished`,
	`DROP INDEX deliveries_endpoint_type`,
	`DROP INDEX deliveries_endpoint_status`,
	`DROP INDEX deliveries_endpoint_created`,
	`DROP INDEX deliveries_scope_type`,
	`DROP INDEX deliveries_scope_status`,
	`DROP INDEX deliveries_scope_created`,
	`ALTER TABLE delivery_attempts DROP COLUMN endpoint_id`,
	`ALTER TABLE deliveries DROP COLUMN resent_as`,
	`ALTER TABLE deliveries DROP COLUMN event_type`,
	`ALTER TABLE endpoints DROP COLUMN previous_secret_expires_at`,
	`ALTER TABLE endpoints DROP COLUMN previous_secret`,
	`ALTER TABLE endpoints DROP COLUMN description`,
	`DELETE FROM schema_migrations WHERE version >= 10`,
}

// TestMigratePaymentList upgrades a database of version 15 holding a failed
// payment of every failure code, a succeeded one and a processing one: the
// Payments list's refund filter then finds exactly those that
// Payment.RefundDue flags, as if they had been written after the upgrade.
func TestMigratePaymentList(t *testing.T) {
	ctx := context.Background()
	codes := []string{
		checkout.FailCardDeclined, checkout.FailInsufficientFunds, checkout.FailExpiredCard, checkout.FailIncorrectCVC,
		checkout.FailProcessingError, checkout.FailTestModeLiveCard, checkout.FailSessionExpired, checkout.FailSessionCompleted,
		checkout.FailDuplicatePayment, checkout.FailTradeReversed, checkout.FailCapturedAfterFailure, checkout.FailConfirmationTimeout,
		checkout.FailUnderpaid, checkout.FailReplaced, checkout.FailDoubleSpent, checkout.FailDropped, checkout.FailAuthenticationFailed, checkout.FailAbandoned,
		"", "", // a succeeded and a processing payment
	}
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1_790_000_000, 0)
			m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at}
			var want []string
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.MerchantInsert(ctx, m); err != nil {
					return err
				}
				for i, code := range codes {
					s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeLive, Status: checkout.StatusOpen,
						Title: "Order", Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
						Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
					if err := tx.SessionInsert(ctx, s); err != nil {
						return err
					}
					p := checkout.NewPayment(s, checkout.MethodCrypto, at.Add(time.Duration(i)*time.Millisecond))
					switch {
					case code != "":
						if err := p.Fail(code, p.CreatedAt); err != nil {
							return err
						}
					case i == len(codes)-2:
						if err := p.Succeed(checkout.DefaultPricing, p.CreatedAt); err != nil {
							return err
						}
					}
					if p.RefundDue() {
						want = append([]string{p.ID}, want...)
					}
					if err := tx.PaymentInsert(ctx, p); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()

			execRaw(t, driver, dsn, append(undoFrom(16), `DELETE FROM schema_migrations WHERE version >= 16`))

			db, err = open()
			if err != nil {
				t.Fatalf("upgrade to 16: %v", err)
			}
			defer db.Close()
			got, err := db.PaymentList(ctx, checkout.PaymentListParams{MerchantID: m.ID, Mode: checkout.ModeLive, RefundDue: true})
			var ids []string
			for _, p := range got {
				ids = append(ids, p.ID)
			}
			if err != nil || len(want) != 5 || !slices.Equal(ids, want) {
				t.Errorf("payments to refund after the upgrade = %v, %v; want the %d refund-due ones %v", ids, err, len(want), want)
			}
			if all, err := db.PaymentList(ctx, checkout.PaymentListParams{MerchantID: m.ID, Mode: checkout.ModeLive}); err != nil || len(all) != len(codes) {
				t.Errorf("payments after the upgrade = %d, %v; want %d", len(all), err, len(codes))
			}
		})
	}
}

// TestMigrateHMACSecrets upgrades a database of version 11 holding a bearer
// key: the key keeps working, with no sealed secret, and an HMAC key stored
// after the upgrade keeps its own.
func TestMigrateHMACSecrets(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1_790_000_000, 0)
			m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at}
			bearer, _, err := checkout.NewAPIKey(checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
				Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}}, at)
			if err != nil {
				t.Fatal(err)
			}
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.MerchantInsert(ctx, m); err != nil {
					return err
				}
				return tx.APIKeyInsert(ctx, bearer)
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()

			execRaw(t, driver, dsn, append(undoFrom(12), `DELETE FROM schema_migrations WHERE version >= 12`))

			db, err = open()
			if err != nil {
				t.Fatalf("upgrade to 12: %v", err)
			}
			defer db.Close()
			got, err := db.APIKeyGetByHash(ctx, bearer.SecretHash)
			if err != nil || got.ID != bearer.ID || got.SealedSecret != "" {
				t.Errorf("bearer key after the upgrade = %+v, %v; want it found, with no sealed secret", got, err)
			}
			hmac, _, err := checkout.NewAPIKey(checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyHMAC,
				Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}}, at)
			if err != nil {
				t.Fatal(err)
			}
			hmac.SealedSecret = "v1.0011223344556677.c2VhbGVk"
			if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.APIKeyInsert(ctx, hmac) }); err != nil {
				t.Fatal(err)
			}
			if got, err := db.APIKeyGet(ctx, hmac.ID); err != nil || got.SealedSecret != hmac.SealedSecret {
				t.Errorf("HMAC key after the upgrade = %+v, %v; want its sealed secret kept", got, err)
			}
		})
	}
}

// TestMigrateDashboardWebhooks upgrades a database of version 9 holding an
// endpoint, a delivery and its attempt: the delivery gets its event's type
// and the attempt its endpoint (so the list and health find them), and the
// endpoint no description and no previous secret, and it is of kind https.
func TestMigrateDashboardWebhooks(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1_790_000_000, 0)
			m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at}
			ep := &checkout.Endpoint{ID: checkout.NewID(checkout.PrefixEndpoint, 16), MerchantID: m.ID, Mode: checkout.ModeTest,
				URL: "https://hooks.example.com/", Events: []string{checkout.AllEvents}, Enabled: true, Secret: checkout.NewWebhookSecret(),
				CreatedAt: at, UpdatedAt: at}
			e, _ := checkout.NewEvent(checkout.EventCheckoutCompleted, m.ID, checkout.ModeTest, map[string]string{}, at)
			d := checkout.NewDelivery(e, ep, at)
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				for _, f := range []func() error{
					func() error { return tx.MerchantInsert(ctx, m) },
					func() error { return tx.EndpointInsert(ctx, ep) },
					func() error { return tx.EventInsert(ctx, e) },
					func() error { return tx.DeliveryInsert(ctx, d) },
				} {
					if err := f(); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()

			execRaw(t, driver, dsn, append(undoFrom(10),
				`INSERT INTO delivery_attempts (delivery_id, number, started_at_ms, duration_us, status_code, error, response_body)
					VALUES ('`+d.ID+`', 1, 1790000000000, 1000, 500, 'receiver answered 500', '')`,
				`UPDATE deliveries SET status = 'failed'`,
			))

			db, err = open()
			if err != nil {
				t.Fatalf("upgrade to 10: %v", err)
			}
			defer db.Close()
			got, err := db.DeliveryGet(ctx, d.ID)
			if err != nil || got.EventType != checkout.EventCheckoutCompleted || got.ResentAs != "" {
				t.Errorf("delivery after the upgrade = %+v, %v; want its event's type and no resend", got, err)
			}
			h, err := db.EndpointHealthGet(ctx, ep.ID, at.Add(time.Hour))
			if err != nil || h.LastFailure == nil || h.LastFailure.DeliveryID != d.ID || h.Week.Failed != 1 {
				t.Errorf("health after the upgrade = %+v, %v; want the attempt found by its endpoint", h, err)
			}
			gotEp, err := db.EndpointGet(ctx, ep.ID)
			// Migration 0013 makes it an HTTPS endpoint (not a listener).
			if err != nil || gotEp.Description != "" || gotEp.PreviousSecret != "" || !gotEp.PreviousSecretExpiresAt.IsZero() ||
				gotEp.Kind != checkout.EndpointHTTPS || gotEp.IsListener() || !gotEp.SeenAt.IsZero() {
				t.Errorf("endpoint after the upgrade = %+v, %v", gotEp, err)
			}
		})
	}
}

// TestMigrateCryptoTxHash upgrades a database of version 3 that holds one
// crypto transaction recorded twice for a session (as concurrent reports
// could record it before version 4): the upgrade succeeds, the first record
// takes the transaction, and a third record of it is refused.
func TestMigrateCryptoTxHash(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1_790_000_000, 0)
			m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at}
			s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen,
				Title: "Order", Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
				Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
			first := checkout.NewPayment(s, checkout.MethodCrypto, at)
			first.Crypto = &checkout.CryptoDetails{Coin: "BTC", Address: "tb1q", AmountBase: "25000", TxHash: "tx1", Confirmations: 2}
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.MerchantInsert(ctx, m); err != nil {
					return err
				}
				if err := tx.SessionInsert(ctx, s); err != nil {
					return err
				}
				return tx.PaymentInsert(ctx, first)
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()

			// Back to version 3, with a second record of tx1 a moment later.
			// (Each migration after 4 is undone here too.)
			execRaw(t, driver, dsn, append(undoFrom(10), []string{
				`DROP TABLE setup_tokens`,
				`DROP TABLE dashboard_sessions`,
				`DROP TABLE memberships`,
				`DROP TABLE accounts`,
				`ALTER TABLE deliveries RENAME COLUMN next_attempt_at_ms TO next_attempt_at`,
				`ALTER TABLE deliveries RENAME COLUMN lease_until_ms TO lease_until`,
				`ALTER TABLE deliveries RENAME COLUMN created_at_ms TO created_at`,
				`ALTER TABLE deliveries RENAME COLUMN updated_at_ms TO updated_at`,
				`ALTER TABLE delivery_attempts RENAME COLUMN started_at_ms TO started_at`,
				`ALTER TABLE payments RENAME COLUMN due_at_ms TO due_at`,
				`ALTER TABLE payments RENAME COLUMN created_at_ms TO created_at`,
				`ALTER TABLE payments RENAME COLUMN updated_at_ms TO updated_at`,
				`ALTER TABLE crypto_quotes RENAME COLUMN created_at_ms TO created_at`,
				`ALTER TABLE request_logs RENAME COLUMN created_at_ms TO created_at`,
				`ALTER TABLE sessions ADD COLUMN payment_in_progress INTEGER NOT NULL DEFAULT 0`,
				`ALTER TABLE idempotency_keys ADD COLUMN status_code INTEGER NOT NULL DEFAULT 201`,
				`DROP INDEX deliveries_pending_endpoint`,
				`DROP INDEX payments_session_tx`,
				`ALTER TABLE payments DROP COLUMN tx_hash`,
				`DELETE FROM schema_migrations WHERE version >= 4`,
				`INSERT INTO payments SELECT 'pay_second', session_id, store_id, mode, method, 'failed', 0, amount, amount_refunded, fee, currency,
					card_brand, card_last4, buyer_country, customer_name, receipt_email, 'duplicate_payment', failure_message, details,
					dispute_on_success, NULL, created_at + 1, updated_at + 1, NULL FROM payments WHERE id = '` + first.ID + `'`,
			}...))

			db, err = open()
			if err != nil {
				t.Fatalf("upgrade of a database with a transaction recorded twice: %v", err)
			}
			defer db.Close()
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				got, err := tx.PaymentGetByTxHash(ctx, s.ID, "tx1")
				if err != nil || got.ID != first.ID {
					t.Errorf("PaymentGetByTxHash(tx1) = %v, %v; want the first record %s", got, err, first.ID)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			third := checkout.NewPayment(s, checkout.MethodCrypto, at)
			third.Crypto = first.Crypto
			if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.PaymentInsert(ctx, third) }); !checkout.IsCode(err, checkout.EConflict) {
				t.Errorf("a third record of tx1 = %v; want conflict", err)
			}
			if ps, err := db.PaymentListBySession(ctx, s.ID); err != nil || len(ps) != 2 {
				t.Errorf("payments after the upgrade = %d, %v; want both records kept", len(ps), err)
			}
		})
	}
}

// A migration missing below the last one applied (the database went from 2
// to 4 under another build, and this one has 3) stops the start with an
// error that names it, instead of being skipped in silence.
func TestMigrateRefusesAGap(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			raw, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = 3`); err != nil {
				t.Fatal(err)
			}
			db, err = open()
			if err == nil {
				db.Close()
				t.Fatal("Open with migration 3 missing below 4 = nil error; want a refusal")
			}
			if !strings.Contains(err.Error(), "0003_") || !strings.Contains(err.Error(), "refusing to start") {
				t.Errorf("Open with migration 3 missing = %v; want an error naming 0003 and refusing to start", err)
			}
			var n int
			if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = 3`).Scan(&n); err != nil || n != 0 {
				t.Errorf("migration 3 recorded %d times, %v; want it left unapplied", n, err)
			}
		})
	}
}

// TestMigrateDisputes upgrades a database of version 21 holding a payment
// disputed before disputes were kept, with part of it refunded, and an
// undisputed one: the disputed one gets its dispute (open, answerable for
// 7 days from when it was disputed, without a fee) and holds what is left
// of it; the other gets none.
func TestMigrateDisputes(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			at := time.UnixMilli(1_790_000_000_123)
			m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at.Truncate(time.Second)}
			var disputedID, plainID string
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.MerchantInsert(ctx, m); err != nil {
					return err
				}
				for i := range 2 {
					s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeTest, Status: checkout.StatusOpen,
						Title: "Order", Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
						Metadata: map[string]string{}, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
					if err := tx.SessionInsert(ctx, s); err != nil {
						return err
					}
					p := checkout.NewPayment(s, checkout.MethodCard, at)
					if err := p.Succeed(checkout.DefaultPricing, at); err != nil {
						return err
					}
					if i == 0 {
						p.Status, p.AmountRefunded, disputedID = checkout.PaymentDisputed, 500, p.ID
					} else {
						plainID = p.ID
					}
					if err := tx.PaymentInsert(ctx, p); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			execRaw(t, driver, dsn, append(undoFrom(22), `DELETE FROM schema_migrations WHERE version >= 22`))

			db, err = open()
			if err != nil {
				t.Fatalf("upgrade to 22: %v", err)
			}
			defer db.Close()
			d, err := db.DisputeGetByPayment(ctx, disputedID)
			if err != nil {
				t.Fatalf("the disputed payment's dispute after the upgrade: %v", err)
			}
			due := time.UnixMilli(at.UnixMilli()).Add(checkout.DisputeEvidenceWindow)
			if !strings.HasPrefix(d.ID, "dp_") || len(d.ID) != 35 || d.Status != checkout.DisputeNeedsResponse || d.Amount != 1000 || d.Fee != 0 ||
				d.Reason != checkout.DisputeFraudulent || !d.EvidenceDueBy.Equal(due.Truncate(time.Second)) || d.DueAt == nil || !d.DueAt.Equal(due) {
				t.Errorf("the dispute made by the upgrade = %+v", d)
			}
			if p, err := db.PaymentGet(ctx, disputedID); err != nil || p.AmountDisputed != 1000 || p.DisputeFee != 0 {
				t.Errorf("the disputed payment after the upgrade = %+v, %v; want 1000 held", p, err)
			}
			if _, err := db.DisputeGetByPayment(ctx, plainID); !checkout.IsCode(err, checkout.ENotFound) {
				t.Errorf("the undisputed payment's dispute = %v; want none", err)
			}
			if p, _ := db.PaymentGet(ctx, plainID); p.AmountDisputed != 0 {
				t.Errorf("the undisputed payment holds %d; want 0", p.AmountDisputed)
			}
		})
	}
}

// TestMigrateSessionList upgrades a database of version 23 holding sessions
// with and without metadata, and their events: the Sessions list then finds
// each by a metadata key's value, and a session's page its events, as if
// they had been written after the upgrade.
func TestMigrateSessionList(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1_790_000_000, 0)
			m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at}
			var sessions []*checkout.Session
			var events []*checkout.Event
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.MerchantInsert(ctx, m); err != nil {
					return err
				}
				for i, md := range []map[string]string{{"order_id": "A-1", "note": "x"}, {"order_id": "A-2"}, {}, nil} {
					s := &checkout.Session{ID: checkout.NewSessionID(), MerchantID: m.ID, Mode: checkout.ModeLive, Status: checkout.StatusOpen,
						Title: "Order", Currency: "USD", Amount: 1500, TotalAmount: 1500, Items: []checkout.Item{{Name: "Sword", Amount: 1500, Quantity: 1}},
						Metadata: md, CreatedAt: at.Add(time.Duration(i) * time.Second), ExpiresAt: at.Add(time.Hour)}
					if err := tx.SessionInsert(ctx, s); err != nil {
						return err
					}
					e, err := checkout.NewEvent(checkout.EventCheckoutCreated, m.ID, s.Mode, s.View(m, "https://pay.example"), s.CreatedAt)
					if err != nil {
						return err
					}
					if err := tx.EventInsert(ctx, e); err != nil {
						return err
					}
					sessions, events = append(sessions, s), append(events, e)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()

			execRaw(t, driver, dsn, append(undoFrom(26), `DELETE FROM schema_migrations WHERE version >= 26`))

			db, err = open()
			if err != nil {
				t.Fatalf("upgrade to 26: %v", err)
			}
			defer db.Close()
			for _, c := range []struct {
				key, value string
				want       []string
			}{
				{"order_id", "A-1", []string{sessions[0].ID}},
				{"order_id", "A-2", []string{sessions[1].ID}},
				{"note", "x", []string{sessions[0].ID}},
				{"order_id", "A-3", nil},
			} {
				got, err := db.SessionList(ctx, checkout.SessionListParams{MerchantID: m.ID, Mode: checkout.ModeLive, MetadataKey: c.key, MetadataValue: c.value})
				var ids []string
				for _, s := range got {
					ids = append(ids, s.ID)
				}
				if err != nil || !slices.Equal(ids, c.want) {
					t.Errorf("sessions with %s=%s after the upgrade = %v, %v; want %v", c.key, c.value, ids, err, c.want)
				}
			}
			for i, s := range sessions {
				got, err := db.EventListByObject(ctx, []string{s.ID})
				if err != nil || len(got) != 1 || got[0].ID != events[i].ID {
					t.Errorf("events of session %d after the upgrade = %v, %v; want %s", i, got, err, events[i].ID)
				}
			}
		})
	}
}

// TestMigrateMemberRoles upgrades a database of version 23, whose members
// had no roles and could do everything: each becomes an administrator of
// its store, and the roles of members added after are kept as given.
func TestMigrateMemberRoles(t *testing.T) {
	ctx := context.Background()
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			open, driver, dsn := freshDatabase(t, name)
			db, err := open()
			if err != nil {
				t.Fatal(err)
			}
			at := time.Unix(1_790_000_000, 0)
			acme := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Acme", Currency: "USD", CreatedAt: at}
			other := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Other", Currency: "USD", CreatedAt: at}
			ann := &checkout.Account{ID: checkout.NewAccountID(), Email: "ann@example.com", PasswordHash: "x", CreatedAt: at}
			bob := &checkout.Account{ID: checkout.NewAccountID(), Email: "bob@example.com", PasswordHash: "x", CreatedAt: at}
			err = db.InTx(ctx, func(tx checkout.Tx) error {
				for _, m := range []*checkout.Merchant{acme, other} {
					if err := tx.MerchantInsert(ctx, m); err != nil {
						return err
					}
				}
				for _, a := range []*checkout.Account{ann, bob} {
					if err := tx.AccountInsert(ctx, a); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			execRaw(t, driver, dsn, append(undoFrom(27), `DELETE FROM schema_migrations WHERE version >= 27`,
				`INSERT INTO memberships (account_id, store_id, created_at) VALUES ('`+ann.ID+`', '`+acme.ID+`', 1790000000)`,
				`INSERT INTO memberships (account_id, store_id, created_at) VALUES ('`+bob.ID+`', '`+acme.ID+`', 1790000001)`,
				`INSERT INTO memberships (account_id, store_id, created_at) VALUES ('`+bob.ID+`', '`+other.ID+`', 1790000002)`))

			db, err = open()
			if err != nil {
				t.Fatalf("upgrade to 27: %v", err)
			}
			defer db.Close()
			for _, m := range [][2]string{{ann.ID, acme.ID}, {bob.ID, acme.ID}, {bob.ID, other.ID}} {
				got, err := db.MembershipGet(ctx, m[0], m[1])
				if err != nil || got.Role != checkout.RoleAdministrator {
					t.Errorf("membership %s of %s after the upgrade = %+v, %v; want an administrator", m[0], m[1], got, err)
				}
			}
			viewer := &checkout.Membership{AccountID: ann.ID, MerchantID: other.ID, Role: checkout.RoleViewer, CreatedAt: at}
			if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MembershipInsert(ctx, viewer) }); err != nil {
				t.Fatal(err)
			}
			if got, err := db.MembershipGet(ctx, ann.ID, other.ID); err != nil || got.Role != checkout.RoleViewer {
				t.Errorf("a viewer added after the upgrade = %+v, %v; want a viewer", got, err)
			}
		})
	}
}
