package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/pay/stripepay"
	"github.com/checkoutd/checkoutd/internal/service"
)

// Card acquirers (docs/payments.md, Stripe): live card payments go through
// each store's own account at an acquirer, set up by
// `checkoutd stores stripe set` or in the dashboard.

// acquirerFlags say where the acquirers' APIs are: their real addresses
// unless a test points them at a fake.
type acquirerFlags struct {
	stripeAPIURL   string
	stripeTestKeys bool
}

func (f *acquirerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.stripeAPIURL, "stripe-api-url", defaultStripeAPIURL, "Stripe's API address; change it only to test against a fake of Stripe")
	fs.BoolVar(&f.stripeTestKeys, "stripe-allow-test-keys", false, "accept Stripe test-mode keys (sk_test_) as stores' live keys, for a merchant's run of the manual checklist against Stripe's test mode (docs/payments.md); never in production")
}

// defaultStripeAPIURL is Stripe's API.
const defaultStripeAPIURL = "https://api.stripe.com"

// connectors returns the acquirers stores can set up their accounts at.
func (f *acquirerFlags) connectors() []pay.AcquirerConnector {
	return []pay.AcquirerConnector{stripepay.New(stripepay.Config{URL: f.stripeAPIURL, AllowTestKeys: f.stripeTestKeys})}
}

// storesStripe manages stores' own Stripe accounts.
func storesStripe(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "stores stripe", args, map[string]func(context.Context, env, []string) error{
		"set":    storesStripeSet,
		"show":   storesStripeShow,
		"remove": storesStripeRemove,
	})
}

// stripeAcquirer is the acquirer's name as the service knows it.
const stripeAcquirer = "stripe"

// acquirerAccountJSON is a store's acquirer account as the commands print
// it: never a secret, the hints only.
type acquirerAccountJSON struct {
	Object            string   `json:"object"`
	StoreID           string   `json:"store_id"`
	Acquirer          string   `json:"acquirer"`
	Mode              string   `json:"mode"`
	AccountID         string   `json:"account_id"`
	PublishableKey    string   `json:"publishable_key"`
	SecretKeyHint     string   `json:"secret_key_hint"`
	WebhookSecretHint string   `json:"webhook_secret_hint"`
	WebhookURL        string   `json:"webhook_url"`
	Warnings          []string `json:"warnings"`
	SetBy             string   `json:"set_by"`
	SetAt             int64    `json:"set_at"`
}

func toAcquirerAccountJSON(storeID string, a *service.AcquirerAccountInfo) acquirerAccountJSON {
	ws := a.Warnings
	if ws == nil {
		ws = []string{}
	}
	return acquirerAccountJSON{Object: "acquirer_account", StoreID: storeID, Acquirer: a.Acquirer, Mode: string(a.Mode), AccountID: a.AccountID,
		PublishableKey: a.PublishableKey, SecretKeyHint: a.SecretKeyHint, WebhookSecretHint: a.WebhookSecretHint, WebhookURL: a.WebhookURL,
		Warnings: ws, SetBy: a.SetBy.String(), SetAt: a.SetAt.Unix()}
}

func printAcquirerAccount(w io.Writer, storeID string, a *service.AcquirerAccountInfo) {
	fmt.Fprintf(w, "store:\t%s\naccount:\t%s (%s, %s mode)\npublishable key:\t%s\nsecret key:\t...%s\nwebhook secret:\t...%s\nwebhook URL:\t%s\nset:\t%s by %s\n",
		storeID, a.AccountID, service.AcquirerTitle(a.Acquirer), a.Mode, a.PublishableKey, a.SecretKeyHint, a.WebhookSecretHint, a.WebhookURL,
		a.SetAt.UTC().Format(time.RFC3339), a.SetBy)
	for _, warning := range a.Warnings {
		fmt.Fprintf(w, "warning:\t%s\n", warning)
	}
}

func storesStripeSet(ctx context.Context, e env, args []string) error {
	const synopsis = "stores stripe set STORE_ID --secret-key-file FILE --publishable-key PK --webhook-secret-file FILE [--secrets-key KEY] [--json]"
	a := newAdmin(e, "stores stripe set", synopsis)
	var secretFile, publishable, webhookFile string
	a.fs.StringVar(&secretFile, "secret-key-file", "", "a file holding the account's live secret key (sk_live_... or a restricted rk_live_...), or - for standard input; never the key itself, which shell histories keep (required)")
	a.fs.StringVar(&publishable, "publishable-key", "", "the account's live publishable key, pk_live_... (not a secret; required)")
	a.fs.StringVar(&webhookFile, "webhook-secret-file", "", "a file holding the signing secret of the account's webhook endpoint (whsec_...), or - for standard input (required)")
	a.withSecretsKey()
	a.withAcquirers()
	var secretKey, webhookSecret string
	a.check = func([]string) error {
		if secretFile == "" || publishable == "" || webhookFile == "" {
			return usageError{"stores stripe set needs --secret-key-file, --publishable-key and --webhook-secret-file; the secrets come from files (or - for standard input), never from the command line:\n" +
				"  checkoutd stores stripe set STORE_ID --secret-key-file sk.txt --publishable-key pk_live_... --webhook-secret-file whsec.txt"}
		}
		if secretFile == "-" && webhookFile == "-" {
			return usageError{"only one of --secret-key-file and --webhook-secret-file can be - (standard input)"}
		}
		if a.secrets.text == "" && a.db.postgres() {
			return usageError{"stores stripe set needs the server's secrets key, which encrypts the Stripe secrets at rest: give --secrets-key or CHECKOUTD_SECRETS_KEY, the same as serve's (docs/operations.md)"}
		}
		a.makeSecretsKey = true
		var err error
		if secretKey, err = readSecretFile(e, "secret-key-file", secretFile); err != nil {
			return err
		}
		webhookSecret, err = readSecretFile(e, "webhook-secret-file", webhookFile)
		return err
	}
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, store string) error {
		info, err := svc.SetAcquirerAccount(ctx, service.AcquirerAccountParams{MerchantID: store, Mode: checkout.ModeLive, Acquirer: stripeAcquirer,
			SecretKey: secretKey, PublishableKey: publishable, WebhookSecret: webhookSecret})
		if err != nil {
			return acquirerFlagError(err)
		}
		return a.print(toAcquirerAccountJSON(store, info), func(w io.Writer) {
			printAcquirerAccount(w, store, info)
			fmt.Fprintf(w, "\nThe keys work. Stripe sends the store's events to its webhook endpoint: its URL must be %s (docs/payments.md).\n", info.WebhookURL)
		})
	})
}

func storesStripeShow(ctx context.Context, e env, args []string) error {
	const synopsis = "stores stripe show STORE_ID [--json]"
	a := newAdmin(e, "stores stripe show", synopsis)
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, store string) error {
		info, err := svc.AcquirerAccountOf(ctx, store, checkout.ModeLive, stripeAcquirer)
		if err != nil {
			return err
		}
		return a.print(toAcquirerAccountJSON(store, info), func(w io.Writer) { printAcquirerAccount(w, store, info) })
	})
}

func storesStripeRemove(ctx context.Context, e env, args []string) error {
	const synopsis = "stores stripe remove STORE_ID [--json]"
	a := newAdmin(e, "stores stripe remove", synopsis)
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, store string) error {
		if err := svc.RemoveAcquirerAccount(ctx, store, checkout.ModeLive, stripeAcquirer); err != nil {
			return err
		}
		return a.print(map[string]any{"object": "acquirer_account", "store_id": store, "acquirer": stripeAcquirer, "mode": "live", "removed": true}, func(w io.Writer) {
			fmt.Fprintf(w, "Removed the Stripe account of store %s: its live sessions no longer take cards through Stripe. Its keys are deleted here; roll them at Stripe if they may have leaked.\n", store)
		})
	})
}

// maxSecretFile bounds what is read of a secret's file: a key is some
// hundred characters, and a file given by mistake is not read whole.
const maxSecretFile = 4096

// readSecretFile reads a secret from the file path ("-": standard input):
// its first line, without surrounding white space. The errors name the
// flag and the file, never what the file holds.
func readSecretFile(e env, flagName, path string) (string, error) {
	var r io.Reader = e.stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", usageError{fmt.Sprintf("--%s: %v", flagName, err)}
		}
		defer f.Close()
		r = f
	}
	line, err := bufio.NewReader(io.LimitReader(r, maxSecretFile)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", usageError{fmt.Sprintf("--%s: %v", flagName, err)}
	}
	if line = strings.TrimSpace(line); line == "" {
		where := path
		if path == "-" {
			where = "standard input"
		}
		return "", usageError{fmt.Sprintf("--%s: %s holds no secret on its first line", flagName, where)}
	}
	return line, nil
}

// acquirerFlagNames name the flags of SetAcquirerAccount's fields.
var acquirerFlagNames = map[string]string{
	"secret_key": "--secret-key-file", "publishable_key": "--publishable-key", "webhook_secret": "--webhook-secret-file",
}

// acquirerFlagError says a refusal of SetAcquirerAccount with the flags of
// its fields.
func acquirerFlagError(err error) error {
	var ce *checkout.Error
	if !errors.As(err, &ce) || len(ce.Details) == 0 {
		return err
	}
	var parts []string
	for _, d := range ce.Details {
		if name := acquirerFlagNames[d.Param]; name != "" {
			parts = append(parts, name+": "+d.Message)
			continue
		}
		parts = append(parts, d.Message)
	}
	return &checkout.Error{Code: ce.Code, Message: strings.Join(parts, "; "), Param: ce.Param, Details: ce.Details}
}
