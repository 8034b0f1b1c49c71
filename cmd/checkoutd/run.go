package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
)

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
		return 2
	}
	return 1
}

// errorLine is how main reports err: one line, any secret in it redacted
// (an API key secret given where a key id belongs, say, is echoed by "no
// such key" errors, and stderr often ends up in a log).
func errorLine(err error) string {
	return "checkoutd: " + checkout.RedactSecrets(err.Error())
}

// env is what a command runs with: its arguments, the environment, what it
// reads and where it writes.
type env struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the service: API, payment page, background jobs", serveCmd},
		{"migrate", "apply the database migrations and exit", migrateCmd},
		{"stores", "create and list stores (create, list)", storesCmd},
		{"keys", "create, list and revoke API keys (create, list, revoke)", keysCmd},
		{"accounts", "create dashboard accounts (create)", accountsCmd},
		{"members", "the team of a store in the dashboard, with roles (list, add, role, remove, invite)", membersCmd},
		{"payments", "look at payments and refund them (get, refund, cancel-refund, simulate-payout)", paymentsCmd},
		{"export", "write a store's payments or sessions of a range of days as CSV (payments, sessions)", exportCmd},
		{"disputes", "look at disputes and answer them with evidence (list, get, answer)", disputesCmd},
		{"secrets", "seal HMAC keys' secrets with a new secrets key (rotate)", secretsCmd},
		{"audit", "read the audit trail: who changed what, from where, when (list)", auditCmd},
		{"listen", "receive the store's test-mode events on this machine: forward each to a local URL, signed", listenCmd},
		{"trigger", "make a test-mode event happen: create a session and pay it as a buyer would", triggerCmd},
		{"webhooks", "manage webhook endpoints and deliveries (create, update, list, disable, enable, delete, roll-secret, send-test, deliveries, resend)", webhooksCmd},
	}
}

// run is checkoutd's whole program with nothing on standard input.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runIO(ctx, args, getenv, strings.NewReader(""), stdout, stderr)
}

// runIO is checkoutd's whole program: main only wires it to the process.
func runIO(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := env{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return usageError{"no command given"}
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	usage(stderr)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("usage: checkoutd <command> [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun checkoutd <command> -h for a command's flags. Every flag can also be set\nby an environment variable: --database is CHECKOUTD_DATABASE, and so on.\n")
	io.WriteString(w, b.String())
}
