package page_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/chain/bitcoind"
	"github.com/checkoutd/checkoutd/internal/chaintest"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
	"github.com/checkoutd/checkoutd/internal/rates"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// The Litecoin Core regtest account key of BIP 84's test mnemonic; its
// first address is rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9puuzgkg.
const ltcRegtestKey = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"

// A live-mode session pays with LTC on a real (regtest) Litecoin Core
// node, and the page follows the payment in place, from the mempool through
// each confirmation, to the merchant's return URL.
func TestBrowserLiveLitecoin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ltc := chaintest.StartLitecoin(t)
		ctx := context.Background()
		node, err := bitcoind.New(bitcoind.Config{URL: ltc.URL, User: ltc.User, Password: ltc.Password, Wallet: "checkoutd"})
		if err != nil {
			t.Fatal(err)
		}
		if err := node.EnsureWallet(ctx); err != nil {
			t.Fatal(err)
		}
		fixed, err := rates.ParseFixed("LTC/USD=85.12", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		net, err := livecrypto.New(livecrypto.SourceRates{Source: fixed}, db, livecrypto.Coin{Code: "LTC", Node: node, Network: "regtest", Depth: 2})
		if err != nil {
			t.Fatal(err)
		}
		e := newBrowserEnvWith(t, db, func(c *app.Config) { c.Processors.Live.Crypto = net })
		if _, err := e.svc.SetCryptoKey(ctx, e.store.ID, "LTC", "regtest", ltcRegtestKey); err != nil {
			t.Fatal(err)
		}
		_, e.secret, err = e.svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: e.store.ID, Mode: checkout.ModeLive, Type: checkout.KeyBearer,
			Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		s := e.create(orderBody)
		e.Do(
			chromedp.Navigate(s.CheckoutURL),
			chromedp.Click(chromedp.CSS(`nav.methods a[href$="method=crypto"]`)),
			chromedp.Click(chromedp.CSS(`button[name=coin][value=LTC]`)),
			chromedp.WaitVisible(chromedp.CSS(".quote")),
			chromedp.WaitVisible(chromedp.CSS("[data-quote-expires]")),
		)
		if n := browsertest.Eval[int](e.Page, `document.querySelectorAll("button[name=coin]").length`); n != 1 {
			t.Errorf("the live page offers %d coins; want LTC alone", n)
		}
		if n := browsertest.Eval[int](e.Page, `document.querySelectorAll(".simulate").length`); n != 0 {
			t.Error("the live page shows the test-mode control")
		}
		addr := e.TextIs("[data-address]", "rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9puuzgkg")
		text := browsertest.Eval[string](e.Page, `document.querySelector(".quote").textContent`)
		m := regexp.MustCompile(`(\d+) litoshi`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("the quote shows no amount in litoshi: %q", text)
		}
		litoshi, _ := strconv.ParseInt(m[1], 10, 64)

		// The buyer's wallet pays short (an exchange took its fee out of
		// the amount): the page asks for the rest, to the same address.
		first := litoshi * 6 / 10
		ltc.WaitWallet("checkoutd", ltc.Send(addr, first))
		e.runLive()
		e.WaitFor(`document.querySelector("[data-short]") !== null`)
		rest := strconv.FormatInt(litoshi-first, 10)
		if got := browsertest.Eval[string](e.Page, `document.querySelector("[data-short]").dataset.remaining`); got != rest {
			t.Errorf("the page asks for %s litoshi more; want %s", got, rest)
		}
		// The rest; the node sees it in its mempool.
		txid := ltc.Send(addr, litoshi-first)
		ltc.WaitWallet("checkoutd", txid)
		e.runLive()
		e.WaitFor(`document.querySelector("[data-confirmations]") !== null`)
		if got := e.TextIs("[data-confirmations]", "0") + " of " + e.TextIs("[data-needed]", "2"); got != "0 of 2" {
			t.Errorf("confirmations = %q; want 0 of 2", got)
		}

		// The node drops it from its mempool: the page says so and until
		// when it may come back; back, the page counts again.
		raw := ltc.Drop(txid)
		e.runLive()
		e.WaitFor(`document.querySelector("[data-dropped]") !== null`)
		if text := browsertest.Eval[string](e.Page, `document.querySelector("[data-dropped]").textContent`); !strings.Contains(text, "dropped your transaction") {
			t.Errorf("the dropped notice says %q", text)
		}
		ltc.Rebroadcast(raw)
		e.runLive()
		e.WaitFor(`document.querySelector("[data-dropped]") === null && document.querySelector("[data-confirmations]") !== null`)

		// A block: one confirmation, shown in place (a mark set on this
		// document survives the update).
		e.Do(chromedp.Evaluate[chromedp.Void](`window.stillThisPage = true`))
		ltc.Mine(1)
		e.runLive()
		e.WaitFor(`document.querySelector("[data-confirmations]").textContent === "1"`)
		if !browsertest.Eval[bool](e.Page, `window.stillThisPage === true`) {
			t.Error("the page reloaded to show a confirmation; want it updated in place")
		}
		if got := e.retrieve(s.ID).Status; got != checkout.StatusOpen {
			t.Errorf("at 1 of 2 confirmations the session is %s; want open", got)
		}

		// The second: the session completes and the buyer is back at the
		// shop, from the page they were on.
		ltc.Mine(1)
		e.runLive()
		if u := e.landedOnShop(); u.Query().Get("checkout_id") != s.ID {
			t.Errorf("landed on %s; want checkout_id=%s", u, s.ID)
		}
		if got := e.retrieve(s.ID); got.Status != checkout.StatusComplete || got.PaymentID == nil {
			t.Errorf("session = %s; want complete", got.Status)
		}
		evs, err := e.svc.Store().EventList(ctx, checkout.EventListParams{MerchantID: e.store.ID, Mode: checkout.ModeLive, Type: checkout.EventCheckoutCompleted, Limit: 10})
		if err != nil || len(evs) != 1 {
			t.Errorf("live checkout.completed events = %d, %v; want 1", len(evs), err)
		}
	})
}

// runLive scans the live node and runs the payments job, a few seconds of
// the fake clock on (the payments job looks at a live payment every 5).
func (e *browserEnv) runLive() {
	e.t.Helper()
	e.clk.Advance(10 * time.Second)
	if _, err := e.svc.ScanCrypto(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.runJobs()
}
