package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

func TestWebhooksCommands(t *testing.T) {
	for name, newDB := range eventDatabases(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			var store struct{ ID string }
			cliJSON(t, &store, "stores", "create", "--database", db, "--name", "Acme Games", "--currency", "USD")
			allow := []string{"--webhook-allow-cidr", "127.0.0.0/8"}

			type endpoint struct {
				ID, Object, StoreID, Mode, URL, Secret string
				Events                                 []string
				Enabled                                bool
			}
			var ep endpoint
			cliJSON(t, &ep, append([]string{"webhooks", "create", "--database", db, "--store", store.ID, "--mode", "live",
				"--url", "https://127.0.0.1:8443/hook", "--events", "checkout.completed,payment.refunded"}, allow...)...)
			if !strings.HasPrefix(ep.ID, "we_") || ep.Object != "webhook_endpoint" || ep.Mode != "live" || !ep.Enabled ||
				!strings.HasPrefix(ep.Secret, "whsec_") || len(ep.Events) != 2 {
				t.Fatalf("webhooks create = %+v", ep)
			}

			var list struct{ Data []endpoint }
			out := cliOut(t, "webhooks", "list", "--database", db, "--store", store.ID, "--json")
			if strings.Contains(out, "whsec_") {
				t.Errorf("webhooks list printed a secret: %s", out)
			}
			cliJSON(t, &list, "webhooks", "list", "--database", db, "--store", store.ID)
			if len(list.Data) != 1 || list.Data[0].ID != ep.ID {
				t.Errorf("webhooks list = %+v", list.Data)
			}

			var rolled endpoint
			cliJSON(t, &rolled, "webhooks", "roll-secret", "--database", db, ep.ID)
			if rolled.Secret == ep.Secret || !strings.HasPrefix(rolled.Secret, "whsec_") {
				t.Errorf("roll-secret = %q; want a new whsec_ secret", rolled.Secret)
			}

			var delivery struct{ ID, Status, EventID string }
			cliJSON(t, &delivery, "webhooks", "send-test", "--database", db, ep.ID)
			if !strings.HasPrefix(delivery.ID, "whd_") || delivery.Status != "pending" {
				t.Errorf("send-test = %+v", delivery)
			}
			var disabled endpoint
			cliJSON(t, &disabled, "webhooks", "disable", "--database", db, ep.ID)
			if disabled.Enabled {
				t.Errorf("disable = %+v", disabled)
			}
			var ds struct {
				Data []struct{ ID, Status string }
			}
			cliJSON(t, &ds, "webhooks", "deliveries", "--database", db, "--endpoint", ep.ID)
			if len(ds.Data) != 1 || ds.Data[0].Status != "canceled" {
				t.Errorf("deliveries after disable = %+v; want the test delivery, canceled", ds.Data)
			}
			if err := runErr("webhooks", "resend", "--database", db, delivery.ID); err == nil {
				t.Error("resend to a disabled endpoint succeeded")
			}
			cliJSON(t, &disabled, "webhooks", "enable", "--database", db, ep.ID)
			var resent struct{ ID, EventID, Status string }
			cliJSON(t, &resent, "webhooks", "resend", "--database", db, delivery.ID)
			if resent.ID == delivery.ID || resent.EventID != delivery.EventID || resent.Status != "pending" {
				t.Errorf("resend = %+v; want a new pending delivery of event %s", resent, delivery.EventID)
			}

			var deleted struct{ Deleted bool }
			cliJSON(t, &deleted, "webhooks", "delete", "--database", db, ep.ID)
			cliJSON(t, &list, "webhooks", "list", "--database", db, "--store", store.ID)
			if !deleted.Deleted || len(list.Data) != 0 {
				t.Errorf("after delete: %+v, list %+v", deleted, list.Data)
			}

			// Bad input is refused with the reason.
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"--url", "http://hooks.example.com/x"}, "https"},
				{[]string{"--url", "https://127.0.0.1/x"}, "address"},
				{[]string{"--url", "https://localhost/x"}, "localhost"},
				{[]string{"--url", "https://hooks.example.com/x", "--events", "checkout.nope"}, "checkout.nope"},
				{[]string{"--url", "https://hooks.example.com/x", "--mode", "prod"}, "mode"},
			} {
				args := append([]string{"webhooks", "create", "--database", db, "--store", store.ID}, c.args...)
				err := runErr(args...)
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), c.want) {
					t.Errorf("webhooks create %v = %v; want an error about %q", c.args, err, c.want)
				}
			}
			if err := runErr("webhooks", "disable", "--database", db, "we_00000000000000000000000000000000"); err == nil {
				t.Error("disable of an unknown endpoint succeeded")
			}
			if err := runErr("webhooks", "frobnicate"); err == nil {
				t.Error("unknown subcommand accepted")
			}
		})
	}
}

func cliOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut); err != nil {
		t.Fatalf("checkoutd %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

func runErr(args ...string) error {
	var out, errOut bytes.Buffer
	return run(context.Background(), args, func(string) string { return "" }, &out, &errOut)
}

// The operator's webhook options of webhooks create come from flags or from
// the environment (CHECKOUTD_WEBHOOK_ALLOW_CIDR, CHECKOUTD_WEBHOOK_CA_FILE),
// and every mistake is a usage error that says what to fix, before the
// database is touched.
func TestWebhooksCreateOptions(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme Games", "--currency", "USD")
		create := append([]string{"webhooks", "create", "--json", "--store", s.ID}, db.flags...)
		private := []string{"--url", "https://127.0.0.1:8443/hook"}

		// Off by default: a private address is refused.
		if _, _, err := cli(t, vars{}, append(create, private...)...); err == nil || !strings.Contains(err.Error(), "not an IP address") {
			t.Errorf("create of a private URL without an allow-list = %v; want refused", err)
		}
		// From the environment, the same as the flag.
		out := mustCLI(t, vars{"CHECKOUTD_WEBHOOK_ALLOW_CIDR": "10.0.0.0/8, 127.0.0.0/8"}, append(create, private...)...)
		var ep struct{ URL string }
		decodeOne(t, out, &ep)
		if ep.URL != "https://127.0.0.1:8443/hook" {
			t.Errorf("create with CHECKOUTD_WEBHOOK_ALLOW_CIDR = %s", out)
		}
		// The flag wins over the environment.
		if _, _, err := cli(t, vars{"CHECKOUTD_WEBHOOK_ALLOW_CIDR": "127.0.0.0/8"}, append(append(create, private...), "--webhook-allow-cidr", "10.0.0.0/8")...); err == nil {
			t.Error("--webhook-allow-cidr 10.0.0.0/8 did not override the environment's 127.0.0.0/8")
		}
		caFile := filepath.Join(t.TempDir(), "ca.pem")
		os.WriteFile(caFile, webhooktest.NewNetwork(t).CAPEM(), 0o600)
		mustCLI(t, vars{"CHECKOUTD_WEBHOOK_ALLOW_CIDR": "127.0.0.0/8", "CHECKOUTD_WEBHOOK_CA_FILE": caFile}, append(create, private...)...)

		notPEM := filepath.Join(t.TempDir(), "not.pem")
		os.WriteFile(notPEM, []byte("hello"), 0o600)
		for _, c := range []struct {
			env  vars
			args []string
			want string
		}{
			{vars{}, []string{"--webhook-allow-cidr", "10.0.0.0"}, `--webhook-allow-cidr: "10.0.0.0" is not a CIDR`},
			{vars{"CHECKOUTD_WEBHOOK_ALLOW_CIDR": "private"}, nil, `"private" is not a CIDR`},
			{vars{}, []string{"--webhook-ca-file", filepath.Join(t.TempDir(), "missing.pem")}, "--webhook-ca-file: read webhook CA file"},
			{vars{"CHECKOUTD_WEBHOOK_CA_FILE": notPEM}, nil, "holds no PEM certificate"},
		} {
			_, _, err := cli(t, c.env, append(append(create, private...), c.args...)...)
			if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
				t.Errorf("create %v %v = %v (exit %d); want a usage error containing %q", c.env, c.args, err, exitCode(err), c.want)
			}
		}
	})
}

// Missing required flags are named, not reported as an unknown empty id,
// and the database is not opened (no SQLite file is created).
func TestWebhooksRequiredFlags(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"webhooks", "create"}, "webhooks create needs --store and --url"},
		{[]string{"webhooks", "create", "--store", "x"}, "webhooks create needs --url"},
		{[]string{"webhooks", "create", "--url", "https://hooks.example.com/"}, "webhooks create needs --store"},
		{[]string{"webhooks", "list"}, "webhooks list needs --store"},
		{[]string{"webhooks", "list", "--store", "x", "we_1"}, `webhooks list takes no arguments, only flags; got ["we_1"]`},
		{[]string{"webhooks", "deliveries"}, "webhooks deliveries needs --endpoint"},
		{[]string{"webhooks", "deliveries", "--endpoint", "we_x", "--limit", "0"}, "--limit must be 1 or more"},
		{[]string{"webhooks", "disable"}, "usage: checkoutd webhooks disable ENDPOINT_ID"},
		{[]string{"webhooks", "resend", "a", "b"}, "usage: checkoutd webhooks resend DELIVERY_ID"},
	} {
		_, _, err := cli(t, vars{}, append(c.args, "--data-dir", data, "--json")...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("checkoutd %v = %v; want a usage error containing %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("a command with missing flags created its data directory: %v", err)
	}
}

// webhooks update changes what it is given and keeps the rest, by the
// rules of create; roll-secret --keep keeps the old secret for the
// overlap, 24 hours at most. Neither takes its options from the
// environment, where a variable meant for another command would change an
// endpoint or keep a leaked secret valid.
func TestWebhooksUpdateAndRollSecretKeep(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme Games", "--currency", "USD")
		allow := vars{"CHECKOUTD_WEBHOOK_ALLOW_CIDR": "127.0.0.0/8"}
		type endpoint struct {
			ID, URL, Description, Secret string
			Events                       []string
			PreviousSecretExpiresAt      *int64 `json:"previous_secret_expires_at"`
		}
		var ep endpoint
		decodeOne(t, mustCLI(t, allow, append([]string{"webhooks", "create", "--json", "--store", s.ID, "--url", "https://127.0.0.1:8443/hook",
			"--description", "Orders"}, db.flags...)...), &ep)
		if ep.Description != "Orders" {
			t.Errorf("create --description = %+v", ep)
		}
		update := func(e vars, args ...string) (endpoint, error) {
			t.Helper()
			out, _, err := cli(t, e, append(append([]string{"webhooks", "update", ep.ID, "--json"}, db.flags...), args...)...)
			var got endpoint
			if err == nil {
				decodeOne(t, out, &got)
			}
			return got, err
		}
		got, err := update(vars{"CHECKOUTD_URL": "https://127.0.0.2:8443/env", "CHECKOUTD_DESCRIPTION": "from the environment"},
			"--events", "checkout.completed,payment.refunded")
		if err != nil || got.URL != ep.URL || got.Description != "Orders" || len(got.Events) != 2 {
			t.Errorf("update --events = %+v, %v; want the events changed, the URL and description kept (not taken from the environment)", got, err)
		}
		got, err = update(allow, "--url", "https://127.0.0.1:8443/new", "--description", "", "--events", "all")
		if err != nil || got.URL != "https://127.0.0.1:8443/new" || got.Description != "" || len(got.Events) != 1 || got.Events[0] != "*" {
			t.Errorf("update --url --description '' --events all = %+v, %v", got, err)
		}
		for _, c := range []struct {
			env  vars
			args []string
			want string
		}{
			{allow, []string{"--url", "http://127.0.0.1/x"}, "https"},
			{vars{}, []string{"--url", "https://127.0.0.1:8443/x"}, "not an IP address"}, // the allow-list is the operator's, as at create
			{allow, []string{"--events", "checkout.nope"}, "checkout.nope"},
			{allow, []string{"--events", ""}, "events must be"},
			{allow, []string{"--description", strings.Repeat("x", 501)}, "at most 500"},
		} {
			if _, err := update(c.env, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("update %v = %v; want an error about %q", c.args, err, c.want)
			}
		}
		if _, _, err := cli(t, vars{}, append([]string{"webhooks", "update", ep.ID}, db.flags...)...); err == nil ||
			!strings.Contains(err.Error(), "at least one of --url, --events and --description") || exitCode(err) != 2 {
			t.Errorf("update with nothing to change = %v; want a usage error", err)
		}

		roll := func(e vars, args ...string) (endpoint, error) {
			t.Helper()
			out, _, err := cli(t, e, append(append([]string{"webhooks", "roll-secret", ep.ID, "--json"}, db.flags...), args...)...)
			var got endpoint
			if err == nil {
				decodeOne(t, out, &got)
			}
			return got, err
		}
		rolled, err := roll(vars{"CHECKOUTD_KEEP": "2h"})
		if err != nil || rolled.Secret == ep.Secret || rolled.PreviousSecretExpiresAt != nil {
			t.Errorf("roll-secret = %+v, %v; want a new secret, the old one not kept (CHECKOUTD_KEEP ignored)", rolled, err)
		}
		kept, err := roll(vars{}, "--keep", "2h")
		if err != nil || kept.Secret == rolled.Secret || kept.PreviousSecretExpiresAt == nil {
			t.Fatalf("roll-secret --keep 2h = %+v, %v; want the old secret kept", kept, err)
		}
		out := mustCLI(t, vars{}, append([]string{"webhooks", "roll-secret", ep.ID, "--keep", "30m"}, db.flags...)...)
		if !strings.Contains(out, "v1= signature with each secret") {
			t.Errorf("roll-secret --keep, human output:\n%s", out)
		}
		if _, err := roll(vars{}, "--keep", "25h"); err == nil || !strings.Contains(err.Error(), "24 hours") {
			t.Errorf("roll-secret --keep 25h = %v; want refused, saying 24 hours", err)
		}
		if _, err := roll(vars{}, "--keep", "soon"); err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), "--keep") {
			t.Errorf("roll-secret --keep soon = %v; want a usage error", err)
		}
	})
}
