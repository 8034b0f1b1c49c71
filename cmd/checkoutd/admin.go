package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// admin is the frame of the headless administration commands: the database
// flags, --json, and a service on the opened store.
type admin struct {
	e    env
	fs   *flag.FlagSet
	db   dbFlags
	json bool
	// withGuard, when set, gives the service a webhook URL guard.
	withGuard func() (*webhook.Guard, error)
	// check, when set, validates the flags and positional arguments once
	// parsed, before the database is opened.
	check func(rest []string) error
	// secrets, when set (withSecretsKey), gives the service the secrets
	// key: --secrets-key's, or the SQLite database's key file, which
	// makeSecretsKey lets the command make when there is none.
	secrets        *secretsKeyFlag
	makeSecretsKey bool
	// acquirers, when set (withAcquirers), give the service the card
	// acquirers stores set up their accounts at.
	acquirers *acquirerFlags
	// procs are the service's payment processors: none unless a command
	// that pays or refunds sets them.
	procs pay.Registry
}

// withSecretsKey adds --secrets-key, for the commands that seal or open
// HMAC keys' secrets.
func (a *admin) withSecretsKey() {
	a.secrets = &secretsKeyFlag{}
	a.secrets.register(a.fs)
}

// withAcquirers adds the acquirers' flags, for the commands that check a
// store's keys at its acquirer.
func (a *admin) withAcquirers() {
	a.acquirers = &acquirerFlags{}
	a.acquirers.register(a.fs)
}

func newAdmin(e env, name, synopsis string) *admin {
	a := &admin{e: e, fs: newFlagSet(e, name, synopsis)}
	a.db.register(a.fs, e)
	a.fs.BoolVar(&a.json, "json", false, "print exactly one JSON object on stdout")
	return a
}

// withCheckoutBaseURL adds --checkout-base-url, for the commands that
// print links to the payment pages (a crypto refund's), and returns where
// its value goes.
func (a *admin) withCheckoutBaseURL() *string {
	var base string
	a.fs.StringVar(&base, "checkout-base-url", "http://127.0.0.1:8080", "public address of the payment pages, as serve's --checkout-base-url: the links printed are under it")
	return &base
}

// run parses args, opens the store and calls fn with a service on it and
// the positional arguments.
func (a *admin) run(ctx context.Context, args []string, fn func(svc *service.Service, rest []string) error) error {
	rest, err := parseFlags(a.fs, a.e, args)
	if err != nil {
		return err
	}
	if a.check != nil {
		if err := a.check(rest); err != nil {
			return err
		}
	}
	cfg := service.Config{Processors: a.procs, Actor: cliActor(a.e)}
	if a.secrets != nil {
		if cfg.SecretsKey, _, err = a.db.secretsKey(a.secrets, a.makeSecretsKey); err != nil {
			return err
		}
	}
	if a.acquirers != nil {
		cfg.Acquirers = a.acquirers.connectors()
	}
	if a.withGuard != nil {
		g, err := a.withGuard()
		if err != nil {
			return err
		}
		cfg.URLs = g
	}
	st, _, err := a.db.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	cfg.Store = st
	return fn(service.New(cfg), rest)
}

// runOne is run for a command that takes exactly one positional argument,
// an id, which it checks before opening the database, with the command's
// own check (a.check) when it has one.
func (a *admin) runOne(ctx context.Context, args []string, synopsis string, fn func(svc *service.Service, id string) error) error {
	own := a.check
	a.check = func(rest []string) error {
		if len(rest) != 1 {
			return usageError{"usage: checkoutd " + synopsis}
		}
		if own != nil {
			return own(rest)
		}
		return nil
	}
	return a.run(ctx, args, func(svc *service.Service, rest []string) error { return fn(svc, rest[0]) })
}

// print writes v as one JSON object with --json, and otherwise as the
// human form that human writes, aligned in columns.
func (a *admin) print(v any, human func(w io.Writer)) error {
	if a.json {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.e.stdout, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(a.e.stdout, 0, 4, 2, ' ', 0)
	human(tw)
	return tw.Flush()
}

// subcommand dispatches "checkoutd <group> <sub> ...".
func subcommand(ctx context.Context, e env, group string, args []string, subs map[string]func(context.Context, env, []string) error) error {
	names := ""
	for _, n := range sortedKeys(subs) {
		names += " " + n
	}
	if len(args) == 0 {
		return usageError{fmt.Sprintf("checkoutd %s needs a subcommand:%s", group, names)}
	}
	fn, ok := subs[args[0]]
	if !ok {
		return usageError{fmt.Sprintf("checkoutd %s has no subcommand %q; it has:%s", group, args[0], names)}
	}
	return fn(ctx, e, args[1:])
}

// listJSON is how --json prints a list: one object.
type listJSON[T any] struct {
	Object string `json:"object"`
	Data   []T    `json:"data"`
}

func newList[T any](data []T) listJSON[T] {
	if data == nil {
		data = []T{}
	}
	return listJSON[T]{Object: "list", Data: data}
}
