// Package storetest opens throwaway databases for tests, SQLite and
// PostgreSQL alike, and holds the conformance suite every store must pass.
//
// PostgreSQL tests use CHECKOUTD_TEST_DATABASE (default
// postgres://postgres@127.0.0.1:5432/test) and give each test a schema of its
// own, dropped when the test ends. When that server cannot be reached they
// skip with a message, unless CHECKOUTD_TEST_REQUIRE_POSTGRES=1 (set by
// .ci/run), which makes them fail instead.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
)

// DefaultPostgresURL is used when CHECKOUTD_TEST_DATABASE is not set.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Databases names the databases Each runs on.
var Databases = []string{"sqlite", "postgres"}

// Each runs fn as a subtest on a fresh SQLite store and on a fresh
// PostgreSQL store.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, name := range Databases {
		t.Run(name, func(t *testing.T) { fn(t, Open(t, name)) })
	}
}

// Open returns a fresh, migrated store of the named kind, closed (and on
// PostgreSQL dropped) when the test ends.
func Open(t testing.TB, name string) *store.DB {
	t.Helper()
	ctx := context.Background()
	var db *store.DB
	var err error
	switch name {
	case "sqlite":
		db, err = sqlite.OpenToServe(ctx, SQLitePath(t)) // as serve opens it: sessions cached
	case "postgres":
		db, err = postgres.Open(ctx, PostgresURL(t))
	default:
		t.Fatalf("unknown database %q", name)
	}
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// SQLitePath returns the path of a new SQLite file in the test's temporary
// directory.
func SQLitePath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "checkoutd.db")
}

var (
	pgOnce   sync.Once
	pgErr    error
	pgBase   string
	pgAdmin  *sql.DB
	pgSchema int
	pgMu     sync.Mutex
)

// PostgresURL creates a schema of its own for the test and returns a URL
// whose connections use it. The schema is dropped when the test ends. It
// skips the test when PostgreSQL cannot be reached (fails, under
// CHECKOUTD_TEST_REQUIRE_POSTGRES=1).
func PostgresURL(t testing.TB) string {
	t.Helper()
	pgOnce.Do(connectAdmin)
	if pgErr != nil {
		msg := fmt.Sprintf("PostgreSQL tests need a server at %s (set CHECKOUTD_TEST_DATABASE): %v", redact(pgBase), pgErr)
		if os.Getenv("CHECKOUTD_TEST_REQUIRE_POSTGRES") == "1" {
			t.Fatal(msg)
		}
		t.Skip("skipping: " + msg)
	}
	pgMu.Lock()
	pgSchema++
	schema := fmt.Sprintf("t_%d_%d_%s", os.Getpid(), pgSchema, checkout.NewID("", 4))
	pgMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pgAdmin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := pgAdmin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(pgBase, "?") {
		sep = "&"
	}
	return pgBase + sep + "search_path=" + schema
}

func connectAdmin() {
	pgBase = os.Getenv("CHECKOUTD_TEST_DATABASE")
	if pgBase == "" {
		pgBase = DefaultPostgresURL
	}
	db, err := sql.Open("pgx", pgBase)
	if err != nil {
		pgErr = err
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		pgErr = err
		return
	}
	db.SetMaxOpenConns(4)
	pgAdmin = db
}

func redact(url string) string {
	if i := strings.Index(url, "@"); i >= 0 {
		if j := strings.Index(url, "://"); j >= 0 && j < i {
			return url[:j+3] + "…" + url[i:]
		}
	}
	return url
}
