package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A transaction that lost to another (a deadlock, a serialization failure)
// would succeed if tried again: service_unavailable, which the API answers
// 503 with Retry-After, and not internal_error. The codes that mean something
// else keep their meaning.
func TestTranslate(t *testing.T) {
	tests := []struct {
		code string // SQLSTATE
		want string // checkout error code; "" when left untranslated
	}{
		{"40P01", checkout.EUnavailable}, // deadlock_detected
		{"40001", checkout.EUnavailable}, // serialization_failure
		{"23505", checkout.EConflict},    // unique_violation
		{"08006", checkout.EUnavailable}, // connection_failure
		{"53300", checkout.EUnavailable}, // too_many_connections
		{"57P01", checkout.EUnavailable}, // admin_shutdown
		{"57P03", checkout.EUnavailable}, // cannot_connect_now: a node starting, or being promoted
		{"25006", checkout.EUnavailable}, // read_only_sql_transaction: a standby, or a primary being demoted
		{"42P01", ""},                    // undefined_table: a bug, internal
		{"23503", ""},                    // foreign_key_violation: a bug, internal
	}
	for _, tt := range tests {
		pe := &pgconn.PgError{Code: tt.code, Message: "boom"}
		for _, err := range []error{pe, fmt.Errorf("query: %w", pe)} {
			got := postgres.Dialect.Translate(err)
			var ce *checkout.Error
			if !errors.As(got, &ce) {
				if tt.want != "" {
					t.Errorf("Translate(%v) = %v; want %s", err, got, tt.want)
				}
				continue
			}
			if ce.Code != tt.want {
				t.Errorf("Translate(%v) = %s; want %s", err, ce.Code, tt.want)
			}
			if !errors.Is(got, pe) {
				t.Errorf("Translate(%v) = %v; want the driver error kept as the cause", err, got)
			}
		}
	}
	for _, code := range []string{"40P01", "40001"} {
		var ce *checkout.Error
		errors.As(postgres.Dialect.Translate(&pgconn.PgError{Code: code}), &ce)
		if ce == nil || ce.RetryAfter != time.Second {
			t.Errorf("Translate(%s) = %+v; want RetryAfter 1s: a lost race is worth retrying at once", code, ce)
		}
	}
}

// Two transactions that lock two rows in opposite orders deadlock for real;
// PostgreSQL ends one of them with 40P01, which reaches the caller of InTx
// as service_unavailable, and the other commits.
func TestDeadlockIsUnavailable(t *testing.T) {
	db := storetest.Open(t, "postgres")
	ctx := context.Background()
	var ids [2]string
	for i := range ids {
		m := &checkout.Merchant{ID: checkout.NewStoreID(), Name: "Shop", Currency: "USD", Website: "https://acme.example",
			StatementDescriptor: "SHOP", CreatedAt: time.Unix(1700000000, 0)}
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
			t.Fatal(err)
		}
		ids[i] = m.ID
	}
	// Each transaction locks its first row, waits until the other holds
	// its own, then asks for the other's: a cycle whatever the timing.
	var locked [2]chan struct{}
	for i := range locked {
		locked[i] = make(chan struct{})
	}
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			errs <- db.InTx(ctx, func(tx checkout.Tx) error {
				if err := tx.MerchantLock(ctx, ids[i]); err != nil {
					return err
				}
				close(locked[i])
				<-locked[1-i]
				return tx.MerchantLock(ctx, ids[1-i])
			})
		}()
	}
	var failed []error
	for range 2 {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("two deadlocking transactions: errors %v; want exactly one to fail", failed)
	}
	err := failed[0]
	var pe *pgconn.PgError
	if !checkout.IsCode(err, checkout.EUnavailable) || !errors.As(err, &pe) || pe.Code != "40P01" {
		t.Errorf("the deadlock's loser got %v (%s); want service_unavailable caused by SQLSTATE 40P01", err, checkout.ErrorCode(err))
	}
}
