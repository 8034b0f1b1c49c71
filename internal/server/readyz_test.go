package server_test

import (
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/server"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// /readyz answers 503 service_unavailable, with Retry-After, when the
// database does not answer, while /healthz still answers 200: a load
// balancer takes the node out, and nothing restarts it.
func TestReadyzDatabaseUnreachable(t *testing.T) {
	unreachable := map[string]func(t *testing.T) *store.DB{
		// Nothing listens on port 1: no PostgreSQL server is needed.
		"postgres": func(t *testing.T) *store.DB {
			pool, err := sql.Open("pgx", "postgres://postgres@127.0.0.1:1/none?connect_timeout=5")
			if err != nil {
				t.Fatal(err)
			}
			db := store.New(postgres.Dialect, pool, pool)
			t.Cleanup(func() { db.Close() })
			return db
		},
		// A SQLite store whose connections are gone.
		"sqlite": func(t *testing.T) *store.DB {
			db := storetest.Open(t, "sqlite")
			db.Close()
			return db
		},
	}
	for name, open := range unreachable {
		t.Run("unreachable/"+name, func(t *testing.T) {
			db := open(t)
			log := logtest.Logger(t)
			srv := httptest.NewServer(server.New(server.Deps{
				Service: service.New(service.Config{Store: db, Logger: log}), Logger: log,
				RateLimiter: api.NewRateLimiter(0, 1, nil),
			}))
			defer srv.Close()
			get := func(path string) (*http.Response, map[string]any) {
				resp, err := http.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				var v map[string]any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatalf("GET %s: %s is not JSON", path, b)
				}
				return resp, v
			}
			resp, body := get("/readyz")
			e, _ := body["error"].(map[string]any)
			if resp.StatusCode != 503 || e["code"] != "service_unavailable" || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Request-Id") == "" {
				t.Errorf("GET /readyz = %d %v (Retry-After %q); want 503 service_unavailable with Retry-After", resp.StatusCode, body, resp.Header.Get("Retry-After"))
			}
			if resp, body := get("/healthz"); resp.StatusCode != 200 {
				t.Errorf("GET /healthz = %d %v; want 200", resp.StatusCode, body)
			}
		})
	}
	// And on a database that answers, 200.
	t.Run("reachable", func(t *testing.T) { storetest.Each(t, readyzAnswers) })
}

func readyzAnswers(t *testing.T, db *store.DB) {
	srv := httptest.NewServer(server.New(server.Deps{Service: service.New(service.Config{Store: db}), RateLimiter: api.NewRateLimiter(0, 1, nil)}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /readyz = %d; want 200", resp.StatusCode)
	}
}
