package dashboard

import (
	"net/http"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/hdwallet"
	"github.com/checkoutd/checkoutd/internal/service"
)

// The crypto settings page (Settings, Crypto; docs/crypto-keys.md): in live
// mode, per coin, whether the operator's node is configured, the store's
// extended public key, a form to set or replace it, and removal after a
// confirmation. A key once set shows its first address, which the merchant
// compares with their wallet's. In test mode crypto is simulated, so the
// page says so and links to live mode: the mode switch keeps the section,
// and a 404 there would read as a broken link.

const sectionCrypto = "settings/crypto"

// cryptoNetworks are the chains a key can be set for when no node tells
// which (docs/crypto-keys.md, What is accepted).
var cryptoNetworks = []string{"main", "test", "regtest"}

// cryptoForm is one coin's form: its values and its errors by field.
type cryptoForm struct {
	Key, Network string
	Errors       map[string]string
}

// cryptoCoin is one coin's part of the page.
type cryptoCoin struct {
	checkout.Coin
	Live service.LiveCoin
	// Key is the store's active key for the coin, or nil; FirstAddress its
	// address at index 0.
	Key          *checkout.CryptoKey
	FirstAddress string
	Form         cryptoForm
}

// Lower is the coin's code in lower case, for ids.
func (c cryptoCoin) Lower() string { return strings.ToLower(c.Code) }

// Networks are the chains the form offers when no node tells which.
func (c cryptoCoin) Networks() []string { return cryptoNetworks }

// OtherNetwork reports whether the key is for another chain than the node's:
// live sessions do not offer the coin until they agree.
func (c cryptoCoin) OtherNetwork() bool {
	return c.Key != nil && c.Live.Offered && c.Key.Network != c.Live.Network
}

type cryptoView struct {
	Layout
	Coins []*cryptoCoin
	// Set is the coin whose key was just set, whose first address the page
	// asks the merchant to check; Removed the coin whose key was just
	// removed.
	Set     *cryptoCoin
	Removed string
}

type cryptoRemoveView struct {
	Layout
	Coin *cryptoCoin
}

// HandleCrypto serves GET .../settings/crypto.
func (d *Dashboard) HandleCrypto() http.Handler {
	return d.storePage(checkout.ActionViewSettings, func(w http.ResponseWriter, r *http.Request, s *scope) {
		if !s.mode.Live() {
			d.render(w, r, http.StatusOK, "crypto-test", s.layout("Crypto", sectionCrypto))
			return
		}
		coins, err := d.cryptoCoins(r, s)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		v := cryptoView{Layout: s.layout("Crypto", sectionCrypto), Coins: coins}
		q := r.URL.Query()
		for _, c := range coins {
			if c.Code == q.Get("set") && c.Key != nil {
				v.Set = c
			}
			if c.Code == q.Get("removed") && c.Key == nil {
				v.Removed = c.Name
			}
		}
		d.render(w, r, http.StatusOK, "crypto", v)
	})
}

// HandleSetCrypto serves POST .../settings/crypto: sets the store's key for
// a coin, then shows its first address.
func (d *Dashboard) HandleSetCrypto() http.Handler {
	return d.storeAction(checkout.ActionManageSettings, func(w http.ResponseWriter, r *http.Request, s *scope) {
		if !s.mode.Live() {
			d.notFound(w, r, s.user)
			return
		}
		coins, err := d.cryptoCoins(r, s)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		c := coinIn(coins, r.PostFormValue("coin"))
		if c == nil {
			d.renderError(w, r, http.StatusBadRequest, "Choose BTC, LTC or ETH.")
			return
		}
		f := cryptoForm{Key: r.PostFormValue("key"), Network: r.PostFormValue("network")}
		if c.Live.Offered {
			// The key must be for the node's chain, whatever the form says.
			f.Network = c.Live.Network
		}
		_, err = d.svc.SetCryptoKey(r.Context(), s.store.ID, c.Code, f.Network, f.Key)
		if err != nil {
			errs, ok := cryptoFieldErrors(err, f)
			if !ok {
				d.fail(w, r, err)
				return
			}
			// A refused key is never echoed, in the form or anywhere in the
			// page: it may be a private key, recognised as one or not (a
			// WIF key with a typo fails its checksum like a mistyped
			// xpub). The explanation beside the field says what to paste.
			f.Key = ""
			f.Errors = errs
			c.Form = f
			w.Header().Set("Cache-Control", "no-store")
			d.render(w, r, http.StatusBadRequest, "crypto", cryptoView{Layout: s.layout("Crypto", sectionCrypto), Coins: coins})
			return
		}
		http.Redirect(w, r, s.path(sectionCrypto)+"?set="+c.Code+"#crypto-set", http.StatusSeeOther)
	})
}

// cryptoFieldErrors places a refusal of SetCryptoKey beside its field: the
// network's, when it is not a chain, beside the network; any other beside
// the key. False for an error that is not a refusal.
func cryptoFieldErrors(err error, f cryptoForm) (map[string]string, bool) {
	if !checkout.IsCode(err, checkout.EValidationFailed) {
		return nil, false
	}
	msg := sentence(checkout.ErrorMessage(err))
	if _, nerr := hdwallet.ParseNetwork(f.Network); nerr != nil {
		return map[string]string{"network": msg}, true
	}
	if strings.TrimSpace(f.Key) == "" {
		msg = "Paste the extended public key (xpub, zpub, tpub...) or the output descriptor of your wallet's account."
	}
	return map[string]string{"key": msg}, true
}

// HandleRemoveCryptoPage serves GET .../settings/crypto/{coin}/remove: the
// confirmation.
func (d *Dashboard) HandleRemoveCryptoPage() http.Handler {
	return d.storePage(checkout.ActionManageSettings, func(w http.ResponseWriter, r *http.Request, s *scope) {
		c, ok := d.cryptoCoinWithKey(w, r, s)
		if !ok {
			return
		}
		d.render(w, r, http.StatusOK, "crypto-remove", cryptoRemoveView{Layout: s.layout("Remove "+c.Name+" key", sectionCrypto), Coin: c})
	})
}

// HandleRemoveCrypto serves POST .../settings/crypto/{coin}/remove.
func (d *Dashboard) HandleRemoveCrypto() http.Handler {
	return d.storeAction(checkout.ActionManageSettings, func(w http.ResponseWriter, r *http.Request, s *scope) {
		c, ok := d.cryptoCoinWithKey(w, r, s)
		if !ok {
			return
		}
		if err := d.svc.RemoveCryptoKey(r.Context(), s.store.ID, c.Code); err != nil {
			d.failOrNotFound(w, r, s, err)
			return
		}
		http.Redirect(w, r, s.path(sectionCrypto)+"?removed="+c.Code, http.StatusSeeOther)
	})
}

// cryptoCoinWithKey returns the coin of the URL with the store's key for
// it, in live mode; anything else is the 404 page.
func (d *Dashboard) cryptoCoinWithKey(w http.ResponseWriter, r *http.Request, s *scope) (*cryptoCoin, bool) {
	if !s.mode.Live() {
		d.notFound(w, r, s.user)
		return nil, false
	}
	coins, err := d.cryptoCoins(r, s)
	if err != nil {
		d.fail(w, r, err)
		return nil, false
	}
	c := coinIn(coins, r.PathValue("coin"))
	if c == nil || c.Key == nil {
		d.notFound(w, r, s.user)
		return nil, false
	}
	return c, true
}

// cryptoCoins returns the coins of the page with the store's keys, each
// form preset to the node's chain (main without a node).
func (d *Dashboard) cryptoCoins(r *http.Request, s *scope) ([]*cryptoCoin, error) {
	keys, err := d.svc.CryptoKeys(r.Context(), s.store.ID)
	if err != nil {
		return nil, err
	}
	var out []*cryptoCoin
	for _, lc := range d.svc.LiveCoins() {
		coin, _ := checkout.CoinByCode(lc.Code)
		c := &cryptoCoin{Coin: coin, Live: lc, Form: cryptoForm{Network: "main"}}
		if lc.Offered {
			c.Form.Network = lc.Network
		}
		for _, k := range keys {
			if k.Coin == lc.Code {
				c.Key = k
				c.FirstAddress = firstAddress(k)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// firstAddress is the address at index 0 of a stored key; "" if the key no
// longer parses (it did when it was set).
func firstAddress(k *checkout.CryptoKey) string {
	net, err := hdwallet.ParseNetwork(k.Network)
	if err != nil {
		return ""
	}
	acct, err := hdwallet.ParseAccount(k.Coin, net, k.Key)
	if err != nil {
		return ""
	}
	a, err := acct.Address(0)
	if err != nil {
		return ""
	}
	return a.Address
}

func coinIn(coins []*cryptoCoin, code string) *cryptoCoin {
	for _, c := range coins {
		if strings.EqualFold(c.Code, code) {
			return c
		}
	}
	return nil
}
