package service_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chain/bitcoind"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// BIP 84's test vector: the account key of "abandon abandon ... about" and
// its first receiving addresses.
const (
	bip84Zpub   = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	bip84First  = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	bip84Second = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
)

// A store's crypto key: validated for its coin and network, one active per
// coin, and each address handed out once, under concurrency, even when the
// key is replaced and set again.
func TestCryptoKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		svc := service.New(service.Config{Store: db})
		ctx := context.Background()
		m, err := svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}

		set, err := svc.SetCryptoKey(ctx, m.ID, "btc", "main", "  "+bip84Zpub+"\n")
		if err != nil {
			t.Fatal(err)
		}
		if set.FirstAddress != bip84First || set.Key.Coin != "BTC" || set.Key.Network != "main" || set.Key.Key != bip84Zpub || set.Key.NextIndex != 0 {
			t.Fatalf("set = %+v, key %+v", set, set.Key)
		}
		for _, tt := range []struct{ coin, network, key, want string }{
			{"BTC", "test", bip84Zpub, "network"},
			{"SOL", "main", bip84Zpub, "test mode only"},
			{"DOGE", "main", bip84Zpub, "BTC, LTC or ETH"},
			{"BTC", "moon", bip84Zpub, "main, test or regtest"},
			{"BTC", "main", "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi", "private"},
			{"BTC", "main", bip84Zpub[:len(bip84Zpub)-1] + "t", "checksum"},
		} {
			_, err := svc.SetCryptoKey(ctx, m.ID, tt.coin, tt.network, tt.key)
			if !checkout.IsCode(err, checkout.EValidationFailed) || !strings.Contains(strings.ToLower(checkout.ErrorMessage(err)), strings.ToLower(tt.want)) {
				t.Errorf("SetCryptoKey(%s, %s, %.12s...) = %v; want validation_failed saying %q", tt.coin, tt.network, tt.key, err, tt.want)
			}
			if strings.Contains(checkout.ErrorMessage(err), "xprv9s21") {
				t.Errorf("the refusal repeats the private key: %v", err)
			}
		}

		// Concurrent quotes take distinct indexes, in order.
		const n = 12
		addrs := make([]string, n)
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				_, a, err := svc.TakeCryptoAddress(ctx, m.ID, "BTC")
				addrs[i] = a
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		for _, a := range addrs {
			seen[a] = true
		}
		if len(seen) != n || !seen[bip84First] || !seen[bip84Second] {
			t.Errorf("%d distinct addresses of %d taken; want each once, the vector's first two among them", len(seen), n)
		}

		// Replaced, then set again: the index resumes, no address repeats.
		other := "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
		if _, err := svc.SetCryptoKey(ctx, m.ID, "BTC", "test", other); err != nil {
			t.Fatal(err)
		}
		if k, _, err := svc.TakeCryptoAddress(ctx, m.ID, "BTC"); err != nil || k.Key != other || k.NextIndex != 0 {
			t.Errorf("the new key's first take = %+v, %v", k, err)
		}
		again, err := svc.SetCryptoKey(ctx, m.ID, "BTC", "main", bip84Zpub)
		if err != nil || again.Key.NextIndex != n {
			t.Fatalf("the first key set again = %+v, %v; want its index at %d", again, err, n)
		}
		if _, a, err := svc.TakeCryptoAddress(ctx, m.ID, "BTC"); err != nil || seen[a] {
			t.Errorf("after setting the key again, took %s (%v); want an address not handed out before", a, err)
		}
		keys, err := svc.CryptoKeys(ctx, m.ID)
		if err != nil || len(keys) != 1 || keys[0].Key != bip84Zpub {
			t.Errorf("keys = %+v, %v; want the one active key", keys, err)
		}

		// Removed: no address until a key is set again.
		if err := svc.RemoveCryptoKey(ctx, m.ID, "btc"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := svc.TakeCryptoAddress(ctx, m.ID, "BTC"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("take after remove = %v; want not_found", err)
		}
		if err := svc.RemoveCryptoKey(ctx, m.ID, "BTC"); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("removing again = %v; want not_found", err)
		}
	})
}

// LiveCoins says, per coin a store can set a key for, whether this process
// has a node for it and on which chain: what the dashboard's crypto page
// shows.
func TestLiveCoins(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		want := []service.LiveCoin{{Code: "BTC"}, {Code: "LTC"}, {Code: "ETH"}}
		if got := service.New(service.Config{Store: db}).LiveCoins(); !slices.Equal(got, want) {
			t.Errorf("LiveCoins() without a live network = %v; want %v", got, want)
		}
		node, err := bitcoind.New(bitcoind.Config{URL: "http://127.0.0.1:1", User: "checkoutd", Wallet: "checkoutd"})
		if err != nil {
			t.Fatal(err)
		}
		n, err := livecrypto.New(nil, nil, livecrypto.Coin{Code: "LTC", Node: node, Network: "regtest"})
		if err != nil {
			t.Fatal(err)
		}
		svc := service.New(service.Config{Store: db, Processors: pay.Registry{Live: pay.Processors{Crypto: n}}})
		want[1] = service.LiveCoin{Code: "LTC", Offered: true, Network: "regtest"}
		if got := svc.LiveCoins(); !slices.Equal(got, want) {
			t.Errorf("LiveCoins() with an LTC node on regtest = %v; want %v", got, want)
		}
	})
}
