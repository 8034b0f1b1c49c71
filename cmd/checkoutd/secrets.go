package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
)

// The secrets key seals HMAC keys' secrets at rest (internal/seal). The
// operator gives it with --secrets-key (CHECKOUTD_SECRETS_KEY). Without one,
// a SQLite database keeps its own in a file beside it, made the first time
// a command needs it: HMAC signing works out of the box on the embedded
// default. On PostgreSQL several nodes must share one key, so the operator
// gives it; without, HMAC keys are refused (docs/operations.md).

// secretsKeyFile is the name of the key file, in the SQLite database's
// directory.
const secretsKeyFile = "secrets.key"

// keyFileOrigin says where a secrets key came from, for the log.
type keyFileOrigin int

const (
	keyNone keyFileOrigin = iota
	keyGiven
	keyFromFile
	keyFileMade
)

// secretsKeyPath is the key file of the SQLite database the flags name.
func (d *dbFlags) secretsKeyPath() string {
	return filepath.Join(filepath.Dir(d.sqlitePath()), secretsKeyFile)
}

// secretsKey returns the secrets key: the flag's when given; else, on
// SQLite, the key file's, made first when make is set and there is none;
// else nil.
func (d *dbFlags) secretsKey(f *secretsKeyFlag, make bool) (*seal.Key, keyFileOrigin, error) {
	if k, err := f.key(); k != nil || err != nil {
		return k, keyGiven, err
	}
	if d.postgres() {
		return nil, keyNone, nil
	}
	path := d.secretsKeyPath()
	k, err := readKeyFile(path)
	if k != nil || err != nil || !make {
		return k, keyFromFile, err
	}
	k, made, err := makeKeyFile(path)
	if !made {
		return k, keyFromFile, err
	}
	return k, keyFileMade, err
}

// readKeyFile reads the key file at path: one or more keys, one a line, the
// newest first (seal.ParseKeys). It is nil, without error, when there is no
// file. A file that others than its owner may read or write is refused:
// the key is the only thing between a stolen database file and its HMAC
// secrets.
func readKeyFile(path string) (*seal.Key, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("the secrets key file %s may be read or written by other users (mode %04o): make it its owner's alone with chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := seal.ParseKeys(string(b))
	if err != nil {
		return nil, fmt.Errorf("the secrets key file %s: %w", path, err)
	}
	return k, nil
}

// makeKeyFile makes the key file at path with a new key, unless another
// process made it first: then it returns that one, and made is false.
func makeKeyFile(path string) (k *seal.Key, made bool, err error) {
	k, text := seal.Generate()
	switch err := writeKeyFile(path, text+"\n", false); {
	case errors.Is(err, fs.ErrExist):
		k, err := readKeyFile(path)
		return k, false, err
	case err != nil:
		return nil, false, err
	}
	return k, true, nil
}

// writeKeyFile writes text to the key file at path, readable by its owner
// only: to a temporary file beside it, flushed to disk, then moved into
// place, so that a crash leaves the old file or the new one whole, never a
// part. With replace unset, an existing file is kept and the error is
// fs.ErrExist: of two processes that make the file at once, one wins.
func writeKeyFile(path, text string, replace bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+secretsKeyFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := io.WriteString(tmp, text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else {
		// A hard link fails when path exists: the file is made once.
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir flushes a directory's entries, so that a file moved into it
// survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func secretsCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "secrets", args, map[string]func(context.Context, env, []string) error{
		"rotate": secretsRotate,
	})
}

// secretsRotate seals every stored HMAC secret again with a new secrets
// key, in one transaction. On SQLite with the key file, the new key is
// made here and the file follows in three steps that a crash at any point
// leaves working: the file holds the new key and the old one (each opens
// what it sealed), the secrets are sealed again, the file holds the new
// key alone. With the key given (PostgreSQL, or SQLite with --secrets-key),
// the new key is given too, and the operator moves every node to it.
func secretsRotate(ctx context.Context, e env, args []string) error {
	const synopsis = "secrets rotate [--secrets-key OLD] [--new-secrets-key NEW] [--json]  (with the key given, as on PostgreSQL: both keys, best as CHECKOUTD_SECRETS_KEY and CHECKOUTD_NEW_SECRETS_KEY)"
	a := newAdmin(e, "secrets rotate", synopsis)
	a.withSecretsKey()
	var next secretsKeyFlag
	a.fs.StringVar(&next.text, "new-secrets-key", "", "with the secrets key given: the key to seal with from now on, written as --secrets-key's (generate it with: openssl rand -base64 32); prefer CHECKOUTD_NEW_SECRETS_KEY. Without: the key file's new key is made here")
	rest, err := parseFlags(a.fs, e, args)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usageError{"usage: checkoutd " + synopsis}
	}
	old, origin, err := a.db.secretsKey(a.secrets, false)
	switch {
	case err != nil:
		return err
	case old == nil && a.db.postgres():
		return usageError{"secrets rotate needs the current secrets key: give --secrets-key or CHECKOUTD_SECRETS_KEY, as serve has it"}
	case old == nil:
		return fmt.Errorf("there is no secrets key to rotate: %s does not exist (serve makes it when it first starts)", a.db.secretsKeyPath())
	case origin == keyGiven && next.text == "":
		return usageError{"with the secrets key given (--secrets-key or CHECKOUTD_SECRETS_KEY), give the new one too: --new-secrets-key or CHECKOUTD_NEW_SECRETS_KEY (generate it with: openssl rand -base64 32)"}
	case origin != keyGiven && next.text != "":
		return usageError{"the secrets key is in " + a.db.secretsKeyPath() + ": secrets rotate makes the new key itself; leave out --new-secrets-key"}
	}
	var nextKey *seal.Key
	if origin == keyGiven {
		k, err := next.key()
		if err != nil {
			return usageError{strings.Replace(err.Error(), "--secrets-key (or CHECKOUTD_SECRETS_KEY)", "--new-secrets-key (or CHECKOUTD_NEW_SECRETS_KEY)", 1)}
		}
		nextKey = k.Newest()
	}
	// On SQLite, with the lock serve holds: no serve seals with the old
	// key meanwhile, nor keeps it in memory after.
	st, _, err := a.db.openToServe(ctx)
	if errors.Is(err, sqlite.ErrServed) {
		return errors.New("stop checkoutd serve first: it seals new HMAC keys with the key it started with, which the rotation replaces; start it again after")
	}
	if err != nil {
		return err
	}
	defer st.Close()
	path := a.db.secretsKeyPath()
	var nextText string
	if origin != keyGiven {
		oldText, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		nextKey, nextText = seal.Generate()
		// Step 1: the file holds both keys, the new one first.
		if err := writeKeyFile(path, nextText+"\n"+strings.TrimSpace(string(oldText))+"\n", true); err != nil {
			return fmt.Errorf("write the new key to %s: %w", path, err)
		}
	}
	// Step 2: every secret sealed again, in one transaction.
	n, err := service.New(service.Config{Store: st, SecretsKey: old, Actor: cliActor(e)}).ResealSecrets(ctx, nextKey)
	if err != nil {
		return err
	}
	// Step 3: the file holds the new key alone; the old one opens nothing
	// any more.
	if origin != keyGiven {
		if err := writeKeyFile(path, nextText+"\n", true); err != nil {
			return fmt.Errorf("the secrets are sealed with the new key, which %s holds with the old one; removing the old one failed (remove its line by hand): %w", path, err)
		}
	}
	out := struct {
		Resealed int    `json:"resealed"`
		OldKeyID string `json:"old_secrets_key_id"`
		NewKeyID string `json:"new_secrets_key_id"`
		KeyFile  string `json:"key_file,omitempty"`
	}{Resealed: n, OldKeyID: old.ID(), NewKeyID: nextKey.ID()}
	if origin != keyGiven {
		out.KeyFile = path
	}
	return a.print(out, func(w io.Writer) {
		fmt.Fprintf(w, "Sealed %d secrets (HMAC keys', stores' Stripe accounts') again with the secrets key %s (it was %s).\n", n, nextKey.ID(), old.ID())
		if origin != keyGiven {
			fmt.Fprintf(w, "%s holds the new key: back it up now, as a copy of the old one opens nothing any more.\n", path)
			return
		}
		fmt.Fprintln(w, "Give every node the new key (CHECKOUTD_SECRETS_KEY) and restart it: until then a node started with the old key alone cannot verify signed requests nor reach stores' Stripe accounts. To rotate with no such gap, first restart every node with \"NEW,OLD\", then rotate, then give them NEW alone.")
	})
}
