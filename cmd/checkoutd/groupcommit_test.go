package main

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// A checkoutd process SIGKILLed during a storm of concurrent creates,
// whose writes share transactions (group commit): every session answered
// 201 is there after the restart, and no create is half written: each
// session that is there has its checkout.created event and that event its
// delivery to the store's endpoint, and nothing else is.
func TestCrashDuringCreateStormLosesNoSession(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	for name, newDB := range eventDatabases(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			r := newEventReceiver(t, false)
			storeID, secret := setupWebhooks(t, db, r)
			p := startProcess(t, serveArgs(db, r)...)

			var mu sync.Mutex
			var created []string
			enough := make(chan struct{})
			var once sync.Once
			var wg sync.WaitGroup
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			for range 16 {
				wg.Go(func() {
					for {
						req, _ := http.NewRequest("POST", "http://"+p.addr+"/v1/stores/"+storeID+"/checkouts",
							strings.NewReader(`{"items":[{"name":"Sword","amount":1500}]}`))
						req.Header.Set("Authorization", "Bearer "+secret)
						req.Header.Set("Content-Type", "application/json")
						resp, err := client.Do(req)
						if err != nil {
							return // the process is gone
						}
						var body struct{ Data struct{ ID string } }
						err = json.NewDecoder(resp.Body).Decode(&body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusCreated || err != nil {
							continue // an answer cut by the kill, or refused: promised nothing
						}
						mu.Lock()
						created = append(created, body.Data.ID)
						if len(created) >= 300 {
							once.Do(func() { close(enough) })
						}
						mu.Unlock()
					}
				})
			}
			<-enough
			// The storm's writes shared transactions: it tested group
			// commit, not one write after another.
			if m := scrapeServe(t, "http://"+p.addr+"/metrics"); m.Value("checkoutd_db_batched_writes_total") == 0 {
				t.Error("no write was batched during the storm")
			}
			if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			p.wait()
			wg.Wait()

			conn := openRaw(t, db)
			for _, id := range created {
				var n int
				if err := conn.QueryRow(`SELECT COUNT(*) FROM sessions WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
					t.Fatalf("session %s, answered 201, after the kill: %d rows, %v", id, n, err)
				}
			}
			var sessions, events, deliveries int
			for q, v := range map[string]*int{
				`SELECT COUNT(*) FROM sessions WHERE store_id = $1`:                                          &sessions,
				`SELECT COUNT(*) FROM events WHERE store_id = $1 AND type = 'checkout.created'`:              &events,
				`SELECT COUNT(*) FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.store_id = $1`: &deliveries,
			} {
				if err := conn.QueryRow(q, storeID).Scan(v); err != nil {
					t.Fatal(err)
				}
			}
			if sessions < len(created) || events != sessions || deliveries != sessions {
				t.Errorf("after the kill: %d sessions (%d answered 201), %d checkout.created events, %d deliveries; want one event and one delivery a session",
					sessions, len(created), events, deliveries)
			}
			t.Logf("%d sessions answered 201, %d in the database", len(created), sessions)
		})
	}
}

// openRaw opens database db (a SQLite path or a PostgreSQL URL) with
// database/sql, for a test to count rows.
func openRaw(t *testing.T, db string) *sql.DB {
	t.Helper()
	driver := "sqlite"
	if strings.HasPrefix(db, "postgres") {
		driver = "pgx"
	}
	conn, err := sql.Open(driver, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
