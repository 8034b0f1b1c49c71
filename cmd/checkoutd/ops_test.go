package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/seal"
)

// subcommandsOf lists a command group's subcommands, as its usage error
// names them, so that a subcommand added later is covered too.
func subcommandsOf(t *testing.T, group string) []string {
	t.Helper()
	_, _, err := cli(t, vars{}, strings.Fields(group)...)
	_, names, ok := strings.Cut(fmtErr(err), "needs a subcommand:")
	if !ok {
		t.Fatalf("checkoutd %s = %v; want the list of its subcommands", group, err)
	}
	return strings.Fields(names)
}

// Every administration subcommand, with --json, prints exactly one JSON
// object on stdout and nothing else.
func TestEveryAdminCommandPrintsOneJSONObject(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		ran := map[string]bool{}
		var ids struct{ store, key, endpoint, delivery string }
		oneIn := func(stdin string, args ...string) map[string]any {
			t.Helper()
			out, errOut, err := cliIn(t, vars{}, stdin, append(append(args, "--json"), db.flags...)...)
			if err != nil {
				t.Fatalf("checkoutd %s --json = %v\n%s", strings.Join(args, " "), err, errOut)
			}
			var v map[string]any
			decodeOne(t, out, &v)
			ran[args[0]+" "+args[1]] = true
			if len(args) > 2 {
				ran[args[0]+" "+args[1]+" "+args[2]] = true
			}
			return v
		}
		one := func(args ...string) map[string]any { t.Helper(); return oneIn("", args...) }
		id := func(v map[string]any) string { s, _ := v["id"].(string); return s }

		ids.store = id(one("stores", "create", "--name", "Acme", "--currency", "USD"))
		one("stores", "list")
		one("stores", "crypto", "set", "--store", ids.store, "--coin", "BTC", "--xpub",
			"zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs")
		one("stores", "crypto", "list", "--store", ids.store)
		one("stores", "crypto", "remove", "--store", ids.store, "--coin", "BTC")
		ran["stores stripe"], ran["stores stripe set"] = true, true
		decodeOne(t, setStripe(t, db, stripeFake(t), ids.store), &map[string]any{})
		one("stores", "stripe", "show", ids.store)
		one("stores", "stripe", "remove", ids.store)
		ids.key = id(one("keys", "create", "--store", ids.store))
		one("keys", "list", "--store", ids.store)
		one("keys", "revoke", ids.key)
		ids.endpoint = id(one("webhooks", "create", "--store", ids.store, "--url", "https://127.0.0.1:8443/hook", "--webhook-allow-cidr", "127.0.0.0/8"))
		one("webhooks", "list", "--store", ids.store)
		one("webhooks", "update", ids.endpoint, "--description", "Orders")
		one("webhooks", "roll-secret", ids.endpoint)
		ids.delivery = id(one("webhooks", "send-test", ids.endpoint))
		one("webhooks", "deliveries", "--endpoint", ids.endpoint)
		one("webhooks", "disable", ids.endpoint) // cancels the test delivery: it is finished
		one("webhooks", "enable", ids.endpoint)
		one("webhooks", "resend", ids.delivery)
		one("webhooks", "delete", ids.endpoint)
		oneIn(testPassword+"\n", "accounts", "create", "--email", "ann@example.com", "--password-stdin")
		one("members", "add", "--store", ids.store, "--email", "ann@example.com")
		oneIn(testPassword+"\n", "accounts", "create", "--email", "bob@example.com", "--password-stdin")
		one("members", "add", "--store", ids.store, "--email", "bob@example.com", "--role", "viewer")
		one("members", "list", "--store", ids.store)
		one("members", "role", "--store", ids.store, "--email", "bob@example.com", "--role", "support")
		one("members", "remove", "--store", ids.store, "--email", "bob@example.com")
		one("members", "invite", "--store", ids.store, "--email", "carl@example.com", "--role", "developer")
		one("stores", "dispute-fee", "--store", ids.store, "--fee", "2000")
		paid := paidPayment(t, db, "4242424242424242")
		one("payments", "get", paid)
		one("payments", "refund", paid, "--amount", "100")
		svc, cryptoPaid := paidCryptoPayment(t, db)
		payout := one("payments", "refund", cryptoPaid, "--amount", "500")
		link, _ := payout["crypto"].(map[string]any)["link_url"].(string)
		if _, err := svc.GiveRefundAddress(context.Background(), link[strings.LastIndex(link, "/")+1:], "tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7klfsuq0"); err != nil {
			t.Fatal(err)
		}
		one("payments", "simulate-payout", id(payout))
		one("payments", "cancel-refund", id(one("payments", "refund", cryptoPaid, "--amount", "100")))
		_, disputed := disputedPayment(t, db, "4000000000000259")
		one("disputes", "list", "--store", ids.store)
		one("disputes", "get", disputed)
		one("disputes", "answer", disputed, "--text", "winning_evidence")
		_, newKey := seal.Generate()
		one("secrets", "rotate", "--secrets-key", hex.EncodeToString(hmacSecretsKey), "--new-secrets-key", newKey)

		// Every change above left one audit entry, by the CLI's user: the
		// store's, in order (the list is newest first).
		trail := one("audit", "list", "--store", ids.store, "--limit", "100")["data"].([]any)
		var got []string
		for _, en := range trail {
			en := en.(map[string]any)
			actor := en["actor"].(map[string]any)
			if actor["type"] != "cli" || actor["name"] == "" || en["client_address"] != nil || en["user_agent"] != nil {
				t.Errorf("entry %v: want the CLI's user, from no address", en)
			}
			got = append([]string{en["action"].(string)}, got...)
		}
		want := []string{"store.create", "crypto_key.set", "crypto_key.remove", "acquirer_account.set", "acquirer_account.remove", "api_key.create", "api_key.revoke",
			"webhook_endpoint.create", "webhook_endpoint.update", "webhook_endpoint.secret_roll", "webhook_endpoint.test",
			"webhook_endpoint.disable", "webhook_endpoint.enable", "webhook_delivery.resend", "webhook_endpoint.delete",
			"member.add", "member.add", "member.role_change", "member.remove", "invitation.create", "store.dispute_fee"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("the store's audit trail:\n%v\nwant\n%v", got, want)
		}
		account := one("audit", "list", "--account")["data"].([]any)
		got = nil
		for _, en := range account {
			got = append([]string{en.(map[string]any)["action"].(string)}, got...)
		}
		if strings.Join(got, " ") != "account.create account.create secrets.rotate" {
			t.Errorf("the account-level trail = %v; want account.create twice (ann, bob), secrets.rotate", got)
		}
		st := db.open(t)
		for _, action := range []checkout.AuditAction{checkout.AuditRefundCreate, checkout.AuditRefundSimulatePayout, checkout.AuditRefundCancel, checkout.AuditDisputeAnswer} {
			n := 0
			ms, _ := st.MerchantList(context.Background())
			for _, m := range ms {
				es, err := st.AuditList(context.Background(), checkout.AuditListParams{MerchantID: m.ID, Action: action})
				if err != nil {
					t.Fatal(err)
				}
				for _, en := range es {
					if en.Actor.Kind == checkout.ActorCLI {
						n++
					}
				}
			}
			want := 1
			if action == checkout.AuditRefundCreate {
				want = 3 // a card refund and two crypto ones
			}
			if n != want {
				t.Errorf("%d %s entries by the CLI; want %d", n, action, want)
			}
		}

		for _, group := range []string{"stores", "keys", "webhooks", "accounts", "members", "stores crypto", "stores stripe", "payments", "disputes", "secrets", "audit"} {
			for _, sub := range subcommandsOf(t, group) {
				if (sub == "crypto" || sub == "stripe") && group == "stores" {
					continue // a group of its own, covered below
				}
				if !ran[group+" "+sub] {
					t.Errorf("checkoutd %s %s --json is not covered here", group, sub)
				}
			}
		}
	})
}

// main reports an error on one line, with any secret in it redacted: a
// secret given where a key id belongs never reaches the error line, and an
// error that echoes one (as "no such key: <id>" errors do) is redacted.
func TestErrorLineRedactsSecrets(t *testing.T) {
	db := newDatabase(t, "sqlite")
	secret := "ck_live_sk_" + strings.Repeat("A", 43)
	_, _, err := cli(t, vars{}, append([]string{"keys", "revoke", secret}, db.flags...)...)
	if err == nil {
		t.Fatal("keys revoke <a secret> = nil")
	}
	if line := errorLine(err); strings.Contains(line, "ck_live_sk_") || !strings.HasPrefix(line, "checkoutd: ") {
		t.Errorf("errorLine = %q; want one line without the secret", line)
	}
	echoed := checkout.Errorf(checkout.ENotFound, "No such API key: %s.", secret)
	if line := errorLine(echoed); strings.Contains(line, "ck_live_sk_") || !strings.Contains(line, "[redacted]") || !strings.HasPrefix(line, "checkoutd: ") {
		t.Errorf("errorLine of an error echoing a secret = %q; want the secret redacted", line)
	}
}

// serve's configuration: every flag can come from CHECKOUTD_<FLAG>, the
// command line wins, and the defaults are those of the documentation.
func TestServeConfigFromEnvironment(t *testing.T) {
	defaults, err := parseServeConfig(env{getenv: vars{"HOME": "/home/u"}.getenv, stdout: os.Stdout, stderr: os.Stderr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := serveConfig{
		db:   dbFlags{dataDir: "/home/u/.local/share/checkoutd"},
		addr: "127.0.0.1:8080", rateLimit: 100, rateBurst: 200, authFailureLimit: 20, expiryInterval: 2 * time.Second, purgeInterval: time.Hour,
		paymentsInterval: 2 * time.Second, shutdownTimeout: 30 * time.Second, failoverBudget: time.Minute, logFormat: "text", logLevel: "info", webhookWorkers: 32, webhookPerHost: 4,
		webhookLease: 60 * time.Second,
		crypto: cryptoFlags{btc: nodeFlags{wallet: "checkoutd", network: "main", confirmations: 2}, ltc: nodeFlags{wallet: "checkoutd", network: "main", confirmations: 6},
			ethConfirmations: 4, ratesTTL: time.Minute, ratesMaxAge: 5 * time.Minute, scanInterval: 5 * time.Second},
		acquirers: acquirerFlags{stripeAPIURL: "https://api.stripe.com"},
	}
	if !reflect.DeepEqual(*defaults, want) {
		t.Errorf("defaults = %+v; want %+v", *defaults, want)
	}

	environment := vars{
		"CHECKOUTD_DATABASE": "postgres://db/x", "CHECKOUTD_DATA_DIR": "/data", "CHECKOUTD_ADDR": ":9000",
		"CHECKOUTD_BASE_URL": "https://api.example.com", "CHECKOUTD_CHECKOUT_BASE_URL": "https://pay.example.com/",
		"CHECKOUTD_RATE_LIMIT": "5.5", "CHECKOUTD_RATE_BURST": "7", "CHECKOUTD_EXPIRY_INTERVAL": "3s",
		"CHECKOUTD_PURGE_INTERVAL": "2h", "CHECKOUTD_PAYMENTS_INTERVAL": "4s", "CHECKOUTD_SHUTDOWN_TIMEOUT": "9s", "CHECKOUTD_LOG_FORMAT": "json",
		"CHECKOUTD_LOG_LEVEL": "debug", "CHECKOUTD_METRICS_ADDR": "127.0.0.1:9090", "CHECKOUTD_WEBHOOK_ALLOW_CIDR": "10.0.0.0/8",
		"CHECKOUTD_WEBHOOK_CA_FILE": "/ca.pem", "CHECKOUTD_WEBHOOK_WORKERS": "3", "CHECKOUTD_WEBHOOK_PER_ENDPOINT": "2",
		"CHECKOUTD_WEBHOOK_LEASE": "20s", "CHECKOUTD_AUTH_FAILURE_LIMIT": "6", "CHECKOUTD_DATABASE_FAILOVER_BUDGET": "90s",
		"CHECKOUTD_SECRETS_KEY": base64.StdEncoding.EncodeToString(hmacSecretsKey),
		"CHECKOUTD_BTC_RPC_URL": "http://btc:8332", "CHECKOUTD_BTC_RPC_USER": "b", "CHECKOUTD_BTC_RPC_PASSWORD": "bp",
		"CHECKOUTD_BTC_WALLET": "shop", "CHECKOUTD_BTC_NETWORK": "test", "CHECKOUTD_BTC_CONFIRMATIONS": "3",
		"CHECKOUTD_LTC_RPC_URL": "http://ltc:9332", "CHECKOUTD_LTC_RPC_USER": "l", "CHECKOUTD_LTC_RPC_PASSWORD": "lp",
		"CHECKOUTD_LTC_WALLET": "shop-ltc", "CHECKOUTD_LTC_NETWORK": "regtest", "CHECKOUTD_LTC_CONFIRMATIONS": "4",
		"CHECKOUTD_ETH_RPC_URL": "http://eth:8545", "CHECKOUTD_ETH_CONFIRMATIONS": "5",
		"CHECKOUTD_CRYPTO_RATES": "LTC/USD=85.12", "CHECKOUTD_CRYPTO_RATES_URL": "https://rates.example",
		"CHECKOUTD_CRYPTO_RATES_TTL": "30s", "CHECKOUTD_CRYPTO_RATES_MAX_AGE": "2m", "CHECKOUTD_CRYPTO_SCAN_INTERVAL": "1s",
		"CHECKOUTD_STRIPE_API_URL": "http://127.0.0.1:12111", "CHECKOUTD_STRIPE_ALLOW_TEST_KEYS": "true",
	}
	got, err := parseServeConfig(env{getenv: environment.getenv, stdout: os.Stdout, stderr: os.Stderr}, []string{"--addr", ":7000", "--rate-burst", "8"})
	if err != nil {
		t.Fatal(err)
	}
	want = serveConfig{
		db: dbFlags{database: "postgres://db/x", dataDir: "/data"}, addr: ":7000",
		baseURL: "https://api.example.com", checkoutBaseURL: "https://pay.example.com",
		rateLimit: 5.5, rateBurst: 8, authFailureLimit: 6, expiryInterval: 3 * time.Second, purgeInterval: 2 * time.Hour, paymentsInterval: 4 * time.Second,
		shutdownTimeout: 9 * time.Second, failoverBudget: 90 * time.Second, logFormat: "json", logLevel: "debug", metricsAddr: "127.0.0.1:9090",
		webhook: webhookFlags{allowCIDR: "10.0.0.0/8", caFile: "/ca.pem"}, webhookWorkers: 3, webhookPerHost: 2,
		webhookLease: 20 * time.Second,
		secrets:      secretsKeyFlag{text: environment["CHECKOUTD_SECRETS_KEY"]},
		crypto: cryptoFlags{
			btc:    nodeFlags{url: "http://btc:8332", user: "b", password: "bp", wallet: "shop", network: "test", confirmations: 3},
			ltc:    nodeFlags{url: "http://ltc:9332", user: "l", password: "lp", wallet: "shop-ltc", network: "regtest", confirmations: 4},
			ethURL: "http://eth:8545", ethConfirmations: 5, rates: "LTC/USD=85.12", ratesURL: "https://rates.example",
			ratesTTL: 30 * time.Second, ratesMaxAge: 2 * time.Minute, scanInterval: time.Second,
		},
		acquirers: acquirerFlags{stripeAPIURL: "http://127.0.0.1:12111", stripeTestKeys: true},
	}
	if got.secretsKey == nil || got.secretsKey.ID() != mustSecretsKey(t).ID() {
		t.Errorf("secrets key from the environment = %v; want %v", got.secretsKey, mustSecretsKey(t))
	}
	got.secretsKey = nil // compared by id above
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("from the environment = %+v; want %+v", *got, want)
	}
	// Every flag of serve (as serve -h lists them) was set above: a flag
	// added without a variable here fails this.
	_, usage, _ := cli(t, vars{}, "serve", "-h")
	flags := regexp.MustCompile(`(?m)^  -([a-z-]+)`).FindAllStringSubmatch(usage, -1)
	if len(flags) < 10 {
		t.Fatalf("serve -h lists %d flags:\n%s", len(flags), usage)
	}
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flags {
		if _, ok := environment[envName(f[1])]; !ok {
			t.Errorf("serve flag --%s is not covered by this test (%s)", f[1], envName(f[1]))
		}
		if !strings.Contains(string(doc), "| `--"+f[1]+"` |") {
			t.Errorf("serve flag --%s is not in the configuration table of docs/operations.md", f[1])
		}
	}
}

// The first start announces where the data lives; later starts do not
// claim to have created it.
func TestServeAnnouncesNewDataDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db := database{name: "sqlite", flags: []string{"--data-dir", dir}}
	_, logs, stop := startServe(t, db)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "created a new SQLite database") || !strings.Contains(logs.String(), `"data_dir":"`+dir+`"`) {
		t.Errorf("first start did not announce the data directory %s; log:\n%s", dir, logs)
	}
	if _, err := os.Stat(filepath.Join(dir, "checkoutd.db")); err != nil {
		t.Errorf("no database in the data directory: %v", err)
	}
	_, logs, _ = startServe(t, db)
	if strings.Contains(logs.String(), "created a new") {
		t.Errorf("second start announced a new database; log:\n%s", logs)
	}
	if !strings.Contains(logs.String(), filepath.Join(dir, "checkoutd.db")) {
		t.Errorf("second start did not name its database; log:\n%s", logs)
	}
}

// --database-failover-budget is at least a second: less would fail writes
// before a failover could end.
func TestServeFailoverBudgetBound(t *testing.T) {
	e := env{getenv: vars{"HOME": "/home/u"}.getenv, stdout: os.Stdout, stderr: os.Stderr}
	if _, err := parseServeConfig(e, []string{"--database-failover-budget", "999ms"}); err == nil || !strings.Contains(err.Error(), "--database-failover-budget must be at least 1s") {
		t.Errorf("a budget of 999ms = %v; want refused", err)
	}
	if c, err := parseServeConfig(e, []string{"--database-failover-budget", "1s"}); err != nil || c.failoverBudget != time.Second {
		t.Errorf("a budget of 1s = %v; want accepted", err)
	}
}
