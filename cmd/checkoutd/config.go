package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
)

// newFlagSet returns the flag set of a command.
func newFlagSet(e env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: checkoutd %s\n\nflags (each, but those marked command line only, can also be set as CHECKOUTD_<FLAG>\nin the environment, --rate-limit as CHECKOUTD_RATE_LIMIT; the command line wins):\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, flags and positional arguments in any order,
// then fills every flag not given on the command line from its CHECKOUTD_*
// environment variable, but a commandLineOnly one. Positional arguments are
// returned.
func parseFlags(fs *flag.FlagSet, e env, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(commandLineOnly); ok {
			return
		}
		name := envName(f.Name)
		if v := e.getenv(name); v != "" && !given[f.Name] {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, usageError{fmt.Sprintf("%s: %v", name, err)})
			}
		}
	})
	return positional, errors.Join(errs...)
}

// commandLineOnly is a flag that the environment never sets: one whose
// absence means "leave it as it is" (webhooks update --url), or whose
// default is the safe choice (roll-secret --keep), where a CHECKOUTD_URL or
// CHECKOUTD_KEEP exported for another command would silently change an
// endpoint or keep a leaked secret valid.
type commandLineOnly interface{ commandLineOnly() }

// optionalString is a commandLineOnly string flag that knows whether it
// was given.
type optionalString struct {
	value string
	set   bool
}

func (o *optionalString) String() string {
	if o == nil {
		return ""
	}
	return o.value
}

func (o *optionalString) Set(s string) error { o.value, o.set = s, true; return nil }

func (o *optionalString) commandLineOnly() {}

// ptr returns the value's address when it was given, and nil otherwise.
func (o *optionalString) ptr() *string {
	if !o.set {
		return nil
	}
	return &o.value
}

func envName(flagName string) string {
	return "CHECKOUTD_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// secretsKeyFlag is the --secrets-key flag (CHECKOUTD_SECRETS_KEY): the
// operator's key that seals HMAC keys' secrets at rest (docs/operations.md).
// Its text is never printed: neither its default nor its errors show it.
type secretsKeyFlag struct{ text string }

func (f *secretsKeyFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&f.text, "secrets-key", "", "the key that encrypts HMAC keys' secrets at rest: 32 bytes as base64 or 64 hex digits (openssl rand -base64 32), "+
		"or several separated by commas, the newest first, while rotating; prefer CHECKOUTD_SECRETS_KEY, which other users of the machine cannot see. "+
		"Without it, a SQLite database keeps its own in secrets.key beside it; PostgreSQL needs it for HMAC keys")
}

// key returns the parsed key, nil when none was given: one key, or a list
// whose first seals and every one opens (seal.ParseKeys).
func (f *secretsKeyFlag) key() (*seal.Key, error) {
	if f.text == "" {
		return nil, nil
	}
	k, err := seal.ParseKeys(f.text)
	if err != nil {
		return nil, usageError{"--secrets-key (or CHECKOUTD_SECRETS_KEY): " + err.Error()}
	}
	return k, nil
}

// dbFlags are the flags of every command that opens the database.
type dbFlags struct {
	database string
	dataDir  string
}

func (d *dbFlags) register(fs *flag.FlagSet, e env) {
	fs.StringVar(&d.database, "database", "", "database: a postgres:// URL, or the path of a SQLite file (default: checkoutd.db in --data-dir)")
	fs.StringVar(&d.dataDir, "data-dir", defaultDataDir(e.getenv), "directory of the embedded SQLite database")
}

// defaultDataDir is $XDG_DATA_HOME/checkoutd, else ~/.local/share/checkoutd,
// else ./checkoutd-data.
func defaultDataDir(getenv func(string) string) string {
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "checkoutd")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "checkoutd")
	}
	return "checkoutd-data"
}

func (d *dbFlags) postgres() bool {
	return strings.HasPrefix(d.database, "postgres://") || strings.HasPrefix(d.database, "postgresql://")
}

// sqlitePath is the file of the SQLite database the flags name.
func (d *dbFlags) sqlitePath() string {
	path := strings.TrimPrefix(strings.TrimPrefix(d.database, "sqlite://"), "sqlite:")
	if path == "" {
		path = filepath.Join(d.dataDir, "checkoutd.db")
	}
	return path
}

// newSQLite reports whether the flags name a SQLite file that does not
// exist yet: opening it creates it.
func (d *dbFlags) newSQLite() bool {
	if d.postgres() {
		return false
	}
	_, err := os.Stat(d.sqlitePath())
	return errors.Is(err, fs.ErrNotExist)
}

// open opens the store and describes it for the operator (the password of
// a URL left out).
func (d *dbFlags) open(ctx context.Context) (*store.DB, string, error) {
	return d.openWith(ctx, sqlite.Open)
}

// openToServe is open for serve: a SQLite file is locked against a second
// serve, and its sessions cached (sqlite.OpenToServe).
func (d *dbFlags) openToServe(ctx context.Context) (*store.DB, string, error) {
	return d.openWith(ctx, sqlite.OpenToServe)
}

func (d *dbFlags) openWith(ctx context.Context, openSQLite func(context.Context, string) (*store.DB, error)) (*store.DB, string, error) {
	switch {
	case d.postgres():
		db, err := postgres.Open(ctx, d.database)
		if err != nil {
			return nil, "", fmt.Errorf("open PostgreSQL: %w", err)
		}
		return db, "PostgreSQL " + redactURL(d.database), nil
	default:
		path := d.sqlitePath()
		db, err := openSQLite(ctx, path)
		if err != nil {
			return nil, "", fmt.Errorf("open SQLite %s: %w", path, err)
		}
		abs, _ := filepath.Abs(path)
		return db, "SQLite " + abs, nil
	}
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.Redacted()
}

// checkBaseURL checks that s is an absolute http(s) URL without a query.
func checkBaseURL(flagName, s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", usageError{fmt.Sprintf("--%s must be an absolute http or https URL such as https://pay.example.com; got %q", flagName, s)}
	}
	return strings.TrimRight(s, "/"), nil
}
