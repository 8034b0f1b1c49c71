package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// losingStore fails reads and transactions, while sqlstate is set, with
// what PostgreSQL's store returns for that SQLSTATE.
type losingStore struct {
	checkout.Store
	sqlstate atomic.Value // string; "" lets everything through
}

func (s *losingStore) err() error {
	code, _ := s.sqlstate.Load().(string)
	if code == "" {
		return nil
	}
	return postgres.Dialect.Translate(&pgconn.PgError{Severity: "ERROR", Code: code, Message: "deadlock detected"})
}

func (s *losingStore) SessionGet(ctx context.Context, id string) (*checkout.Session, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.Store.SessionGet(ctx, id)
}

func (s *losingStore) InTx(ctx context.Context, fn func(checkout.Tx) error) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.Store.InTx(ctx, fn)
}

// A request whose transaction loses a race on PostgreSQL (a deadlock, a
// serialization failure) answers 503 service_unavailable with Retry-After:
// 1, never 500, and says nothing of the database; the same request tried
// again succeeds.
func TestLostRaceIsUnavailable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var ls *losingStore
		h := newHarness(t, db, harnessOptions{wrapStore: func(st checkout.Store) checkout.Store {
			ls = &losingStore{Store: st}
			return ls
		}})
		s := h.mustCreate(swordBody)
		for _, code := range []string{"40P01", "40001"} {
			ls.sqlstate.Store(code)
			for name, send := range map[string]func() *response{
				"create":   func() *response { return h.post(swordBody) },
				"retrieve": func() *response { return h.get(s.ID) },
			} {
				r := send()
				e := wantPlainError(t, r, http.StatusServiceUnavailable, "service_unavailable")
				if got := r.Header.Get("Retry-After"); got != "1" {
					t.Errorf("%s on SQLSTATE %s: Retry-After = %q; want 1", name, code, got)
				}
				if msg := e.Error.Message; strings.Contains(msg, "deadlock") || strings.Contains(msg, code) {
					t.Errorf("%s on SQLSTATE %s: message %q speaks of the database", name, code, msg)
				}
			}
			ls.sqlstate.Store("")
			if r := h.get(s.ID); r.Status != http.StatusOK {
				t.Errorf("retrieve after SQLSTATE %s = %d %s; want 200", code, r.Status, r.Body)
			}
			if r := h.post(swordBody); r.Status != http.StatusCreated {
				t.Errorf("create after SQLSTATE %s = %d %s; want 201", code, r.Status, r.Body)
			}
		}
	})
}
