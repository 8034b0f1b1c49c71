package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/chain/bitcoind"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Keys of the published vectors (docs/crypto-keys.md, How it is tested):
// BIP 84's "abandon ... about" wallet, and the Litecoin regtest account of
// internal/hdwallet's vectors.
const (
	bip84Zpub      = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
	bip84First     = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	bip84Desc      = "wpkh([73c5da0a/84h/0h/0h]xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V/0/*)#afwvtk2s"
	ltcRegtestTpub = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
	ltcFirst       = "rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9puuzgkg"
	// BIP 32 test vector 1's master private key: pasted by mistake.
	bip32Xprv = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
)

// liveLTC gives the application a live crypto network with a Litecoin
// node on regtest (and none for BTC and ETH). The node is never called:
// the crypto page and setting a key do not contact it.
func liveLTC(t *testing.T) func(*app.Config) {
	t.Helper()
	node, err := bitcoind.New(bitcoind.Config{URL: "http://127.0.0.1:1", User: "checkoutd", Wallet: "checkoutd"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := livecrypto.New(nil, nil, livecrypto.Coin{Code: "LTC", Node: node, Network: "regtest"})
	if err != nil {
		t.Fatal(err)
	}
	return func(c *app.Config) { c.Processors = pay.Registry{Live: pay.Processors{Crypto: n}} }
}

const checkSentence = "Check that your wallet shows this address as its first receiving address before you take payments."

func TestCryptoKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnvWith(t, db, "http://dash.example.test", liveLTC(t))
		m, ann := e.signedInStore("ann@example.com")
		page := "/dashboard/stores/" + m.ID + "/live/settings/crypto"
		ctx := context.Background()

		p := e.get(page, ann)
		for _, want := range []string{
			"The operator's Litecoin node is configured here, on <strong>regtest</strong>",
			"No Bitcoin node is configured on this checkoutd", "No Ethereum node is configured on this checkoutd",
			`<input type="hidden" name="network" value="regtest">`, `<option value="main" selected>main</option>`,
			`<textarea id="key-btc" name="key"`, `<textarea id="key-ltc" name="key"`, `<textarea id="key-eth" name="key"`,
			"Set LTC key", "Simulator-only", `aria-current="page">Crypto</a>`,
		} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the live crypto page has no %s", want)
			}
		}
		if p.status != http.StatusOK || strings.Contains(p.body, `aria-current="page">Store</a>`) {
			t.Fatalf("the live crypto page = %d: %s", p.status, p.body)
		}

		// Test mode: simulated, with the way to live mode.
		test := "/dashboard/stores/" + m.ID + "/test/settings/crypto"
		p = e.get(test, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "crypto payments are simulated") || !strings.Contains(p.body, `href="`+page+`"`) ||
			strings.Contains(p.body, "<textarea") {
			t.Errorf("the test crypto page = %d: %s", p.status, p.body)
		}
		tok := p.formToken(t)
		if p := e.post(test, url.Values{"form_token": {tok}, "coin": {"BTC"}, "key": {bip84Zpub}, "network": {"main"}}, ann); p.status != http.StatusNotFound {
			t.Errorf("POST the test crypto page = %d; want 404", p.status)
		}

		// Set: the first address, the check to make, the gap limit.
		p = e.formPost(page, page, url.Values{"coin": {"BTC"}, "key": {"  " + bip84Zpub + "\n"}, "network": {"main"}}, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != page+"?set=BTC#crypto-set" {
			t.Fatalf("set BTC = %d %q: %s", p.status, p.header.Get("Location"), p.body)
		}
		keys, err := e.svc.CryptoKeys(ctx, m.ID)
		if err != nil || len(keys) != 1 || keys[0].Key != bip84Zpub {
			t.Fatalf("keys = %v, %v; want the zpub", keys, err)
		}
		p = e.get(page+"?set=BTC", ann)
		for _, want := range []string{`<code id="first-address">` + bip84First + `</code>`, checkSentence, "gap limit",
			"The Bitcoin key is set", "<code>" + keys[0].Fingerprint + "</code>", "Replace BTC key", "Remove the BTC key"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("the page after setting BTC has no %s", want)
			}
		}
		if strings.Contains(p.body, "The Litecoin key is set") {
			t.Error("the page says the Litecoin key is set")
		}
		p = e.formPost(page, page, url.Values{"coin": {"ltc"}, "key": {ltcRegtestTpub}, "network": {"main"}}, ann)
		if p.status != http.StatusSeeOther {
			t.Fatalf("set LTC = %d: %s", p.status, p.body)
		}
		if p := e.get(page+"?set=LTC", ann); !strings.Contains(p.body, `<code id="first-address">`+ltcFirst+`</code>`) {
			t.Errorf("the LTC key's first address is not shown: %s", p.body)
		}
		keys, err = e.svc.CryptoKeys(ctx, m.ID)
		if err != nil || len(keys) != 2 || keys[1].Coin != "LTC" || keys[1].Network != "regtest" {
			t.Fatalf("keys = %v, %v; want BTC and LTC, LTC on the node's regtest whatever the form said", keys, err)
		}

		// Replace: the same account as a descriptor.
		p = e.formPost(page, page, url.Values{"coin": {"BTC"}, "key": {bip84Desc}, "network": {"main"}}, ann)
		if p.status != http.StatusSeeOther {
			t.Fatalf("replace BTC = %d: %s", p.status, p.body)
		}
		if keys, _ := e.svc.CryptoKeys(ctx, m.ID); len(keys) != 2 || keys[0].Key != bip84Desc {
			t.Errorf("after replacing, keys = %v; want BTC's the descriptor", keys)
		}

		// Refusals beside the field; the network given is said, escaped; the key
		// is not repeated.
		for _, tt := range []struct{ name, coin, key, network, field, want string }{
			{"checksum", "BTC", strings.TrimSuffix(bip84Desc, "s") + "t", "main", "key", "checksum"},
			{"wrong network", "LTC", bip84Zpub, "main", "key", "is for mainnet, but LTC is configured for regtest"},
			{"hostile", "ETH", `</textarea><script>alert("k")</script>`, "main", "key", ""},
			{"hostile network", "BTC", bip84Zpub, `<b>net</b>`, "network", "Network must be main, test or regtest"},
			{"empty", "BTC", " ", "main", "key", "Paste the extended public key"},
		} {
			p := e.formPost(page, page, url.Values{"coin": {tt.coin}, "key": {tt.key}, "network": {tt.network}}, ann)
			id := tt.field + "-" + strings.ToLower(tt.coin)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="`+id+`-error"`) || !strings.Contains(p.body, tt.want) ||
				!strings.Contains(p.body, `aria-invalid="true"`) || strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<b>net") {
				t.Errorf("%s: set = %d: %s", tt.name, p.status, p.body)
				continue
			}
			// A refused key is never repeated: it may be a private key,
			// recognised as one or not (a mistyped WIF key fails its
			// checksum like a mistyped xpub).
			if strings.TrimSpace(tt.key) != "" && strings.Contains(p.body, html.EscapeString(tt.key)) {
				t.Errorf("%s: the refused key is repeated in the answer: %s", tt.name, p.body)
			}
			if tt.field == "network" && !strings.Contains(p.body, html.EscapeString(`"<b>net</b>"`)) {
				t.Errorf("%s: the refusal does not say what was given: %s", tt.name, p.body)
			}
		}

		for _, coin := range []string{"SOL", "<b>x</b>", ""} {
			p := e.formPost(page, page, url.Values{"coin": {coin}, "key": {bip84Zpub}, "network": {"main"}}, ann)
			if p.status != http.StatusBadRequest || !strings.Contains(p.body, "Choose BTC, LTC or ETH.") || strings.Contains(p.body, "<b>x") {
				t.Errorf("set coin %q = %d: %s", coin, p.status, p.body)
			}
		}

		// A private key: refused, and never in the answer.
		p = e.formPost(page, page, url.Values{"coin": {"BTC"}, "key": {bip32Xprv}, "network": {"main"}}, ann)
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `id="key-btc-error"`) || !strings.Contains(p.body, "private key") ||
			!strings.Contains(p.body, `<textarea id="key-btc" name="key" rows="3" spellcheck="false" autocomplete="off" autocapitalize="off" aria-describedby="key-btc-hint key-btc-error" aria-invalid="true"></textarea>`) {
			t.Errorf("a private key = %d: %s", p.status, p.body)
		}
		if strings.Contains(p.body, bip32Xprv) || strings.Contains(p.body, bip32Xprv[4:16]) || p.header.Get("Cache-Control") != "no-store" {
			t.Errorf("the answer to a private key repeats it, or may be cached (%q): %s", p.header.Get("Cache-Control"), p.body)
		}
		// Something that is no key at all may be a private key mistyped (a
		// WIF key with a typo): not repeated either.
		const mistypedWIF = "5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTX"
		p = e.formPost(page, page, url.Values{"coin": {"BTC"}, "key": {mistypedWIF}, "network": {"main"}}, ann)
		if p.status != http.StatusBadRequest || strings.Contains(p.body, mistypedWIF[4:20]) {
			t.Errorf("a mistyped private key = %d, repeated in the answer: %s", p.status, p.body)
		}
		if keys, _ := e.svc.CryptoKeys(ctx, m.ID); len(keys) != 2 || keys[0].Key != bip84Desc || keys[1].Key != ltcRegtestTpub {
			t.Errorf("refused forms changed the keys: %v", keys)
		}

		// A key for another chain than the node's, set elsewhere: the page
		// says why LTC is not offered.
		if _, err := e.svc.SetCryptoKey(ctx, m.ID, "LTC", "main", bip84Zpub); err != nil {
			t.Fatal(err)
		}
		if p := e.get(page, ann); !strings.Contains(p.body, "This key is for main, but the node runs on regtest") {
			t.Errorf("a key for mainnet on a regtest node is not pointed out: %s", p.body)
		}

		// Remove, after a confirmation.
		remove := page + "/btc/remove"
		p = e.get(remove, ann)
		if p.status != http.StatusOK || !strings.Contains(p.body, "Remove the Bitcoin key?") || !strings.Contains(p.body, `action="`+remove+`"`) {
			t.Fatalf("the remove page = %d: %s", p.status, p.body)
		}
		p = e.formPost(remove, remove, url.Values{}, ann)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != page+"?removed=BTC" {
			t.Fatalf("remove = %d %q: %s", p.status, p.header.Get("Location"), p.body)
		}
		p = e.get(page+"?removed=BTC", ann)
		if !strings.Contains(p.body, "The Bitcoin key is removed") || !strings.Contains(p.body, "Set BTC key") {
			t.Errorf("the page after removing: %s", p.body)
		}
		if keys, _ := e.svc.CryptoKeys(ctx, m.ID); len(keys) != 1 || keys[0].Coin != "LTC" {
			t.Errorf("after removing BTC, keys = %v", keys)
		}
		if p := e.formPost(page, "/dashboard/stores/"+m.ID+"/test/settings/crypto/ltc/remove", url.Values{}, ann); p.status != http.StatusNotFound {
			t.Errorf("POST remove in test mode = %d; want 404", p.status)
		}
		if keys, _ := e.svc.CryptoKeys(ctx, m.ID); len(keys) != 1 {
			t.Errorf("a remove in test mode removed a key: %v", keys)
		}
		for _, path := range []string{remove, page + "/eth/remove", page + "/sol/remove", page + "/xyz/remove",
			"/dashboard/stores/" + m.ID + "/test/settings/crypto/ltc/remove"} {
			if p := e.get(path, ann); p.status != http.StatusNotFound {
				t.Errorf("GET %s = %d; want 404", path, p.status)
			}
		}
	})
}

// Another account's store is the same 404 as a store that does not exist,
// and its keys stay as they are.
func TestCryptoKeysOfAnotherStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnvWith(t, db, "http://dash.example.test", liveLTC(t))
		annStore, _ := e.signedInStore("ann@example.com")
		bobStore, bob := e.signedInStore("bob@example.com")
		ctx := context.Background()
		if _, err := e.svc.SetCryptoKey(ctx, annStore.ID, "BTC", "main", bip84Zpub); err != nil {
			t.Fatal(err)
		}
		ann := "/dashboard/stores/" + annStore.ID + "/live/settings/crypto"
		for _, path := range []string{ann, ann + "/btc/remove", "/dashboard/stores/mer_nothere/live/settings/crypto"} {
			if p := e.get(path, bob); p.status != http.StatusNotFound || strings.Contains(p.body, "Replace BTC key") {
				t.Errorf("GET %s as another account = %d; want 404", path, p.status)
			}
		}
		own := "/dashboard/stores/" + bobStore.ID + "/live/settings/crypto"
		if p := e.formPost(own, ann, url.Values{"coin": {"BTC"}, "key": {bip84Desc}, "network": {"main"}}, bob); p.status != http.StatusNotFound {
			t.Errorf("POST another's crypto page = %d; want 404", p.status)
		}
		if p := e.formPost(own, ann+"/btc/remove", url.Values{}, bob); p.status != http.StatusNotFound {
			t.Errorf("POST another's remove = %d; want 404", p.status)
		}
		if keys, _ := e.svc.CryptoKeys(ctx, annStore.ID); len(keys) != 1 || keys[0].Key != bip84Zpub {
			t.Errorf("another account changed the keys: %v", keys)
		}
		// Without the form token, nothing is set either.
		if p := e.post(own, url.Values{"coin": {"BTC"}, "key": {bip84Zpub}, "network": {"main"}}, bob); p.status != http.StatusForbidden {
			t.Errorf("POST without the form token = %d; want 403", p.status)
		}
	})
}

// Without a live crypto network, every coin reads "no node" and the form
// asks for the chain.
func TestCryptoKeysWithoutNodes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, "http://dash.example.test")
		m, ann := e.signedInStore("ann@example.com")
		page := "/dashboard/stores/" + m.ID + "/live/settings/crypto"
		p := e.get(page, ann)
		if p.status != http.StatusOK || strings.Count(p.body, "node is configured on this checkoutd") != 3 || strings.Count(p.body, "<select") != 3 {
			t.Fatalf("the page without nodes = %d: %s", p.status, p.body)
		}
		p = e.formPost(page, page, url.Values{"coin": {"LTC"}, "key": {ltcRegtestTpub}, "network": {"regtest"}}, ann)
		if p.status != http.StatusSeeOther {
			t.Fatalf("set LTC on regtest = %d: %s", p.status, p.body)
		}
		if p := e.get(page+"?set=LTC", ann); !strings.Contains(p.body, ltcFirst) || !strings.Contains(p.body, checkSentence) {
			t.Errorf("the page after setting LTC: %s", p.body)
		}
	})
}
