package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

func storesCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "stores", args, map[string]func(context.Context, env, []string) error{
		"create":      storesCreate,
		"list":        storesList,
		"crypto":      storesCrypto,
		"stripe":      storesStripe,
		"dispute-fee": storesDisputeFee,
	})
}

// storesDisputeFee sets what a dispute costs a store (docs/payments.md,
// Disputes).
func storesDisputeFee(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "stores dispute-fee", "stores dispute-fee --store ID --fee N|default [--json]")
	var store, fee string
	a.fs.StringVar(&store, "store", "", "the store (required)")
	a.fs.StringVar(&fee, "fee", "", "the dispute fee, in minor units of the disputed payment's currency (1500 for 15.00 USD), or default: 15 whole units of the currency (required)")
	var n int64
	a.check = func([]string) error {
		if fee == "default" {
			n = -1
			return nil
		}
		v, err := strconv.ParseInt(fee, 10, 64)
		if err != nil || v < 0 {
			return usageError{"--fee must be a number of minor units (0 to 100000) or default"}
		}
		n = v
		return nil
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		m, err := svc.SetDisputeFee(ctx, store, n)
		if err != nil {
			return err
		}
		out := struct {
			StoreID    string `json:"store_id"`
			DisputeFee *int64 `json:"dispute_fee"`
			InCurrency int64  `json:"dispute_fee_in_store_currency"`
		}{StoreID: m.ID, InCurrency: m.Pricing.DisputeFeeFor(m.Currency)}
		if m.Pricing.DisputeFee >= 0 {
			out.DisputeFee = &m.Pricing.DisputeFee
		}
		return a.print(out, func(w io.Writer) {
			fmt.Fprintf(w, "store:\t%s\ndispute fee:\t%s in the store's currency", m.ID, checkout.FormatAmount(out.InCurrency, m.Currency))
			if out.DisputeFee == nil {
				fmt.Fprint(w, " (the default: 15 whole units of the disputed payment's currency)")
			}
			fmt.Fprintln(w)
		})
	})
}

// storesCrypto manages stores' crypto keys: the extended public keys live
// crypto quotes take their addresses from (docs/crypto-keys.md).
func storesCrypto(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "stores crypto", args, map[string]func(context.Context, env, []string) error{
		"set":    storesCryptoSet,
		"list":   storesCryptoList,
		"remove": storesCryptoRemove,
	})
}

// cryptoKeyJSON is a store's crypto key as the commands print it.
type cryptoKeyJSON struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	StoreID     string `json:"store_id"`
	Coin        string `json:"coin"`
	Network     string `json:"network"`
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	// NextIndex is the index of the next address a quote takes.
	NextIndex int64 `json:"next_index"`
	// FirstAddress is the address at index 0, printed by set: compare it
	// with the first receiving address your wallet shows.
	FirstAddress string `json:"first_address,omitempty"`
	UpdatedAt    int64  `json:"updated_at"`
}

func toCryptoKeyJSON(k *checkout.CryptoKey, first string) cryptoKeyJSON {
	return cryptoKeyJSON{ID: k.ID, Object: "crypto_key", StoreID: k.MerchantID, Coin: k.Coin, Network: k.Network, Key: k.Key,
		Fingerprint: k.Fingerprint, NextIndex: k.NextIndex, FirstAddress: first, UpdatedAt: k.UpdatedAt.Unix()}
}

func storesCryptoSet(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "stores crypto set", "stores crypto set --store ID --coin BTC|LTC|ETH --xpub KEY [--network main|test|regtest] [--json]")
	var store, coin, key, network string
	a.fs.StringVar(&store, "store", "", "the store (required)")
	a.fs.StringVar(&coin, "coin", "", "BTC, LTC or ETH (required)")
	a.fs.StringVar(&key, "xpub", "", "the account's extended PUBLIC key (xpub, zpub, tpub, vpub, Ltub, ...) or a wpkh(...) descriptor; never a private key (required)")
	a.fs.StringVar(&network, "network", "main", "the chain of the coin's node: main, test or regtest")
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if store == "" || coin == "" || key == "" {
			return usageError{"stores crypto set needs --store, --coin and --xpub"}
		}
		set, err := svc.SetCryptoKey(ctx, store, coin, network, key)
		if err != nil {
			return describe(err)
		}
		return a.print(toCryptoKeyJSON(set.Key, set.FirstAddress), func(w io.Writer) {
			k := set.Key
			fmt.Fprintf(w, "store:\t%s\ncoin:\t%s (%s)\nfingerprint:\t%s\nnext index:\t%d\nfirst address:\t%s\n",
				k.MerchantID, k.Coin, k.Network, k.Fingerprint, k.NextIndex, set.FirstAddress)
			fmt.Fprintln(w, "Check that your wallet shows the first address above as its first receiving address before you take payments.")
		})
	})
}

func storesCryptoList(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "stores crypto list", "stores crypto list --store ID [--json]")
	var store string
	a.fs.StringVar(&store, "store", "", "the store (required)")
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if store == "" {
			return usageError{"stores crypto list needs --store"}
		}
		keys, err := svc.CryptoKeys(ctx, store)
		if err != nil {
			return err
		}
		out := make([]cryptoKeyJSON, len(keys))
		for i, k := range keys {
			out[i] = toCryptoKeyJSON(k, "")
		}
		return a.print(newList(out), func(w io.Writer) {
			fmt.Fprintln(w, "COIN\tNETWORK\tFINGERPRINT\tNEXT INDEX\tKEY")
			for _, k := range keys {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", k.Coin, k.Network, k.Fingerprint, k.NextIndex, k.Key)
			}
		})
	})
}

func storesCryptoRemove(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "stores crypto remove", "stores crypto remove --store ID --coin COIN [--json]")
	var store, coin string
	a.fs.StringVar(&store, "store", "", "the store (required)")
	a.fs.StringVar(&coin, "coin", "", "the coin whose key to remove (required)")
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if store == "" || coin == "" {
			return usageError{"stores crypto remove needs --store and --coin"}
		}
		if err := svc.RemoveCryptoKey(ctx, store, coin); err != nil {
			return err
		}
		return a.print(map[string]any{"object": "crypto_key", "store_id": store, "coin": strings.ToUpper(coin), "removed": true}, func(w io.Writer) {
			fmt.Fprintf(w, "Removed the %s key of store %s: live sessions no longer offer %s. Set it again to resume where it was.\n", strings.ToUpper(coin), store, strings.ToUpper(coin))
		})
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
