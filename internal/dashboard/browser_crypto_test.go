package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/checkoutd/checkoutd/internal/browsertest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A merchant sets the store's Litecoin key in live mode from the keyboard
// alone and sees its first address; a private key pasted by mistake is
// refused, the focus on its field, and is gone from the page.
func TestBrowserCryptoKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newBrowserEnv(t, db, liveLTC(t))
		m, _ := e.account("ann@example.com")
		e.signIn("ann@example.com")

		// From the store's live home, through the navigation.
		live := "/dashboard/stores/" + m.ID + "/live/"
		e.open(live)
		e.at(live)
		e.follow("nav.side", "Crypto")
		e.at(live + "settings/crypto")
		if got := e.textOf("#coin-ltc"); !strings.Contains(got, "node is configured here, on regtest") {
			t.Errorf("the Litecoin section reads %q; want it to say the node runs on regtest", got)
		}

		// A private key: refused beside its field, which has the focus,
		// and not repeated anywhere.
		e.ExpectConsole("status of 400") // the refused form comes back as 400 Bad Request
		e.Fill("#key-btc", bip32Xprv)
		e.press("Set BTC key")
		e.WaitFor(`document.getElementById("key-btc-error") !== null`)
		if got := e.textOf("#key-btc-error"); !strings.Contains(got, "private key") {
			t.Errorf("the refusal reads %q; want it to say it is a private key", got)
		}
		if got := browsertest.Eval[string](e.Page, focused); got != "key-btc" {
			t.Errorf("after the refusal the focus is on %q; want the key's field", got)
		}
		if browsertest.Eval[bool](e.Page, `document.documentElement.outerHTML.includes(`+browsertest.JSString(bip32Xprv[4:20])+`)`) {
			t.Error("the page repeats the private key")
		}
		if got := e.ValueIs("#key-btc", ""); got != "" {
			t.Errorf("the key's field holds %q after a private key; want it empty", got)
		}

		// The keyboard alone: Tab from the top of the page to the LTC
		// key's field, type, Tab to its button, Enter.
		e.open(live + "settings/crypto")
		e.at(live + "settings/crypto")
		e.tabTo("key-ltc", 30)
		e.Do(chromedp.KeyEvent(ltcRegtestTpub))
		e.tabTo("Set LTC key", 1)
		e.Do(chromedp.KeyEvent("\r"))
		e.at(live + "settings/crypto?set=LTC")
		if got := e.TextIs("#first-address", ltcFirst); got != ltcFirst {
			t.Errorf("the first address shown is %q; want %s", got, ltcFirst)
		}
		if got := e.textOf("#crypto-set"); !strings.Contains(got, checkSentence) || !strings.Contains(got, "gap limit") {
			t.Errorf("the notice reads %q; want the check to make and the gap limit", got)
		}
		if got := e.textOf("#coin-ltc"); !strings.Contains(got, "Replace the LTC key") || !strings.Contains(got, ltcFirst) {
			t.Errorf("the Litecoin section reads %q; want the key with its first address", got)
		}

		e.screenshot("crypto")

		// On a phone's 375 px, nothing scrolls sideways: not the key, not
		// the address.
		e.Do(chromedp.EmulateViewport(375, 740, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		e.open(live + "settings/crypto?set=LTC")
		e.at(live + "settings/crypto?set=LTC")
		if w := browsertest.Eval[int](e.Page, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("the crypto page is %dpx wide on a 375px screen: it scrolls sideways", w)
		}

		// Test mode says crypto is simulated there and leads back.
		e.Do(chromedp.Click(chromedp.CSS("a.mode-switch")))
		e.at("/dashboard/stores/" + m.ID + "/test/settings/crypto")
		if got := e.textOf("main"); !strings.Contains(got, "crypto payments are simulated") {
			t.Errorf("the test-mode crypto page reads %q", got)
		}
		e.follow("main", "live mode's crypto settings")
		e.at(live + "settings/crypto")
	})
}
