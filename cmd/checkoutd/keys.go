package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

func keysCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "keys", args, map[string]func(context.Context, env, []string) error{
		"create": keysCreate,
		"list":   keysList,
		"revoke": keysRevoke,
	})
}

// keyJSON is a key as the commands print it. Secret is set only by create.
type keyJSON struct {
	ID          string   `json:"id"`
	Object      string   `json:"object"`
	Name        string   `json:"name"`
	StoreID     string   `json:"store_id"`
	Mode        string   `json:"mode"`
	Type        string   `json:"type"`
	Permissions []string `json:"permissions"`
	Secret      string   `json:"secret,omitempty"`
	SecretHint  string   `json:"secret_hint"`
	CreatedAt   int64    `json:"created_at"`
	RevokedAt   *int64   `json:"revoked_at"`
	// LastUsedAt is right to within a minute (checkout.APIKeyUseGranularity).
	LastUsedAt *int64 `json:"last_used_at"`
}

func toKeyJSON(k *checkout.APIKey, secret string) keyJSON {
	perms := make([]string, len(k.Permissions))
	for i, p := range k.Permissions {
		perms[i] = string(p)
	}
	j := keyJSON{
		ID: k.ID, Object: "api_key", Name: k.Name, StoreID: k.MerchantID, Mode: string(k.Mode), Type: string(k.Type),
		Permissions: perms, Secret: secret, SecretHint: "..." + k.SecretHint, CreatedAt: k.CreatedAt.Unix(),
	}
	if k.RevokedAt != nil {
		t := k.RevokedAt.Unix()
		j.RevokedAt = &t
	}
	if k.LastUsedAt != nil {
		t := k.LastUsedAt.Unix()
		j.LastUsedAt = &t
	}
	return j
}

func keysCreate(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "keys create", "keys create --store ID [--name NAME] --mode test|live --type bearer|hmac --permissions checkouts:write[,checkouts:read][,refunds:write][,disputes:write] [--secrets-key KEY] [--json]")
	var store, name, mode, typ, perms string
	a.fs.StringVar(&store, "store", "", "the store the key belongs to (required)")
	a.fs.StringVar(&name, "name", "", "a name to tell the key apart, e.g. \"Shop server\" (optional, at most 100 characters)")
	a.fs.StringVar(&mode, "mode", "test", "test or live")
	a.fs.StringVar(&typ, "type", "bearer", "bearer (the secret is sent with each request) or hmac (the secret signs each request; its secret is sealed with the secrets key: --secrets-key, or on SQLite the database's secrets.key)")
	a.fs.StringVar(&perms, "permissions", "checkouts:write", "comma-separated: checkouts:write (create and retrieve), checkouts:read (retrieve, and read payments and refunds), refunds:write (refund payments), disputes:write (answer disputes); neither is in checkouts:write")
	a.withSecretsKey()
	a.check = func([]string) error {
		if typ != string(checkout.KeyBearer) && typ != string(checkout.KeyHMAC) {
			return usageError{fmt.Sprintf("--type %q is not a key type: use bearer or hmac", typ)}
		}
		if typ == string(checkout.KeyHMAC) {
			if a.secrets.text == "" && a.db.postgres() {
				return usageError{"--type hmac needs the server's secrets key, which encrypts the key's secret at rest: give --secrets-key or CHECKOUTD_SECRETS_KEY, the same as serve's (docs/operations.md)"}
			}
			a.makeSecretsKey = true
		}
		return nil
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		k, secret, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{
			Name:        name,
			MerchantID:  store,
			Mode:        checkout.Mode(mode),
			Type:        checkout.KeyType(typ),
			Permissions: checkout.ParsePermissions(perms),
		})
		if err != nil {
			return describe(err)
		}
		return a.print(toKeyJSON(k, secret), func(w io.Writer) {
			printKey(w, k)
			fmt.Fprintf(w, "secret:\t%s\n\nThe secret is shown only now. Keep it on your server.\n", secret)
		})
	})
}

func keysList(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "keys list", "keys list --store ID [--json]")
	var store string
	a.fs.StringVar(&store, "store", "", "the store whose keys to list (required)")
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if _, err := svc.Store().MerchantGet(ctx, store); err != nil {
			return err
		}
		ks, err := svc.Store().APIKeyList(ctx, store)
		if err != nil {
			return err
		}
		out := make([]keyJSON, len(ks))
		for i, k := range ks {
			out[i] = toKeyJSON(k, "")
		}
		return a.print(newList(out), func(w io.Writer) {
			fmt.Fprintln(w, "ID\tNAME\tMODE\tTYPE\tPERMISSIONS\tSECRET\tCREATED\tLAST USED\tREVOKED")
			for _, k := range ks {
				name := k.Name
				if name == "" {
					name = "-"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t...%s\t%s\t%s\t%s\n", k.ID, name, k.Mode, k.Type, checkout.JoinPermissions(k.Permissions),
					k.SecretHint, k.CreatedAt.UTC().Format(time.RFC3339), timeOrDash(k.LastUsedAt), timeOrDash(k.RevokedAt))
			}
		})
	})
}

func keysRevoke(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "keys revoke", "keys revoke KEY_ID [--json]")
	return a.run(ctx, args, func(svc *service.Service, rest []string) error {
		if len(rest) != 1 {
			return usageError{"keys revoke takes one key id: checkoutd keys revoke key_..."}
		}
		k, err := svc.RevokeAPIKey(ctx, rest[0])
		if err != nil {
			return err
		}
		return a.print(toKeyJSON(k, ""), func(w io.Writer) {
			printKey(w, k)
			fmt.Fprintln(w, "\nThe key is revoked: every node refuses it within 5 seconds.")
		})
	})
}

// timeOrDash is t in RFC 3339, UTC, or "-" when there is none.
func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func printKey(w io.Writer, k *checkout.APIKey) {
	if k.Name != "" {
		fmt.Fprintf(w, "name:\t%s\n", k.Name)
	}
	fmt.Fprintf(w, "id:\t%s\nstore:\t%s\nmode:\t%s\ntype:\t%s\npermissions:\t%s\n",
		k.ID, k.MerchantID, k.Mode, k.Type, checkout.JoinPermissions(k.Permissions))
	if k.RevokedAt != nil {
		fmt.Fprintf(w, "revoked:\t%s\n", k.RevokedAt.UTC().Format(time.RFC3339))
	}
}
