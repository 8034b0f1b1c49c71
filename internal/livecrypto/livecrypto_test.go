package livecrypto_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chain/bitcoind"
	"github.com/checkoutd/checkoutd/internal/chaintest"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// The Litecoin Core regtest account key of BIP 84's test mnemonic
// (m/84'/1'/0'), whose first receiving address is
// rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9puuzgkg (internal/hdwallet's vectors).
const regtestKey = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"

// live is checkoutd with a live Litecoin network on a regtest node.
type live struct {
	t     *testing.T
	ltc   *chaintest.Litecoin
	svc   *service.Service
	db    *store.DB
	clock *clock.Fake
	store *checkout.Merchant
	key   *checkout.APIKey
	// coin is what sessions are quoted in: LTC when "".
	coin string
	// prices are the network's rates, which a test may change.
	prices testPrices
	// restartWatcher replaces the live network with a new one on the same
	// node: a process started again.
	restartWatcher func()
}

const depth = 3

func newLive(t *testing.T, db *store.DB, ltc *chaintest.Litecoin) *live {
	t.Helper()
	ctx := context.Background()
	node, err := bitcoind.New(bitcoind.Config{URL: ltc.URL, User: ltc.User, Password: ltc.Password, Wallet: "checkoutd"})
	if err != nil {
		t.Fatal(err)
	}
	if err := node.EnsureWallet(ctx); err != nil {
		t.Fatal(err)
	}
	l := newLiveWith(t, db, func() livecrypto.Coin {
		return livecrypto.Coin{Code: "LTC", Node: node, Network: "regtest", Depth: depth}
	}, regtestKey, testPrices{"LTC/USD": 8512})
	l.ltc = ltc
	return l
}

// eachLive runs fn on each database, with checkoutd live on a new regtest
// node.
func eachLive(t *testing.T, fn func(t *testing.T, l *live, ltc *chaintest.Litecoin)) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ltc := chaintest.StartLitecoin(t)
		fn(t, newLive(t, db, ltc), ltc)
	})
}

// newLiveWith is checkoutd with a live network of the coin makeCoin makes
// (again for each restart of the watcher: a node adapter may keep state in
// memory), a store with key for it, a live key, and prices.
func newLiveWith(t *testing.T, db *store.DB, makeCoin func() livecrypto.Coin, key string, prices testPrices) *live {
	t.Helper()
	ctx := context.Background()
	clk := clock.NewFake(time.Now())
	coin := makeCoin()
	newService := func(c livecrypto.Coin) *service.Service {
		net, err := livecrypto.New(prices, db, c)
		if err != nil {
			t.Fatal(err)
		}
		return service.New(service.Config{Store: db, Now: clk.Now, CheckoutBaseURL: "https://pay.example",
			Processors: pay.Registry{Test: pay.Simulators(), Live: pay.Processors{Crypto: net}}})
	}
	svc := newService(coin)
	m, err := svc.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetCryptoKey(ctx, m.ID, coin.Code, coin.Network, key); err != nil {
		t.Fatal(err)
	}
	k, _, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeLive, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		t.Fatal(err)
	}
	l := &live{t: t, svc: svc, db: db, clock: clk, store: m, key: k, prices: prices, coin: coin.Code}
	l.restartWatcher = func() { l.svc = newService(makeCoin()) }
	return l
}

// session creates a live session of amount cents and quotes it in l.coin.
func (l *live) session(amount int64) (*checkout.Session, *checkout.CryptoQuote) {
	l.t.Helper()
	ctx := context.Background()
	params, err := checkout.ParseCreateRequest([]byte(`{"items":[{"name":"Sword","amount":` + itoa(amount) + `}]}`))
	if err != nil {
		l.t.Fatal(err)
	}
	res, err := l.svc.CreateSession(ctx, service.CreateSessionParams{Key: l.key, StoreID: l.store.ID, Params: params})
	if err != nil {
		l.t.Fatal(err)
	}
	var created struct{ ID string }
	if err := json.Unmarshal(res.Data, &created); err != nil {
		l.t.Fatal(err)
	}
	sess, err := l.db.SessionGet(ctx, created.ID)
	if err != nil {
		l.t.Fatal(err)
	}
	coin := l.coin
	if coin == "" {
		coin = "LTC"
	}
	q, err := l.svc.CryptoQuote(ctx, sess.ID, coin)
	if err != nil {
		l.t.Fatal(err)
	}
	return sess, q
}

// pay sends litoshi to addr from the node's funded wallet and waits until
// checkoutd's watch-only wallet has the transaction: the node tells its
// wallets of a new transaction asynchronously, so a scan straight after
// the send may not see it yet.
func (l *live) pay(addr string, litoshi int64) string {
	l.t.Helper()
	txid := l.ltc.Send(addr, litoshi)
	l.waitWallet(txid)
	return txid
}

// waitWallet waits until checkoutd's watch-only wallet has txid.
func (l *live) waitWallet(txid string) {
	l.t.Helper()
	l.ltc.WaitWallet("checkoutd", txid)
}

// step scans the node and runs the payments job, as the jobs would, after
// moving the clock a block on.
func (l *live) step() {
	l.t.Helper()
	l.clock.Advance(3 * time.Minute)
	l.look()
}

// look scans the node and runs the payments job, as the jobs would.
func (l *live) look() {
	l.t.Helper()
	ctx := context.Background()
	if _, err := l.svc.ScanCrypto(ctx); err != nil {
		l.t.Fatal(err)
	}
	if _, err := l.svc.ProcessAllDuePayments(ctx); err != nil {
		l.t.Fatal(err)
	}
}

func (l *live) status(id string) checkout.Status {
	l.t.Helper()
	s, err := l.db.SessionGet(context.Background(), id)
	if err != nil {
		l.t.Fatal(err)
	}
	return s.Status
}

func (l *live) events(typ, sessionID string) int {
	l.t.Helper()
	es, err := l.db.EventList(context.Background(), checkout.EventListParams{MerchantID: l.store.ID, Mode: checkout.ModeLive, Type: typ, Limit: 100})
	if err != nil {
		l.t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if containsID(e.Object, sessionID) {
			n++
		}
	}
	return n
}

// A live LTC payment on a real node: the quote's address is the store's
// key's next, the payment is seen in the mempool and holds the session,
// the session completes once at the configured depth and not before, and
// a reorganisation before the depth takes the counted confirmations away.
func TestLiveLitecoinPayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ltc := chaintest.StartLitecoin(t) // a node each: the same key gives each database the same addresses
		l := newLive(t, db, ltc)
		ctx := context.Background()
		sess, q := l.session(1500) // $15.00 at $85.12: 0.17622180... LTC, rounded up to 17622181 litoshi
		if q.KeyID == "" || q.Address != "rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9puuzgkg" || q.ExpiresAt.IsZero() || q.AmountBase != "17622181" {
			t.Fatalf("quote = %+v", q)
		}
		ps, err := l.svc.PageSession(ctx, sess.ID)
		if err != nil || len(ps.Coins) != 1 || ps.Coins[0].Code != "LTC" {
			t.Fatalf("live page offers %v (%v); want LTC alone", ps.Coins, err)
		}
		_, q2 := l.session(1500)
		if q2.Address == q.Address || q2.KeyIndex != q.KeyIndex+1 {
			t.Errorf("a second session's address %s (index %d); want a fresh one after %s (%d)", q2.Address, q2.KeyIndex, q.Address, q.KeyIndex)
		}

		amount := mustInt(t, q.AmountBase)
		txid := l.pay(q.Address, amount)
		l.step()
		ps, _ = l.svc.PageSession(ctx, sess.ID)
		if ps.Active == nil || ps.Active.Crypto.TxHash != txid || l.status(sess.ID) != checkout.StatusOpen {
			t.Fatalf("after the mempool: active %+v, status %s; want the payment holding the open session", ps.Active, l.status(sess.ID))
		}
		if pr, err := l.svc.CryptoProgressOf(ctx, ps.Active); err != nil || pr.Confirmations != 0 || pr.Needed != depth {
			t.Errorf("progress in the mempool = %+v, %v", pr, err)
		}

		// Two blocks: not yet. A reorganisation takes them away; two more
		// blocks on the other branch are still short of the depth.
		blocks := ltc.Mine(depth - 1)
		l.step()
		if l.status(sess.ID) != checkout.StatusOpen {
			t.Fatalf("complete at %d confirmations; want %d", depth-1, depth)
		}
		ltc.InvalidateBlock(blocks[0])
		l.step()
		if pr, _ := l.svc.CryptoProgressOf(ctx, ps.Active); pr.Confirmations != 0 {
			t.Errorf("confirmations after the reorganisation = %d; want 0", pr.Confirmations)
		}
		ltc.Mine(depth - 1)
		l.step()
		if l.status(sess.ID) != checkout.StatusOpen {
			t.Fatalf("complete at %d confirmations after a reorganisation; want %d", depth-1, depth)
		}
		ltc.Mine(1)
		l.step()
		l.step()
		if l.status(sess.ID) != checkout.StatusComplete {
			t.Fatalf("status at depth = %s; want complete", l.status(sess.ID))
		}
		for _, typ := range []string{checkout.EventCheckoutCompleted, checkout.EventPaymentSucceeded} {
			if n := l.events(typ, sess.ID); n != 1 {
				t.Errorf("%d %s events; want 1", n, typ)
			}
		}
		l.step()
		if n := l.events(checkout.EventCheckoutCompleted, sess.ID); n != 1 {
			t.Errorf("%d checkout.completed after another scan; want 1", n)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// containsID reports whether an event's object names id.
func containsID(object []byte, id string) bool { return strings.Contains(string(object), `"`+id+`"`) }

// payment returns the session's payments by failure code ("" for those
// not failed).
func (l *live) payments(sessionID string) map[string][]*checkout.Payment {
	l.t.Helper()
	ps, err := l.db.PaymentListBySession(context.Background(), sessionID)
	if err != nil {
		l.t.Fatal(err)
	}
	out := map[string][]*checkout.Payment{}
	for _, p := range ps {
		code := ""
		if p.FailureCode != nil {
			code = *p.FailureCode
		}
		out[code] = append(out[code], p)
	}
	return out
}

// What real chains do: too little, too much, twice, too late, after the
// quote's rate went stale, and a watcher that starts again from nothing.
func TestLiveLitecoinAmounts(t *testing.T) {
	eachLive(t, func(t *testing.T, l *live, ltc *chaintest.Litecoin) {
		ctx := context.Background()
		confirm := func() {
			ltc.Mine(depth)
			l.step()
			l.step()
		}

		// Underpaid: the payment holds the session while the rest may
		// come to the same address; the two add up and pay it.
		short, q := l.session(1500)
		amount := mustInt(t, q.AmountBase)
		first := amount * 6 / 10
		l.pay(q.Address, first)
		l.step()
		ps, err := l.svc.PageSession(ctx, short.ID)
		if err != nil || ps.Active == nil || !ps.Active.Crypto.Short() || ps.Active.Crypto.ReceivedBase != itoa(first) ||
			ps.Active.Crypto.RequiredBase != itoa(amount) || l.status(short.ID) != checkout.StatusOpen {
			t.Fatalf("after an underpayment: active %+v (%v), status %s; want it holding the open session, short", ps.Active, err, l.status(short.ID))
		}
		ltc.Mine(depth) // the first part's confirmations alone do not pay
		l.step()
		if l.status(short.ID) != checkout.StatusOpen {
			t.Fatalf("an underpayment at depth: status %s; want open", l.status(short.ID))
		}
		l.pay(q.Address, amount-first)
		l.step()
		confirm()
		ps, _ = l.svc.PageSession(ctx, short.ID)
		if l.status(short.ID) != checkout.StatusComplete || ps.Paid == nil || ps.Paid.Crypto.ReceivedBase != itoa(amount) || len(ps.Paid.Crypto.TopUps) != 1 {
			t.Errorf("after the rest: status %s, paid %+v; want complete by both transactions", l.status(short.ID), ps.Paid)
		}

		// Underpaid, and the rest never comes: the payment fails when its
		// time runs out, to be refunded, and the session is free again.
		never, q := l.session(1500)
		l.pay(q.Address, mustInt(t, q.AmountBase)/2)
		l.step()
		l.clock.Advance(service.UnderpaidWindow)
		l.step()
		ps, _ = l.svc.PageSession(ctx, never.ID)
		if got := l.payments(never.ID)[checkout.FailUnderpaid]; len(got) != 1 || ps.Active != nil || l.status(never.ID) != checkout.StatusOpen {
			t.Errorf("an underpayment past its time: payments %v, active %v, status %s; want failed underpaid, the session free", l.payments(never.ID), ps.Active, l.status(never.ID))
		}

		// Overpaid: completes, the excess recorded.
		over, q := l.session(1500)
		l.pay(q.Address, mustInt(t, q.AmountBase)+5000)
		l.step()
		confirm()
		ps, _ = l.svc.PageSession(ctx, over.ID)
		if l.status(over.ID) != checkout.StatusComplete || ps.Paid == nil || ps.Paid.Crypto.ReceivedBase != itoa(mustInt(t, q.AmountBase)+5000) {
			t.Errorf("an overpayment: status %s, paid %+v; want complete, the amount received recorded", l.status(over.ID), ps.Paid)
		}

		// Paid twice: the second transaction is recorded failed, to be
		// refunded, and the session completes once.
		twice, q := l.session(1500)
		l.pay(q.Address, mustInt(t, q.AmountBase))
		l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		confirm()
		got := l.payments(twice.ID)
		if l.status(twice.ID) != checkout.StatusComplete || len(got[checkout.FailDuplicatePayment]) != 1 || l.events(checkout.EventCheckoutCompleted, twice.ID) != 1 {
			t.Errorf("paid twice: status %s, payments %v; want complete once, the other failed duplicate_payment", l.status(twice.ID), got)
		}

		// The quote's rate went stale, and the price fell meanwhile: paying
		// the old amount is short of the amount at the rate now.
		stale, q := l.session(1500)
		l.clock.Advance(service.LiveQuoteValidity + time.Second)
		l.prices["LTC/USD"] = 4256 // half: twice the coins
		l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		ps, _ = l.svc.PageSession(ctx, stale.ID)
		if ps.Active == nil || !ps.Active.Crypto.Short() || ps.Active.Crypto.RequiredBase != itoa(2*mustInt(t, q.AmountBase)-1) {
			t.Errorf("the stale quote's amount after the price halved: active %+v; want short of the amount at the rate now", ps.Active)
		}
		l.clock.Advance(service.UnderpaidWindow)
		l.step()
		l.prices["LTC/USD"] = 8512

		// Shown after its time, a quote is priced again at the rate now:
		// the same address, the new amount, a new expiry; paying that
		// amount pays the session.
		requoted, q := l.session(1500)
		l.clock.Advance(service.LiveQuoteValidity)
		l.prices["LTC/USD"] = 4256
		ps, err = l.svc.PageSession(ctx, requoted.ID)
		if err != nil {
			t.Fatal(err)
		}
		shown, err := l.svc.ShownQuote(ctx, ps, "LTC")
		if err != nil || shown.Address != q.Address || mustInt(t, shown.AmountBase) != 2*mustInt(t, q.AmountBase)-1 || !shown.ExpiresAt.After(l.clock.Now()) {
			t.Fatalf("the quote shown after its time = %+v, %v; want %s priced again (%d), holding from now", shown, err, q.Address, 2*mustInt(t, q.AmountBase)-1)
		}
		l.pay(shown.Address, mustInt(t, shown.AmountBase))
		l.step()
		confirm()
		if l.status(requoted.ID) != checkout.StatusComplete {
			t.Errorf("the quote priced again, paid: status %s, payments %v; want complete", l.status(requoted.ID), l.payments(requoted.ID))
		}
		l.prices["LTC/USD"] = 8512

		// Late: the session expired before the money came.
		late, q := l.session(1500)
		l.clock.Advance(2 * time.Hour)
		if _, err := l.svc.ExpireAll(ctx); err != nil {
			t.Fatal(err)
		}
		l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		if got := l.payments(late.ID)[checkout.FailSessionExpired]; len(got) != 1 || l.status(late.ID) != checkout.StatusExpired {
			t.Errorf("late: status %s, payments %v; want expired, the payment failed session_expired", l.status(late.ID), l.payments(late.ID))
		}

		// A new watcher (a restart) resumes from the stored cursor:
		// nothing is recorded twice.
		before := len(l.payments(twice.ID)) + len(l.payments(short.ID)) + len(l.payments(late.ID))
		l.restartWatcher()
		l.step()
		if after := len(l.payments(twice.ID)) + len(l.payments(short.ID)) + len(l.payments(late.ID)); after != before {
			t.Errorf("%d payments after a restart; want still %d", after, before)
		}
	})
}

// testPrices are rates a test sets and changes: the price of one coin in
// minor units of a currency, keyed "LTC/USD".
type testPrices map[string]int64

func (p testPrices) CoinAmount(_ context.Context, coin checkout.Coin, amount int64, currency string) (*big.Int, error) {
	price, ok := p[coin.Code+"/"+currency]
	if !ok {
		return nil, fmt.Errorf("no %s/%s rate", coin.Code, currency)
	}
	return checkout.CoinAmount(amount, coin, price), nil
}

// A buyer bumps the fee of a payment in the mempool (replace-by-fee, common
// when fees rise): the replacement pays the same address, and it is the
// payment that completes the session; the replaced one is recorded failed,
// replaced, never the session's, and no money is flagged to refund.
func TestLiveLitecoinFeeBump(t *testing.T) {
	eachLive(t, func(t *testing.T, l *live, ltc *chaintest.Litecoin) {
		ctx := context.Background()
		sess, q := l.session(1500)
		first := l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		bumped := ltc.BumpFee(first)
		l.waitWallet(bumped)
		l.step()
		ltc.Mine(depth)
		l.step()
		l.step()
		ps, err := l.svc.PageSession(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if l.status(sess.ID) != checkout.StatusComplete || ps.Paid == nil || ps.Paid.Crypto.TxHash != bumped {
			t.Fatalf("after a fee bump: status %s, paid %+v, payments %v; want complete, paid by the replacement %s",
				l.status(sess.ID), ps.Paid, l.payments(sess.ID), bumped)
		}
		got := l.payments(sess.ID)
		if len(got[checkout.FailReplaced]) != 1 || got[checkout.FailReplaced][0].Crypto.TxHash != first || len(got[checkout.FailDuplicatePayment]) != 0 {
			t.Errorf("payments after a fee bump = %v; want the replaced one failed replaced, and no duplicate", got)
		}
		if n := l.events(checkout.EventCheckoutCompleted, sess.ID); n != 1 {
			t.Errorf("%d checkout.completed; want 1", n)
		}
	})
}

// A payment seen in the mempool whose coins the chain then spends
// elsewhere (a double spend mined before it): it can never confirm, so it
// fails at once, double_spent, and the session is free for another payment,
// rather than held until the coin's deadline.
func TestLiveLitecoinDoubleSpend(t *testing.T) {
	eachLive(t, func(t *testing.T, l *live, ltc *chaintest.Litecoin) {
		ctx := context.Background()
		sess, q := l.session(1500)
		txid := l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		ltc.DoubleSpend(txid)
		l.step()
		ps, err := l.svc.PageSession(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.payments(sess.ID)[checkout.FailDoubleSpent]; len(got) != 1 || ps.Active != nil || l.status(sess.ID) != checkout.StatusOpen {
			t.Fatalf("after a double spend: payments %v, active %v, status %s; want failed double_spent, the session free", l.payments(sess.ID), ps.Active, l.status(sess.ID))
		}
		// The buyer pays again: it completes.
		l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		ltc.Mine(depth)
		l.step()
		l.step()
		if l.status(sess.ID) != checkout.StatusComplete {
			t.Errorf("paid again after a double spend: status %s, payments %v; want complete", l.status(sess.ID), l.payments(sess.ID))
		}
	})
}

// A payment seen in the mempool whose transaction then leaves it unmined
// (evicted, nothing replacing it): the payment waits DroppedWindow for it
// to come back, saying so on the page; back in time, it counts again. Gone
// longer, the payment fails, dropped, and the session is free; should the
// transaction confirm after all, the failed payment is flagged for refund.
func TestLiveLitecoinDropped(t *testing.T) {
	eachLive(t, func(t *testing.T, l *live, ltc *chaintest.Litecoin) {
		ctx := context.Background()
		sess, q := l.session(1500)
		txid := l.pay(q.Address, mustInt(t, q.AmountBase))
		l.step()
		active := func() *checkout.Payment {
			t.Helper()
			ps, err := l.svc.PageSession(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			return ps.Active
		}

		raw := ltc.Drop(txid)
		l.step()
		if a := active(); a == nil || a.Crypto.DroppedAt == 0 || l.status(sess.ID) != checkout.StatusOpen {
			t.Fatalf("after the transaction left the mempool: active %+v; want it holding the session, dropped", a)
		}
		ltc.Rebroadcast(raw)
		l.step()
		if a := active(); a == nil || a.Crypto.DroppedAt != 0 {
			t.Fatalf("after the transaction came back: active %+v; want it holding the session, not dropped", a)
		}

		// Gone again, for longer than the window.
		raw = ltc.Drop(txid)
		l.step()
		l.clock.Advance(service.DroppedWindow - time.Second)
		l.look()
		if a := active(); a == nil {
			t.Fatalf("dropped for less than %v: payments %v; want it still holding the session", service.DroppedWindow, l.payments(sess.ID))
		}
		l.clock.Advance(time.Second)
		l.look()
		got := l.payments(sess.ID)[checkout.FailDropped]
		// The session is free: here its hour is over, so it expires.
		if len(got) != 1 || active() != nil || l.status(sess.ID) != checkout.StatusExpired || got[0].RefundDue() {
			t.Fatalf("dropped past the window: payments %v, status %s; want failed dropped (nothing to refund), the session expired", l.payments(sess.ID), l.status(sess.ID))
		}
		if n := l.events(checkout.EventPaymentFailed, sess.ID); n != 1 {
			t.Errorf("%d payment.failed; want 1", n)
		}

		// It confirms after all: the failed payment is flagged for refund.
		ltc.Rebroadcast(raw)
		ltc.Mine(1)
		l.step()
		l.step()
		got = l.payments(sess.ID)[checkout.FailCapturedAfterFailure]
		if len(got) != 1 || got[0].Crypto.TxHash != txid || !got[0].RefundDue() || l.status(sess.ID) != checkout.StatusExpired {
			t.Errorf("the dropped transaction mined after its payment failed: payments %v, status %s; want it flagged captured_after_failure", l.payments(sess.ID), l.status(sess.ID))
		}
	})
}

// A fee bump of an underpayment's first transaction, then of its top-up:
// each replacement takes over the transactions that still stand, so the
// payment keeps what arrived and completes; nothing is recorded twice.
func TestLiveLitecoinFeeBumpTopUp(t *testing.T) {
	eachLive(t, func(t *testing.T, l *live, ltc *chaintest.Litecoin) {
		ctx := context.Background()
		sess, q := l.session(1500)
		amount := mustInt(t, q.AmountBase)
		first := l.pay(q.Address, amount*6/10)
		l.step()
		top := l.pay(q.Address, amount-amount*6/10)
		l.step()

		bumped := ltc.BumpFee(first)
		l.waitWallet(bumped)
		l.step()
		ps, err := l.svc.PageSession(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a := ps.Active; a == nil || a.Crypto.TxHash != bumped || a.Crypto.ReceivedBase != itoa(amount) || a.Crypto.Short() ||
			!slices.Equal(a.Crypto.TxHashes(), []string{bumped, top}) {
			t.Fatalf("after the first was bumped: active %+v, payments %v; want the replacement with the top-up, whole", a, l.payments(sess.ID))
		}

		bumpedTop := ltc.BumpFee(top)
		l.waitWallet(bumpedTop)
		l.step()
		ltc.Mine(depth)
		l.step()
		l.step()
		ps, _ = l.svc.PageSession(ctx, sess.ID)
		got := l.payments(sess.ID)
		if l.status(sess.ID) != checkout.StatusComplete || ps.Paid == nil || ps.Paid.Crypto.ReceivedBase != itoa(amount) ||
			!slices.Equal(ps.Paid.Crypto.TxHashes(), []string{bumpedTop, bumped}) {
			t.Fatalf("after both were bumped and mined: status %s, paid %+v, payments %v; want complete by both replacements", l.status(sess.ID), ps.Paid, got)
		}
		if len(got[checkout.FailReplaced]) != 2 || len(got[checkout.FailDuplicatePayment]) != 0 || len(got[checkout.FailUnderpaid]) != 0 {
			t.Errorf("payments = %v; want two replaced, nothing else failed", got)
		}
		if n := l.events(checkout.EventCheckoutCompleted, sess.ID); n != 1 {
			t.Errorf("%d checkout.completed; want 1", n)
		}
	})
}
