package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/acquirertest"
	"github.com/checkoutd/checkoutd/internal/service"
)

// seedStripeAccount sets up a store's Stripe account as the operator,
// through the service and a stand-in acquirer, sealed with the CLI tests'
// secrets key.
func seedStripeAccount(t *testing.T, db database, storeID string) {
	t.Helper()
	svc := service.New(service.Config{Store: db.open(t), SecretsKey: mustSecretsKey(t), Actor: checkout.Actor{Kind: checkout.ActorCLI, Name: "root"},
		Acquirers: []pay.AcquirerConnector{&acquirertest.Connector{}}})
	_, err := svc.SetAcquirerAccount(context.Background(), service.AcquirerAccountParams{MerchantID: storeID, Mode: checkout.ModeLive, Acquirer: "stripe",
		SecretKey: acquirertest.LiveSecretKey, PublishableKey: acquirertest.PublishableKey, WebhookSecret: acquirertest.OldWebhook})
	if err != nil {
		t.Fatal(err)
	}
}

// writeSecret writes a secret into a file of the test's, as an operator
// would, and returns its path.
func writeSecret(t *testing.T, name, secret string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stores stripe show prints a store's Stripe account with the secrets'
// hints, never a secret; remove deletes it.
func TestStoresStripeShowRemove(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		st := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		if _, _, err := cli(t, vars{}, append([]string{"stores", "stripe", "show", st.ID}, db.flags...)...); checkout.ErrorCode(err) != checkout.ENotFound {
			t.Errorf("show before any account = %v; want not_found", err)
		}
		seedStripeAccount(t, db, st.ID)
		out := mustCLI(t, vars{}, append([]string{"stores", "stripe", "show", st.ID, "--json"}, db.flags...)...)
		var got acquirerAccountJSON
		decodeOne(t, out, &got)
		if got.Object != "acquirer_account" || got.StoreID != st.ID || got.AccountID != acquirertest.AccountID(acquirertest.LiveSecretKey) ||
			got.PublishableKey != acquirertest.PublishableKey || got.SecretKeyHint != "LIVE" || got.WebhookSecretHint != "9OLD" || got.Mode != "live" ||
			got.SetBy != "cli root" || len(got.Warnings) != 1 || !strings.HasSuffix(got.WebhookURL, "/webhooks/stripe/"+st.ID) {
			t.Errorf("show --json = %+v", got)
		}
		human := mustCLI(t, vars{}, append([]string{"stores", "stripe", "show", st.ID}, db.flags...)...)
		for _, want := range []string{"...LIVE", "...9OLD", "warning:", got.AccountID} {
			if !strings.Contains(human, want) {
				t.Errorf("show has no %q:\n%s", want, human)
			}
		}
		for _, s := range []string{out, human} {
			if strings.Contains(s, acquirertest.LiveSecretKey) || strings.Contains(s, acquirertest.OldWebhook) {
				t.Errorf("show prints a secret:\n%s", s)
			}
		}
		out = mustCLI(t, vars{}, append([]string{"stores", "stripe", "remove", st.ID, "--json"}, db.flags...)...)
		var removed map[string]any
		decodeOne(t, out, &removed)
		if removed["removed"] != true || removed["store_id"] != st.ID {
			t.Errorf("remove --json = %v", removed)
		}
		if _, _, err := cli(t, vars{}, append([]string{"stores", "stripe", "remove", st.ID}, db.flags...)...); checkout.ErrorCode(err) != checkout.ENotFound {
			t.Errorf("remove again = %v; want not_found", err)
		}
	})
}

// stores stripe set takes the secrets from files or standard input, never
// from the command line, and says what is missing before it opens the
// database; on PostgreSQL it needs the secrets key. No error repeats a
// secret.
func TestStoresStripeSetUsage(t *testing.T) {
	db := newDatabase(t, "sqlite")
	st := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	sk := writeSecret(t, "sk", acquirertest.LiveSecretKey)
	wh := writeSecret(t, "wh", acquirertest.WebhookSecret)
	empty := writeSecret(t, "empty", "  ")
	set := func(stdin string, args ...string) error {
		t.Helper()
		_, _, err := cliIn(t, vars{}, stdin, append(append([]string{"stores", "stripe", "set", st.ID}, args...), db.flags...)...)
		if err != nil && (strings.Contains(err.Error(), acquirertest.LiveSecretKey) || strings.Contains(err.Error(), acquirertest.WebhookSecret)) {
			t.Errorf("the error repeats a secret: %v", err)
		}
		return err
	}
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"no flags", "", nil, "the secrets come from files"},
		{"a key as a flag", "", []string{"--secret-key", acquirertest.LiveSecretKey}, "flag provided but not defined"},
		{"both from stdin", acquirertest.LiveSecretKey, []string{"--secret-key-file", "-", "--publishable-key", "pk_live_x", "--webhook-secret-file", "-"}, "only one"},
		{"no such file", "", []string{"--secret-key-file", sk + ".gone", "--publishable-key", "pk_live_x", "--webhook-secret-file", wh}, "--secret-key-file: open"},
		{"an empty file", "", []string{"--secret-key-file", sk, "--publishable-key", "pk_live_x", "--webhook-secret-file", empty}, "--webhook-secret-file: " + empty + " holds no secret"},
		{"empty stdin", "", []string{"--secret-key-file", "-", "--publishable-key", "pk_live_x", "--webhook-secret-file", wh}, "standard input holds no secret"},
	} {
		if err := set(tt.stdin, tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: set = %v; want %q", tt.name, err, tt.want)
		}
	}

	pg := newDatabase(t, "postgres")
	pgStore := createStore(t, vars{}, pg.flags, "--name", "Acme", "--currency", "USD")
	_, _, err := cliIn(t, vars{}, "", "stores", "stripe", "set", pgStore.ID, "--secret-key-file", sk, "--publishable-key", "pk_live_x", "--webhook-secret-file", wh, "--database", pg.flags[1])
	if err == nil || !strings.Contains(err.Error(), "--secrets-key or CHECKOUTD_SECRETS_KEY") {
		t.Errorf("set on PostgreSQL without a secrets key = %v; want it to say how to give one", err)
	}
}
