package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// database is where a test's commands keep their data: the flags that
// select it and a way to open it directly.
type database struct {
	name  string
	flags []string
	open  func(t *testing.T) *store.DB
}

// eachDatabase runs fn on a fresh SQLite data directory and on a fresh
// PostgreSQL schema.
func eachDatabase(t *testing.T, fn func(t *testing.T, db database)) {
	for _, name := range storetest.Databases {
		t.Run(name, func(t *testing.T) { fn(t, newDatabase(t, name)) })
	}
}

func newDatabase(t *testing.T, name string) database {
	t.Helper()
	switch name {
	case "sqlite":
		dir := t.TempDir()
		return database{name, []string{"--data-dir", dir}, func(t *testing.T) *store.DB {
			db, err := sqlite.Open(context.Background(), filepath.Join(dir, "checkoutd.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}}
	case "postgres":
		url := storetest.PostgresURL(t)
		return database{name, []string{"--database", url}, func(t *testing.T) *store.DB {
			db, err := postgres.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}}
	}
	t.Fatalf("unknown database %q", name)
	return database{}
}

// vars is a test's environment: getenv never reads the real one.
type vars map[string]string

func (v vars) getenv(k string) string { return v[k] }

// cli runs checkoutd with args and returns what it printed.
func cli(t *testing.T, e vars, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, e.getenv, &out, &errOut)
	return out.String(), errOut.String(), err
}

// mustCLI runs checkoutd and fails the test when it fails.
func mustCLI(t *testing.T, e vars, args ...string) string {
	t.Helper()
	out, errOut, err := cli(t, e, args...)
	if err != nil {
		t.Fatalf("checkoutd %s = %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// decodeOne decodes out, which must hold exactly one JSON object.
func decodeOne(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout %q is not a JSON object: %v", out, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout %q holds more than one JSON object", out)
	}
	if !strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Fatalf("stdout %q is not an object", out)
	}
}

type storeOut struct {
	ID                  string `json:"id"`
	Object              string `json:"object"`
	Name                string `json:"name"`
	Currency            string `json:"currency"`
	Website             string `json:"website"`
	StatementDescriptor string `json:"statement_descriptor"`
	CreatedAt           int64  `json:"created_at"`
}

type keyOut struct {
	ID          string   `json:"id"`
	Object      string   `json:"object"`
	StoreID     string   `json:"store_id"`
	Mode        string   `json:"mode"`
	Type        string   `json:"type"`
	Permissions []string `json:"permissions"`
	Secret      string   `json:"secret"`
	SecretHint  string   `json:"secret_hint"`
	RevokedAt   *int64   `json:"revoked_at"`
	Name        string   `json:"name"`
	LastUsedAt  *int64   `json:"last_used_at"`
}

func createStore(t *testing.T, e vars, flags []string, args ...string) storeOut {
	t.Helper()
	out := mustCLI(t, e, append(append([]string{"stores", "create", "--json"}, flags...), args...)...)
	var s storeOut
	decodeOne(t, out, &s)
	return s
}

func createKey(t *testing.T, e vars, flags []string, args ...string) keyOut {
	t.Helper()
	out := mustCLI(t, e, append(append([]string{"keys", "create", "--json"}, flags...), args...)...)
	var k keyOut
	decodeOne(t, out, &k)
	return k
}

var (
	uuidV4      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	keyID       = regexp.MustCompile(`^key_[0-9a-f]{32}$`)
	testSecret  = regexp.MustCompile(`^ck_test_sk_[0-9A-Za-z]{43}$`)
	liveSecret  = regexp.MustCompile(`^ck_live_sk_[0-9A-Za-z]{43}$`)
	anySecretRe = regexp.MustCompile(`ck_(test|live)_[sh]k_[0-9A-Za-z]{10,}`)
)

func TestStoresCreate(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme Games", "--currency", "usd", "--website", "https://acme.example")
		if !uuidV4.MatchString(s.ID) {
			t.Errorf("stores create: id %q; want a uuid v4", s.ID)
		}
		want := storeOut{ID: s.ID, Object: "store", Name: "Acme Games", Currency: "USD", Website: "https://acme.example",
			StatementDescriptor: "ACME GAMES", CreatedAt: s.CreatedAt}
		if s != want || s.CreatedAt == 0 {
			t.Errorf("stores create = %+v; want %+v", s, want)
		}
		m, err := db.open(t).MerchantGet(context.Background(), s.ID)
		if err != nil || m.Name != "Acme Games" {
			t.Errorf("the store in the database = %+v, %v", m, err)
		}

		// Without --json: a human form, naming the id.
		out := mustCLI(t, vars{}, append([]string{"stores", "create", "--name", "Second", "--currency", "EUR"}, db.flags...)...)
		if !strings.Contains(out, "id:") || !strings.Contains(out, "EUR") || strings.HasPrefix(out, "{") {
			t.Errorf("stores create without --json printed %q", out)
		}

		out = mustCLI(t, vars{}, append([]string{"stores", "list", "--json"}, db.flags...)...)
		var list struct {
			Object string     `json:"object"`
			Data   []storeOut `json:"data"`
		}
		decodeOne(t, out, &list)
		// Both were made in the same second: the order between them is not
		// defined (oldest first, by whole seconds).
		if list.Object != "list" || len(list.Data) != 2 || (list.Data[0] != s && list.Data[1] != s) {
			t.Errorf("stores list --json = %s; want the two stores, one of them %+v", out, s)
		}
	})
}

func TestStoresCreateInvalid(t *testing.T) {
	db := newDatabase(t, "sqlite")
	tests := []struct {
		args []string
		want []string // each must be in the error
	}{
		{[]string{"--name", "Acme", "--currency", "dollars"}, []string{"currency", "ISO 4217"}},
		{[]string{"--name", "Acme", "--currency", "XYZ"}, []string{"currency"}},
		{[]string{"--currency", "USD"}, []string{"name"}},
		{[]string{"--name", "  ", "--currency", "USD"}, []string{"name"}},
		{[]string{}, []string{"name", "currency"}},
		{[]string{"--name", "Acme", "--currency", "USD", "--website", "http://acme.example"}, []string{"website", "https"}},
		{[]string{"--name", "Acme", "--currency", "USD", "--statement-descriptor", "ab"}, []string{"statement_descriptor"}},
	}
	for _, tt := range tests {
		args := append(append([]string{"stores", "create", "--json"}, db.flags...), tt.args...)
		out, _, err := cli(t, vars{}, args...)
		if err == nil {
			t.Errorf("checkoutd %s = nil; want an error", strings.Join(tt.args, " "))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("checkoutd stores create %s = %q; want it to name %q", strings.Join(tt.args, " "), err, w)
			}
		}
		if strings.Contains(err.Error(), "see details") {
			t.Errorf("error %q points at details a command line does not show", err)
		}
		if exitCode(err) != 1 {
			t.Errorf("exit code %d; want 1 (not a usage error)", exitCode(err))
		}
		if out != "" {
			t.Errorf("stdout %q on failure; want nothing", out)
		}
	}
	list := mustCLI(t, vars{}, append([]string{"stores", "list", "--json"}, db.flags...)...)
	if strings.TrimSpace(list) != `{"object":"list","data":[]}` {
		t.Errorf("after failed creates, stores list = %s; want none", list)
	}
}

func TestKeys(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		k := createKey(t, vars{}, db.flags, "--store", s.ID)
		if !keyID.MatchString(k.ID) || !testSecret.MatchString(k.Secret) {
			t.Errorf("keys create = id %q, secret %q; want key_ and 32 hex, ck_test_sk_ and 43 base62", k.ID, k.Secret)
		}
		if k.StoreID != s.ID || k.Mode != "test" || k.Type != "bearer" || strings.Join(k.Permissions, ",") != "checkouts:write" ||
			k.SecretHint != "..."+k.Secret[len(k.Secret)-4:] || k.RevokedAt != nil || k.Object != "api_key" {
			t.Errorf("keys create = %+v", k)
		}
		if k.Name != "" || k.LastUsedAt != nil {
			t.Errorf("keys create without --name = name %q, last used %v; want neither", k.Name, k.LastUsedAt)
		}
		live := createKey(t, vars{}, db.flags, "--store", s.ID, "--mode", "live", "--permissions", "checkouts:read", "--name", " Shop server ")
		if live.Name != "Shop server" {
			t.Errorf("keys create --name = name %q; want Shop server, trimmed", live.Name)
		}
		if !liveSecret.MatchString(live.Secret) || strings.Join(live.Permissions, ",") != "checkouts:read" {
			t.Errorf("keys create --mode live = %+v; want a ck_live_sk_ secret, read only", live)
		}
		if k.Secret == live.Secret || k.ID == live.ID {
			t.Errorf("two keys share an id or secret")
		}

		// The secret authenticates, on a service over the same database.
		st := db.open(t)
		svc := service.New(service.Config{Store: st})
		ctx := context.Background()
		if got, err := svc.Authenticate(ctx, k.Secret); err != nil || got.ID != k.ID {
			t.Fatalf("Authenticate(created secret) = %v, %v", got, err)
		}

		// keys list never shows a secret.
		out := mustCLI(t, vars{}, append([]string{"keys", "list", "--json", "--store", s.ID}, db.flags...)...)
		var list struct {
			Object string   `json:"object"`
			Data   []keyOut `json:"data"`
		}
		decodeOne(t, out, &list)
		listed := map[string]bool{}
		for _, l := range list.Data {
			listed[l.ID] = true
		}
		if len(list.Data) != 2 || !listed[k.ID] || !listed[live.ID] {
			t.Errorf("keys list = %s; want both keys", out)
		}
		if strings.Contains(out, k.Secret) || strings.Contains(out, live.Secret) || strings.Contains(out, `"secret"`) || anySecretRe.MatchString(out) {
			t.Errorf("keys list --json shows a secret: %s", out)
		}
		human := mustCLI(t, vars{}, append([]string{"keys", "list", "--store", s.ID}, db.flags...)...)
		if strings.Contains(human, k.Secret) || anySecretRe.MatchString(human) || !strings.Contains(human, k.ID) || !strings.Contains(human, "Shop server") {
			t.Errorf("keys list shows a secret or misses a key: %s", human)
		}

		// Revoked, the key no longer authenticates.
		out = mustCLI(t, vars{}, append([]string{"keys", "revoke", k.ID, "--json"}, db.flags...)...)
		var revoked keyOut
		decodeOne(t, out, &revoked)
		if revoked.ID != k.ID || revoked.RevokedAt == nil || revoked.Secret != "" {
			t.Errorf("keys revoke = %s; want the key, revoked, without secret", out)
		}
		fresh := service.New(service.Config{Store: st})
		if _, err := fresh.Authenticate(ctx, k.Secret); !checkout.IsCode(err, checkout.EInvalidAPIKey) {
			t.Errorf("Authenticate(revoked secret) = %v; want invalid_api_key", err)
		}
		if _, err := fresh.Authenticate(ctx, live.Secret); err != nil {
			t.Errorf("Authenticate(the other key) = %v; revoking one key touched another", err)
		}
	})
}

func TestKeysInvalid(t *testing.T) {
	db := newDatabase(t, "sqlite")
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	k := createKey(t, vars{}, db.flags, "--store", s.ID)
	tests := []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"keys", "create", "--store", checkout.NewStoreID()}, "No such store", false},
		{[]string{"keys", "create"}, "store", false},
		{[]string{"keys", "create", "--store", "acme"}, "store", false},
		{[]string{"keys", "create", "--store", s.ID, "--mode", "prod"}, "mode", false},
		{[]string{"keys", "create", "--store", s.ID, "--permissions", "refunds:read"}, "refunds:read", false},
		{[]string{"keys", "create", "--store", s.ID, "--type", "oauth"}, "--type", true},
		{[]string{"keys", "create", "--store", s.ID, "--type", "hmac", "--secrets-key", "short"}, "--secrets-key", true}, // never stored in the clear
		{[]string{"keys", "list", "--store", checkout.NewStoreID()}, "No such store", false},
		{[]string{"keys", "revoke"}, "key id", true},
		{[]string{"keys", "revoke", k.ID, "key_other"}, "key id", true},
		{[]string{"keys", "revoke", checkout.NewAPIKeyID()}, "No such API key", false},
	}
	for _, tt := range tests {
		out, _, err := cli(t, vars{}, append(tt.args, db.flags...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkoutd %s = %v; want an error naming %q", strings.Join(tt.args, " "), err, tt.want)
			continue
		}
		if got := exitCode(err) == 2; got != tt.usage {
			t.Errorf("checkoutd %s: exit code %d; want usage error %v", strings.Join(tt.args, " "), exitCode(err), tt.usage)
		}
		if out != "" {
			t.Errorf("checkoutd %s printed %q on failure", strings.Join(tt.args, " "), out)
		}
	}
}

// keys create describes the key types there are, and promises none.
func TestKeysCreateUsage(t *testing.T) {
	_, usage, _ := cli(t, vars{}, "keys", "create", "-h")
	if !strings.Contains(usage, "-type") || !strings.Contains(usage, "bearer") {
		t.Fatalf("keys create -h = %q; want --type and bearer described", usage)
	}
	for _, promise := range []string{"later", "arrives", "future", "coming", "not yet"} {
		if strings.Contains(usage, promise) {
			t.Errorf("keys create -h says %q: describe what exists\n%s", promise, usage)
		}
	}
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string // in the error
	}{
		{nil, "no command"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"--data-dir", dir}, "unknown command"},
		{[]string{"stores"}, "needs a subcommand: create crypto dispute-fee list"},
		{[]string{"stores", "bogus"}, `no subcommand "bogus"`},
		{[]string{"keys"}, "needs a subcommand: create list revoke"},
		{[]string{"keys", "frob"}, `no subcommand "frob"`},
		{[]string{"accounts"}, "needs a subcommand: create"},
		{[]string{"members"}, "needs a subcommand: add"},
		{[]string{"stores", "create", "--nope", "--data-dir", dir}, "flag provided but not defined: -nope"},
		{[]string{"migrate", "--database"}, "flag needs an argument"},
		{[]string{"serve", "extra", "--data-dir", dir}, "serve takes no arguments"},
		{[]string{"serve", "--rate-limit", "-1", "--data-dir", dir}, "--rate-limit"},
		{[]string{"serve", "--auth-failure-limit", "-1", "--data-dir", dir}, "--auth-failure-limit"},
		{[]string{"serve", "--base-url", "ftp://x", "--data-dir", dir}, "--base-url"},
		{[]string{"serve", "--log-format", "xml", "--data-dir", dir}, "--log-format"},
		{[]string{"serve", "--expiry-interval", "0s", "--data-dir", dir}, "--expiry-interval"},
	}
	for _, tt := range tests {
		_, _, err := cli(t, vars{}, tt.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkoutd %s = %v; want a usage error containing %q", strings.Join(tt.args, " "), err, tt.want)
		}
		if exitCode(err) != 2 {
			t.Errorf("checkoutd %s: exit code %d; want 2", strings.Join(tt.args, " "), exitCode(err))
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		out, _, err := cli(t, vars{}, args...)
		if err != nil || !strings.Contains(out, "usage: checkoutd") || !strings.Contains(out, "serve") {
			t.Errorf("checkoutd %s = %v, %q; want the usage on stdout", args[0], err, out)
		}
	}
	_, errOut, _ := cli(t, vars{}, "bogus")
	if !strings.Contains(errOut, "usage: checkoutd") {
		t.Errorf("an unknown command printed %q on stderr; want the usage", errOut)
	}
	_, _, err := cli(t, vars{}, "stores", "create", "-h")
	if !errors.Is(err, flag.ErrHelp) || exitCode(err) != 2 {
		t.Errorf("stores create -h = %v; want flag.ErrHelp", err)
	}
	// None of it made a database in the working directory.
	if _, err := os.Stat("checkoutd-data"); err == nil {
		t.Errorf("a command created ./checkoutd-data")
	}
}

// CHECKOUTD_DATA_DIR and CHECKOUTD_DATABASE are read through getenv, and a
// flag on the command line wins over its variable.
func TestEnvironment(t *testing.T) {
	dirEnv, dirFlag := t.TempDir(), t.TempDir()
	dbFile := func(dir string) string { return filepath.Join(dir, "checkoutd.db") }
	exists := func(path string) bool { _, err := os.Stat(path); return err == nil }

	s := createStore(t, vars{"CHECKOUTD_DATA_DIR": dirEnv}, nil, "--name", "Env", "--currency", "USD")
	if !exists(dbFile(dirEnv)) {
		t.Fatalf("CHECKOUTD_DATA_DIR=%s: no database there", dirEnv)
	}
	out := mustCLI(t, vars{}, "stores", "list", "--json", "--data-dir", dirEnv)
	if !strings.Contains(out, s.ID) {
		t.Errorf("the store made under CHECKOUTD_DATA_DIR is not in its directory: %s", out)
	}

	createStore(t, vars{"CHECKOUTD_DATA_DIR": dirEnv}, []string{"--data-dir", dirFlag}, "--name", "Flag", "--currency", "USD")
	if !exists(dbFile(dirFlag)) {
		t.Errorf("--data-dir did not win over CHECKOUTD_DATA_DIR")
	}
	if out := mustCLI(t, vars{}, "stores", "list", "--json", "--data-dir", dirEnv); strings.Contains(out, "Flag") {
		t.Errorf("--data-dir lost to CHECKOUTD_DATA_DIR: %s", out)
	}

	// CHECKOUTD_DATABASE beats the data directory; --database beats both.
	fileEnv := filepath.Join(t.TempDir(), "env.db")
	fileFlag := filepath.Join(t.TempDir(), "flag.db")
	createStore(t, vars{"CHECKOUTD_DATABASE": fileEnv, "CHECKOUTD_DATA_DIR": dirEnv}, nil, "--name", "DBEnv", "--currency", "USD")
	if !exists(fileEnv) {
		t.Errorf("CHECKOUTD_DATABASE=%s: no database there", fileEnv)
	}
	createStore(t, vars{"CHECKOUTD_DATABASE": fileEnv}, []string{"--database", "sqlite:" + fileFlag}, "--name", "DBFlag", "--currency", "USD")
	if !exists(fileFlag) {
		t.Errorf("--database did not win over CHECKOUTD_DATABASE")
	}
	if out := mustCLI(t, vars{}, "stores", "list", "--json", "--database", fileEnv); !strings.Contains(out, "DBEnv") || strings.Contains(out, "DBFlag") {
		t.Errorf("stores in %s: %s; want DBEnv only", fileEnv, out)
	}

	// CHECKOUTD_DATABASE as a PostgreSQL URL.
	url := storetest.PostgresURL(t)
	pg := createStore(t, vars{"CHECKOUTD_DATABASE": url, "CHECKOUTD_DATA_DIR": dirEnv}, nil, "--name", "PG", "--currency", "USD")
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MerchantGet(context.Background(), pg.ID); err != nil {
		t.Errorf("CHECKOUTD_DATABASE=postgres://...: the store is not in PostgreSQL: %v", err)
	}

	// Booleans too: CHECKOUTD_JSON=true is --json.
	out = mustCLI(t, vars{"CHECKOUTD_JSON": "true"}, "stores", "list", "--data-dir", dirEnv)
	var list map[string]any
	decodeOne(t, out, &list)

	// A malformed variable is a usage error naming it.
	_, _, err = cli(t, vars{"CHECKOUTD_JSON": "maybe"}, "stores", "list", "--data-dir", dirEnv)
	if exitCode(err) != 2 || !strings.Contains(fmtErr(err), "CHECKOUTD_JSON") {
		t.Errorf("CHECKOUTD_JSON=maybe: %v; want a usage error naming the variable", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestMigrate(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		for range 2 {
			out := mustCLI(t, vars{}, append([]string{"migrate"}, db.flags...)...)
			if !strings.Contains(out, "is up to date") {
				t.Errorf("migrate printed %q", out)
			}
			if db.name == "postgres" && !strings.Contains(out, "PostgreSQL") {
				t.Errorf("migrate on PostgreSQL printed %q", out)
			}
		}
		st := db.open(t)
		if n, err := st.Migrate(context.Background()); n != 0 || err != nil {
			t.Errorf("Migrate after checkoutd migrate = %d, %v; want nothing left", n, err)
		}
	})
	// A password in the URL is never printed.
	_, _, err := cli(t, vars{}, "migrate", "--database", "postgres://user:hunter2@127.0.0.1:1/x?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("migrate with an unreachable URL = %v; want an error without the password", err)
	}
}

// TestStoreIDIsV4 checks the uuid of stores create bit by bit.
func TestStoreIDIsV4(t *testing.T) {
	db := newDatabase(t, "sqlite")
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	b, err := hex.DecodeString(strings.ReplaceAll(s.ID, "-", ""))
	if err != nil || len(b) != 16 || b[6]>>4 != 4 || b[8]&0xc0 != 0x80 {
		t.Errorf("store id %q is not a version 4 uuid", s.ID)
	}
}
