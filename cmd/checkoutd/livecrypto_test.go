package main

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chaintest"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
)

// The Litecoin Core regtest key of BIP 84's test mnemonic (internal/hdwallet's
// vectors).
const ltcRegtestKey = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"

var (
	addressRE = regexp.MustCompile(`<code data-address>([^<]+)</code>`)
	baseRE    = regexp.MustCompile(`<p class="muted small">(\d+) litoshi</p>`)
)

// buyerStatus is what the payment page's status endpoint says.
type buyerStatus struct {
	Data struct {
		Status  string `json:"status"`
		Payment *struct {
			Status        string `json:"status"`
			Confirmations *int   `json:"confirmations"`
		} `json:"payment"`
	} `json:"data"`
}

// serve takes a live LTC payment end to end, on a real Litecoin Core node:
// the buyer picks LTC on the live session's page and pays the address it
// shows; the page follows the payment; checkoutd is killed while the
// payment waits for confirmations and the node is restarted; after both
// come back the session completes, once.
func TestServeLiveLitecoin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	ltc := chaintest.StartLitecoin(t)
	db := filepath.Join(t.TempDir(), "checkoutd.db")
	var st struct{ ID string }
	cliJSON(t, &st, "stores", "create", "--database", db, "--name", "Acme Games", "--currency", "USD")
	var key struct{ Secret string }
	cliJSON(t, &key, "keys", "create", "--database", db, "--store", st.ID, "--mode", "live")
	var ck struct {
		FirstAddress string `json:"first_address"`
	}
	cliJSON(t, &ck, "stores", "crypto", "set", "--database", db, "--store", st.ID, "--coin", "LTC", "--network", "regtest", "--xpub", ltcRegtestKey)
	if ck.FirstAddress != "rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9puuzgkg" {
		t.Fatalf("first address = %q", ck.FirstAddress)
	}
	env := []string{"CHECKOUTD_LTC_RPC_PASSWORD=" + ltc.Password}
	args := []string{"--database", db, "--rate-limit", "0", "--ltc-rpc-url", ltc.URL, "--ltc-rpc-user", ltc.User,
		"--ltc-network", "regtest", "--ltc-confirmations", "2", "--crypto-rates", "LTC/USD=85.12",
		"--crypto-scan-interval", "100ms", "--payments-interval", "100ms"}
	p := startProcessEnv(t, env, args...)
	if strings.Contains(p.log.String(), ltc.Password) {
		t.Fatal("the log shows the node's RPC password")
	}

	// A live session; the buyer picks LTC.
	base := "http://" + p.addr
	tr, err := newTriggerer(base, st.ID, key.Secret)
	if err != nil {
		t.Fatal(err)
	}
	var sess triggerSession
	ctx := context.Background()
	if err := tr.api(ctx, http.MethodPost, "/checkouts", `{"items":[{"name":"Sword","amount":1500}]}`, &sess); err != nil {
		t.Fatal(err)
	}
	page := pickCoin(t, tr, sess.CheckoutURL, "LTC")
	addr, amount := addressRE.FindStringSubmatch(page), baseRE.FindStringSubmatch(page)
	if addr == nil || amount == nil || addr[1] != ck.FirstAddress || amount[1] != "17622181" ||
		!strings.Contains(page, "data-quote-expires") || strings.Contains(page, "Simulate payment") {
		t.Fatalf("the live LTC page:\n%s", page)
	}
	litoshi, _ := strconv.ParseInt(amount[1], 10, 64)

	status := func() buyerStatus {
		t.Helper()
		resp, err := tr.client.Get(sess.CheckoutURL + "/status")
		if err != nil {
			return buyerStatus{}
		}
		defer resp.Body.Close()
		var s buyerStatus
		json.NewDecoder(resp.Body).Decode(&s)
		return s
	}
	ltc.Send(addr[1], litoshi)
	waitFor(t, "the page to see the payment", 30*time.Second, func() bool {
		s := status()
		return s.Data.Payment != nil && s.Data.Payment.Status == "processing"
	})
	ltc.Mine(1)
	waitFor(t, "the page to count a confirmation", 30*time.Second, func() bool {
		s := status()
		return s.Data.Payment != nil && s.Data.Payment.Confirmations != nil && *s.Data.Payment.Confirmations == 1
	})
	if s := status(); s.Data.Status != "open" {
		t.Fatalf("status at 1 of 2 confirmations = %s; want open", s.Data.Status)
	}

	// /readyz and the metrics show the node; stopped, it is unreachable and
	// the process stays ready.
	readyz := func() (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + p.addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := readyz(); code != 200 || !strings.Contains(body, `"LTC":{"node":"ok","tip":`) {
		t.Errorf("/readyz with the node up = %d %s", code, body)
	}
	m := scrapeServe(t, "http://"+p.addr+"/metrics")
	if m.Value("checkoutd_crypto_node_up", "coin", "LTC") != 1 || m.Value("checkoutd_crypto_node_height", "coin", "LTC") < 120 {
		t.Errorf("node metrics: up %v, height %v", m.Value("checkoutd_crypto_node_up", "coin", "LTC"), m.Value("checkoutd_crypto_node_height", "coin", "LTC"))
	}
	checkDocumented(t, m, readDocumentedSeries(t), func(name string) bool { return strings.HasPrefix(name, "checkoutd_crypto_") })
	ltc.Stop()
	waitFor(t, "/readyz to see the node down", 30*time.Second, func() bool {
		code, body := readyz()
		return code == 200 && strings.Contains(body, `"LTC":{"node":"unreachable"}`)
	})
	if _, body := readyz(); strings.Contains(body, "127.0.0.1") {
		t.Errorf("/readyz shows where the node is: %s", body)
	}

	// checkoutd dies; the node starts again; the block that confirms comes
	// meanwhile.
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait()
	ltc.Restart()
	ltc.Mine(1)
	p = startProcessEnv(t, env, args...)
	tr.base, _ = url.Parse("http://" + p.addr)
	sess.CheckoutURL = strings.Replace(sess.CheckoutURL, base, "http://"+p.addr, 1)
	waitFor(t, "the session to complete", 60*time.Second, func() bool { return status().Data.Status == "complete" })

	// Overpaid: the session completes, and the receipt shows the excess.
	var over triggerSession
	if err := tr.api(ctx, http.MethodPost, "/checkouts", `{"items":[{"name":"Sword","amount":1500}]}`, &over); err != nil {
		t.Fatal(err)
	}
	page = pickCoin(t, tr, over.CheckoutURL, "LTC")
	addr, amount = addressRE.FindStringSubmatch(page), baseRE.FindStringSubmatch(page)
	if addr == nil || amount == nil {
		t.Fatalf("the second live LTC page:\n%s", page)
	}
	litoshi, _ = strconv.ParseInt(amount[1], 10, 64)
	ltc.WaitWallet("checkoutd", ltc.Send(addr[1], litoshi+5000))
	ltc.Mine(2)
	receipt := func() string {
		resp, err := tr.client.Get(over.CheckoutURL)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitFor(t, "the overpaid session's receipt", 60*time.Second, func() bool { return strings.Contains(receipt(), "Payment received") })
	if r := receipt(); !strings.Contains(r, "<dd data-excess>0.00005 LTC more than was due</dd>") {
		t.Errorf("the overpaid receipt does not show the excess:\n%s", r)
	}

	// Once: one checkout.completed, one payment.succeeded.
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, typ := range []string{checkout.EventCheckoutCompleted, checkout.EventPaymentSucceeded} {
		es, err := store.EventList(ctx, checkout.EventListParams{MerchantID: st.ID, Mode: checkout.ModeLive, Type: typ, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range es {
			if strings.Contains(string(e.Object), sess.ID) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d %s events of session %s; want 1", n, typ, sess.ID)
		}
	}
}

// pickCoin opens a session's payment page on the crypto method and picks
// coin, as a buyer's browser would, and returns the page that follows.
func pickCoin(t *testing.T, tr *triggerer, checkoutURL, coin string) string {
	t.Helper()
	resp, err := tr.client.Get(checkoutURL + "?method=crypto")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfInput.FindSubmatch(b)
	if m == nil {
		t.Fatalf("the crypto page has no form token:\n%s", b)
	}
	form := url.Values{"csrf_token": {html.UnescapeString(string(m[1]))}, "coin": {coin}}
	req, _ := http.NewRequest(http.MethodPost, checkoutURL+"/crypto", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	u, _ := url.Parse(checkoutURL)
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	resp, err = tr.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("pick %s = %d:\n%s", coin, resp.StatusCode, b)
	}
	return string(b)
}
