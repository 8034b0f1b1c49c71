package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// testSecretsKey is the fixture's secrets key, which seals HMAC keys'
// secrets.
var testSecretsKey, _ = seal.NewKey([]byte("fixture secrets key, 32 bytes!!!"))

// t0 is when every test's fake clock starts.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fixture is a service on a real database with fake clocks, and a store
// with a test-mode write key.
type fixture struct {
	db     *store.DB
	clock  *clock.Fake
	cache  *clock.Fake
	svc    *service.Service
	m      *checkout.Merchant
	key    *checkout.APIKey
	secret string
}

func newFixture(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	f := &fixture{db: db, clock: clock.NewFake(t0), cache: clock.NewFake(t0)}
	f.svc = f.newService(db)
	var err error
	f.m, err = f.svc.CreateMerchant(context.Background(), checkout.MerchantParams{Name: "Acme Games", Currency: "USD"})
	if err != nil {
		t.Fatalf("CreateMerchant: %v", err)
	}
	f.key, f.secret = f.newKey(t, checkout.ModeTest, checkout.KeyBearer)
	return f
}

// newService returns another service (another node) on db, sharing the
// fixture's clocks.
func (f *fixture) newService(db *store.DB) *service.Service {
	return service.New(service.Config{Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, CheckoutBaseURL: "https://pay.example",
		SecretsKey: testSecretsKey})
}

func (f *fixture) newKey(t *testing.T, mode checkout.Mode, typ checkout.KeyType) (*checkout.APIKey, string) {
	t.Helper()
	k, secret, err := f.svc.CreateAPIKey(context.Background(), checkout.APIKeyParams{
		MerchantID: f.m.ID, Mode: mode, Type: typ, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite},
	})
	if err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	return k, secret
}

// create makes a session through the service at the fake clock's time.
func (f *fixture) create(t *testing.T) *checkout.SessionJSON {
	t.Helper()
	p, err := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.CreateSession(context.Background(), service.CreateSessionParams{Key: f.key, StoreID: f.m.ID, Params: p})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	var s checkout.SessionJSON
	if err := json.Unmarshal(res.Data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// events returns the store's test-mode events of type typ.
func (f *fixture) events(t *testing.T, typ string) []*checkout.Event {
	t.Helper()
	es, err := f.db.EventList(context.Background(), checkout.EventListParams{MerchantID: f.m.ID, Mode: checkout.ModeTest, Type: typ, Limit: 100000})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// expiredIDs returns the session id of each checkout.expired event, failing
// on an event whose session is not expired.
func (f *fixture) expiredIDs(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range f.events(t, checkout.EventCheckoutExpired) {
		var s checkout.SessionJSON
		if err := json.Unmarshal(e.Object, &s); err != nil {
			t.Fatal(err)
		}
		if s.Status != checkout.StatusExpired {
			t.Errorf("checkout.expired event carries a session in status %s", s.Status)
		}
		out[s.ID]++
	}
	return out
}

func TestAuthenticate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		k, err := f.svc.Authenticate(ctx, f.secret)
		if err != nil || k.ID != f.key.ID {
			t.Fatalf("Authenticate(its secret) = %v, %v; want key %s", k, err, f.key.ID)
		}
		unknown := "ck_test_sk_" + checkout.NewSecret()
		for _, secret := range []string{
			"", "ck_test_sk_", "ck_test_sk_short", f.secret + "x", f.secret[:len(f.secret)-1], " " + f.secret,
			strings.ToUpper(f.secret), "Bearer " + f.secret, f.key.SecretHash, f.key.ID,
			unknown, strings.Replace(f.secret, "_test_", "_live_", 1),
		} {
			k, err := f.svc.Authenticate(ctx, secret)
			if !checkout.IsCode(err, checkout.EInvalidAPIKey) {
				t.Errorf("Authenticate(%q) = %v, %v; want invalid_api_key", secret, k, err)
			}
		}
	})
}

// An HMAC key's secret must not work as a bearer secret.
func TestAuthenticateRefusesHMACSecret(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		_, secret := f.newKey(t, checkout.ModeTest, checkout.KeyHMAC)
		if !strings.HasPrefix(secret, "ck_test_hk_") {
			t.Fatalf("HMAC secret %q", secret)
		}
		k, err := f.svc.Authenticate(context.Background(), secret)
		if !checkout.IsCode(err, checkout.EInvalidAPIKey) {
			t.Errorf("Authenticate(HMAC key's secret) = %v, %v; want invalid_api_key", k, err)
		}
	})
}

// A revoked key stops working at once on a node that has not cached it, and
// within the cache TTL on one that has; never later than 5 s (DESIGN.md 2),
// whatever TTL is configured.
func TestAuthenticateRevoked(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, tt := range []struct {
			ttl, wait time.Duration
		}{
			{0, 2 * time.Second}, // the default
			{time.Second, time.Second},
			{5 * time.Second, 5 * time.Second},
			{time.Hour, 5 * time.Second}, // too long: not honoured
		} {
			t.Run(fmt.Sprint(tt.ttl), func(t *testing.T) {
				f := newFixture(t, db)
				ctx := context.Background()
				node := service.New(service.Config{Store: db, Now: f.clock.Now, CacheNow: f.cache.Now, KeyCacheTTL: tt.ttl})
				if _, err := node.Authenticate(ctx, f.secret); err != nil {
					t.Fatalf("Authenticate = %v", err)
				}
				k, err := f.svc.RevokeAPIKey(ctx, f.key.ID)
				if err != nil || !k.Revoked() || !k.RevokedAt.Equal(t0) {
					t.Fatalf("RevokeAPIKey = %+v, %v; want revoked at %v", k, err, t0)
				}
				fresh := f.newService(db)
				if _, err := fresh.Authenticate(ctx, f.secret); !checkout.IsCode(err, checkout.EInvalidAPIKey) {
					t.Errorf("a node without the key cached: Authenticate(revoked) = %v; want invalid_api_key", err)
				}
				f.cache.Advance(tt.wait)
				if _, err := node.Authenticate(ctx, f.secret); !checkout.IsCode(err, checkout.EInvalidAPIKey) {
					t.Errorf("%v after revoking (TTL %v): Authenticate(revoked) = %v; want invalid_api_key", tt.wait, tt.ttl, err)
				}
			})
		}
	})
}

func TestAPIKeyAdministration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		_, _, err := f.svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: checkout.NewStoreID(), Mode: checkout.ModeTest,
			Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsRead}})
		if !checkout.IsCode(err, checkout.EStoreNotFound) {
			t.Errorf("CreateAPIKey(unknown store) = %v; want store_not_found", err)
		}
		_, _, err = f.svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: f.m.ID, Mode: "prod"})
		if !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("CreateAPIKey(invalid) = %v; want validation_failed", err)
		}
		if _, err := f.svc.RevokeAPIKey(ctx, checkout.NewAPIKeyID()); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("RevokeAPIKey(unknown) = %v; want not_found", err)
		}
		f.clock.Advance(time.Minute)
		if _, err := f.svc.RevokeAPIKey(ctx, f.key.ID); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Minute)
		k, err := f.svc.RevokeAPIKey(ctx, f.key.ID)
		if err != nil || !k.RevokedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("RevokeAPIKey twice = %v, %v; want the first time kept", k.RevokedAt, err)
		}
	})
}

// ExpireAll expires exactly the due sessions, each once, with one
// checkout.expired event, on the fake clock.
func TestExpireAll(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		a, b, inProgress := f.create(t), f.create(t), f.create(t)
		f.clock.Advance(30 * time.Minute)
		later := f.create(t)
		err := db.InTx(ctx, func(tx checkout.Tx) error {
			s, err := tx.SessionGetForUpdate(ctx, inProgress.ID)
			if err != nil {
				return err
			}
			p := "pay_0123456789abcdef0123456789abcdef"
			s.ActivePaymentID = &p
			return tx.SessionUpdate(ctx, s)
		})
		if err != nil {
			t.Fatal(err)
		}

		expire := func(at time.Time, want int) {
			t.Helper()
			f.clock.Set(at)
			if n, err := f.svc.ExpireAll(ctx); n != want || err != nil {
				t.Errorf("at %v: ExpireAll = %d, %v; want %d", at.Sub(t0), n, err, want)
			}
		}
		expire(t0.Add(time.Hour-time.Second), 0)
		expire(t0.Add(time.Hour), 2)
		expire(t0.Add(time.Hour), 0)
		expire(t0.Add(90*time.Minute-time.Second), 0)
		expire(t0.Add(90*time.Minute), 1)
		expire(t0.Add(48*time.Hour), 0)

		got := f.expiredIDs(t)
		want := map[string]int{a.ID: 1, b.ID: 1, later.ID: 1}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("checkout.expired events per session = %v; want %v", got, want)
		}
		s, err := db.SessionGet(ctx, inProgress.ID)
		if err != nil || s.Status != checkout.StatusOpen {
			t.Errorf("session with a payment in progress = %v, %v; want open", s.Status, err)
		}
		for _, id := range []string{a.ID, b.ID, later.ID} {
			if s, _ := db.SessionGet(ctx, id); s.Status != checkout.StatusExpired {
				t.Errorf("session %s is %s; want expired", id, s.Status)
			}
		}
	})
}

// A read expires a due session on the spot; the job then has nothing left
// to do and emits nothing more.
func TestGetSessionExpiresDue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		s := f.create(t)
		got, err := f.svc.GetSession(ctx, f.key, f.m.ID, s.ID)
		if err != nil || got.Status != checkout.StatusOpen {
			t.Fatalf("GetSession = %v, %v; want open", got, err)
		}
		f.clock.Advance(time.Hour)
		for range 2 {
			got, err = f.svc.GetSession(ctx, f.key, f.m.ID, s.ID)
			if err != nil || got.Status != checkout.StatusExpired {
				t.Fatalf("GetSession after the hour = %v, %v; want expired", got, err)
			}
		}
		if n, err := f.svc.ExpireAll(ctx); n != 0 || err != nil {
			t.Errorf("ExpireAll after the read = %d, %v; want 0", n, err)
		}
		if got := f.expiredIDs(t); got[s.ID] != 1 || len(got) != 1 {
			t.Errorf("checkout.expired events = %v; want one for %s", got, s.ID)
		}
	})
}

// ExpireAll works through more due sessions than one batch holds.
func TestExpireAllBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		const n = 1203
		insertDue(t, f, n)
		f.clock.Advance(time.Hour)
		if got, err := f.svc.ExpireAll(ctx); got != n || err != nil {
			t.Errorf("ExpireAll = %d, %v; want %d", got, err, n)
		}
		if got := len(f.expiredIDs(t)); got != n {
			t.Errorf("%d sessions have a checkout.expired event; want %d", got, n)
		}
	})
}

// insertDue stores n open sessions created at t0, straight into the store:
// they are all due at t0 + 1h.
func insertDue(t *testing.T, f *fixture, n int) []string {
	t.Helper()
	ctx := context.Background()
	p, _ := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))
	var ids []string
	err := f.db.InTx(ctx, func(tx checkout.Tx) error {
		for range n {
			s := checkout.NewSession(p, f.m, checkout.ModeTest, t0)
			ids = append(ids, s.ID)
			if err := tx.SessionInsert(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// openTwice opens the same fresh database twice, as two nodes would.
func openTwice(t *testing.T, name string) (*store.DB, *store.DB) {
	t.Helper()
	ctx := context.Background()
	var open func() (*store.DB, error)
	switch name {
	case "sqlite":
		path := storetest.SQLitePath(t)
		open = func() (*store.DB, error) { return sqlite.Open(ctx, path) }
	case "postgres":
		url := storetest.PostgresURL(t)
		open = func() (*store.DB, error) { return postgres.Open(ctx, url) }
	}
	var dbs [2]*store.DB
	for i := range dbs {
		db, err := open()
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

// Nodes running the expiry job at the same moment on one database expire
// each session once: one checkout.expired event per session in all.
func TestExpireAllScaleOut(t *testing.T) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) {
			db1, db2 := openTwice(t, name)
			f := newFixture(t, db1)
			const n = 150
			ids := insertDue(t, f, n)
			f.clock.Advance(time.Hour)
			nodes := []*service.Service{f.svc, f.newService(db2), f.newService(db1), f.newService(db2)}
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				total int
				start = make(chan struct{})
			)
			for _, node := range nodes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got, err := node.ExpireAll(context.Background())
					if err != nil {
						t.Errorf("ExpireAll = %v", err)
					}
					mu.Lock()
					total += got
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
			if total != n {
				t.Errorf("the nodes expired %d sessions in all; want %d", total, n)
			}
			got := f.expiredIDs(t)
			for _, id := range ids {
				if got[id] != 1 {
					t.Errorf("session %s has %d checkout.expired events; want 1", id, got[id])
				}
			}
			if len(got) != n {
				t.Errorf("%d sessions have checkout.expired events; want %d", len(got), n)
			}
		})
	}
}

// Purge deletes request logs older than 30 days and idempotency records
// older than 24 hours, on the service's clock, and keeps those exactly at
// the limit.
func TestPurge(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		now := t0.Add(40 * 24 * time.Hour)
		f.clock.Set(now)
		logAt := func(at time.Time) *checkout.RequestLog {
			return &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: f.m.ID, Mode: checkout.ModeTest, APIKeyID: f.key.ID,
				Method: "GET", Path: "/", Status: 200, CreatedAt: at}
		}
		logKept := logAt(now.Add(-checkout.Retention))
		logGone := logAt(now.Add(-checkout.Retention - time.Millisecond))
		if err := db.RequestLogInsert(ctx, []*checkout.RequestLog{logKept, logGone, logAt(now)}); err != nil {
			t.Fatal(err)
		}
		idemAt := func(key string, at time.Time) *checkout.IdempotencyRecord {
			return &checkout.IdempotencyRecord{MerchantID: f.m.ID, Mode: checkout.ModeTest, Key: key, RequestHash: "h", Body: []byte("{}"), CreatedAt: at}
		}
		err := db.InTx(ctx, func(tx checkout.Tx) error {
			for _, r := range []*checkout.IdempotencyRecord{
				idemAt("kept", now.Add(-checkout.IdempotencyWindow)), idemAt("gone", now.Add(-checkout.IdempotencyWindow-time.Second)), idemAt("new", now),
			} {
				if err := tx.IdempotencyInsert(ctx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The write transactions' marks (PostgreSQL) carry the store's
		// clock, not the service's: store/failover_test.go purges them.
		purge := func() (service.PurgeResult, error) {
			res, err := f.svc.Purge(ctx)
			res.CommitMarks = 0
			return res, err
		}
		res, err := purge()
		if err != nil || res != (service.PurgeResult{RequestLogs: 1, IdempotencyKeys: 1}) {
			t.Errorf("Purge = %+v, %v; want one of each", res, err)
		}
		if _, err := db.RequestLogGet(ctx, logKept.RequestID); err != nil {
			t.Errorf("the log exactly 30 days old was purged: %v", err)
		}
		if _, err := db.RequestLogGet(ctx, logGone.RequestID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the log 30 days and 1 ms old: %v; want purged", err)
		}
		if _, err := db.IdempotencyGet(ctx, f.m.ID, checkout.ModeTest, "kept"); err != nil {
			t.Errorf("the record exactly 24 hours old was purged: %v", err)
		}
		if _, err := db.IdempotencyGet(ctx, f.m.ID, checkout.ModeTest, "gone"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the record 24 hours and 1 s old: %v; want purged", err)
		}
		if res, err := purge(); err != nil || res != (service.PurgeResult{}) {
			t.Errorf("Purge again = %+v, %v; want nothing", res, err)
		}
	})
}

// Concurrent creates with one Idempotency-Key make one session; every
// caller gets its response, all but one marked as replays.
func TestCreateSessionIdempotentConcurrent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		p, _ := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":1500}]}`))
		const n = 8
		results := make([]*service.CreateSessionResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = f.svc.CreateSession(context.Background(), service.CreateSessionParams{
					Key: f.key, StoreID: f.m.ID, Params: p, IdempotencyKey: "order-42",
				})
			}()
		}
		close(start)
		wg.Wait()
		fresh := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("CreateSession #%d = %v", i, errs[i])
			}
			if !results[i].Replayed {
				fresh++
			}
			if string(results[i].Data) != string(results[0].Data) {
				t.Errorf("CreateSession #%d = %s; want the same as #0: %s", i, results[i].Data, results[0].Data)
			}
		}
		if fresh != 1 {
			t.Errorf("%d of %d responses were not replays; want 1", fresh, n)
		}
		if got := len(f.events(t, checkout.EventCheckoutCreated)); got != 1 {
			t.Errorf("%d checkout.created events; want 1", got)
		}
	})
}
