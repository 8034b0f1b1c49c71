package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay/stripefake"
)

// The keys of a Stripe account, as the fake (package stripefake) takes
// them.
const (
	cliStripeSecretKey   = "sk_live_51CheckoutdCLITestSecretKey0LIVE"
	cliStripePublishable = "pk_live_51CheckoutdCLITestPublishable0PUBL"
	cliStripeWebhook     = "whsec_Q2hlY2tvdXRkIENMSSB0ZXN0cyBzZWNyZXQ9OLD"
)

// stripeFake is a fake of Stripe's API with a webhook endpoint of an old
// API version, so that a check warns.
func stripeFake(t *testing.T) *stripefake.Fake {
	t.Helper()
	f := stripefake.New(t, stripefake.Options{})
	f.AddEndpoint(stripefake.Endpoint{URL: "https://pay.example.com/webhooks/stripe/any", APIVersion: "2024-06-20"})
	return f
}

// setStripe runs stores stripe set for a store with the keys above, from
// files, against fake, and returns its --json.
func setStripe(t *testing.T, db database, fake *stripefake.Fake, storeID string) string {
	t.Helper()
	args := []string{"stores", "stripe", "set", storeID, "--secret-key-file", writeSecret(t, "sk", cliStripeSecretKey),
		"--publishable-key", cliStripePublishable, "--webhook-secret-file", "-", "--stripe-api-url", fake.URL, "--json",
		"--secrets-key", hex.EncodeToString(hmacSecretsKey)}
	out, errOut, err := cliIn(t, vars{}, cliStripeWebhook+"\n", append(args, db.flags...)...)
	if err != nil {
		t.Fatalf("stores stripe set = %v\n%s", err, errOut)
	}
	return out
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

// stores stripe set checks the keys with Stripe and keeps them sealed;
// show prints the account with the secrets' hints and the check's
// warnings, never a secret; remove deletes it. Each prints one JSON object
// with --json.
func TestStoresStripe(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		st := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		if _, _, err := cli(t, vars{}, append([]string{"stores", "stripe", "show", st.ID}, db.flags...)...); checkout.ErrorCode(err) != checkout.ENotFound {
			t.Errorf("show before any account = %v; want not_found", err)
		}
		fake := stripeFake(t)
		var set acquirerAccountJSON
		decodeOne(t, setStripe(t, db, fake, st.ID), &set)
		if set.Object != "acquirer_account" || set.StoreID != st.ID || set.AccountID != stripefake.AccountID || set.Mode != "live" ||
			set.PublishableKey != cliStripePublishable || set.SecretKeyHint != "LIVE" || set.WebhookSecretHint != "9OLD" ||
			!strings.HasPrefix(set.SetBy, "cli ") || len(set.Warnings) != 1 || !strings.Contains(set.Warnings[0], "2024-06-20") ||
			!strings.HasSuffix(set.WebhookURL, "/webhooks/stripe/"+st.ID) {
			t.Errorf("set --json = %+v", set)
		}
		// Sealed at rest, with the secrets key given.
		row, err := db.open(t).AcquirerAccountGet(context.Background(), st.ID, checkout.ModeLive, "stripe")
		if err != nil || strings.Contains(fmt.Sprintf("%+v", row), "CheckoutdCLITestSecretKey") || strings.Contains(fmt.Sprintf("%+v", row), cliStripeWebhook) ||
			!strings.HasPrefix(row.SealedSecretKey, "v1."+mustSecretsKey(t).ID()+".") {
			t.Errorf("the stored account = %+v, %v; want its secrets sealed", row, err)
		}

		out := mustCLI(t, vars{}, append([]string{"stores", "stripe", "show", st.ID, "--json"}, db.flags...)...)
		var got acquirerAccountJSON
		decodeOne(t, out, &got)
		if !reflect.DeepEqual(got, set) {
			t.Errorf("show --json = %+v; want what set printed, %+v", got, set)
		}
		human := mustCLI(t, vars{}, append([]string{"stores", "stripe", "show", st.ID}, db.flags...)...)
		for _, want := range []string{"...LIVE", "...9OLD", "warning:", stripefake.AccountID, "/webhooks/stripe/" + st.ID} {
			if !strings.Contains(human, want) {
				t.Errorf("show has no %q:\n%s", want, human)
			}
		}
		for _, s := range []string{out, human} {
			if strings.Contains(s, cliStripeSecretKey) || strings.Contains(s, cliStripeWebhook) {
				t.Errorf("show prints a secret:\n%s", s)
			}
		}

		// A refused key: the flag named, nothing kept, no secret repeated.
		fake.RevokeKey("sk_live_51CheckoutdCLITestRolled000000000")
		_, _, err = cliIn(t, vars{}, cliStripeWebhook+"\n", append([]string{"stores", "stripe", "set", st.ID,
			"--secret-key-file", writeSecret(t, "rolled", "sk_live_51CheckoutdCLITestRolled000000000"), "--publishable-key", cliStripePublishable,
			"--webhook-secret-file", "-", "--stripe-api-url", fake.URL, "--secrets-key", hex.EncodeToString(hmacSecretsKey)}, db.flags...)...)
		if err == nil || !strings.Contains(err.Error(), "--secret-key-file: Stripe refused the secret key") || strings.Contains(err.Error(), "Rolled") {
			t.Errorf("set with a rolled key = %v; want the flag named, the key not repeated", err)
		}
		if again, _ := db.open(t).AcquirerAccountGet(context.Background(), st.ID, checkout.ModeLive, "stripe"); again == nil || again.SealedSecretKey != row.SealedSecretKey {
			t.Error("a refused set changed the account")
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
	sk := writeSecret(t, "sk", cliStripeSecretKey)
	wh := writeSecret(t, "wh", cliStripeWebhook)
	empty := writeSecret(t, "empty", "  ")
	set := func(stdin string, args ...string) error {
		t.Helper()
		_, _, err := cliIn(t, vars{}, stdin, append(append([]string{"stores", "stripe", "set", st.ID}, args...), db.flags...)...)
		if err != nil && (strings.Contains(err.Error(), cliStripeSecretKey) || strings.Contains(err.Error(), cliStripeWebhook)) {
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
		{"a key as a flag", "", []string{"--secret-key", cliStripeSecretKey}, "flag provided but not defined"},
		{"both from stdin", cliStripeSecretKey, []string{"--secret-key-file", "-", "--publishable-key", "pk_live_x", "--webhook-secret-file", "-"}, "only one"},
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
