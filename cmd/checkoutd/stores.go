package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

func storesCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "stores", args, map[string]func(context.Context, env, []string) error{
		"create": storesCreate,
		"list":   storesList,
	})
}

// storeJSON is a store as the commands print it.
type storeJSON struct {
	ID                  string `json:"id"`
	Object              string `json:"object"`
	Name                string `json:"name"`
	Currency            string `json:"currency"`
	Website             string `json:"website"`
	StatementDescriptor string `json:"statement_descriptor"`
	CreatedAt           int64  `json:"created_at"`
}

func toStoreJSON(m *checkout.Merchant) storeJSON {
	return storeJSON{m.ID, "store", m.Name, m.Currency, m.Website, m.StatementDescriptor, m.CreatedAt.Unix()}
}

func storesCreate(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "stores create", "stores create --name NAME --currency USD [--website URL] [--statement-descriptor TEXT] [--json]")
	var p checkout.MerchantParams
	a.fs.StringVar(&p.Name, "name", "", "the store's name, shown to buyers (required)")
	a.fs.StringVar(&p.Currency, "currency", "", "default ISO 4217 currency of its sessions, such as USD (required)")
	a.fs.StringVar(&p.Website, "website", "", "the store's website, an https URL")
	a.fs.StringVar(&p.StatementDescriptor, "statement-descriptor", "", "what buyers' card statements show, 5 to 22 characters (default: the name)")
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		m, err := svc.CreateMerchant(ctx, p)
		if err != nil {
			return describe(err)
		}
		return a.print(toStoreJSON(m), func(w io.Writer) { printStore(w, m) })
	})
}

func storesList(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "stores list", "stores list [--json]")
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		ms, err := svc.Store().MerchantList(ctx)
		if err != nil {
			return describe(err)
		}
		out := make([]storeJSON, len(ms))
		for i, m := range ms {
			out[i] = toStoreJSON(m)
		}
		return a.print(newList(out), func(w io.Writer) {
			fmt.Fprintln(w, "ID\tNAME\tCURRENCY\tWEBSITE")
			for _, m := range ms {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.ID, m.Name, m.Currency, m.Website)
			}
		})
	})
}

func printStore(w io.Writer, m *checkout.Merchant) {
	fmt.Fprintf(w, "id:\t%s\nname:\t%s\ncurrency:\t%s\nwebsite:\t%s\nstatement descriptor:\t%s\n",
		m.ID, m.Name, m.Currency, m.Website, m.StatementDescriptor)
}

// describe turns a validation error into one readable error listing every
// problem.
func describe(err error) error {
	ce, ok := err.(*checkout.Error)
	if !ok || len(ce.Details) < 2 {
		return err
	}
	// Not ce.Message: it ends "(N problems in all; see details.)", and here
	// the details are the rest of this message.
	msg := ce.Details[0].Message
	for _, d := range ce.Details[1:] {
		msg += "; " + d.Message
	}
	return fmt.Errorf("%s", msg)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
