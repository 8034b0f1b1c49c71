package livecrypto_test

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chain/ethereum"
	"github.com/checkoutd/checkoutd/internal/chaintest"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// BIP 44's Ethereum account key (m/44'/60'/0') of BIP 84's test mnemonic:
// its first address is 0x9858EfFD232B4033E47d90003D41EC34EcaEda94.
const ethKey = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"

// ethDepth is the confirmations the live ETH tests configure.
const ethDepth = 4

// newLiveEthereum is a live checkoutd on db taking ETH on ganache g, at
// $3,100.00 an ether.
func newLiveEthereum(t *testing.T, db *store.DB, g *chaintest.Ganache) *live {
	t.Helper()
	return newLiveWith(t, db, func() livecrypto.Coin {
		node, err := ethereum.New(ethereum.Config{URL: g.URL})
		if err != nil {
			t.Fatal(err)
		}
		return livecrypto.Coin{Code: "ETH", Node: node, Network: "main", Depth: ethDepth, StartCursor: ethereum.Cursor}
	}, ethKey, testPrices{"ETH/USD": 310000})
}

// A live ETH payment on ganache: seen once mined, completed at the depth
// and not before; an underpayment is refused; and a process started again
// watches the open quotes' addresses again (the adapter keeps them in
// memory) and misses no payment made while it was down.
func TestLiveEthereumPayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		g := chaintest.StartGanache(t)
		ctx := context.Background()
		l := newLiveEthereum(t, db, g)
		wei := func(q *checkout.CryptoQuote) *big.Int {
			n, _ := new(big.Int).SetString(q.AmountBase, 10)
			return n
		}

		sess, q := l.session(1500) // $15.00 at $3,100.00: 4838709677419354.8... wei, rounded up
		if q.Address != "0x9858EfFD232B4033E47d90003D41EC34EcaEda94" || q.AmountBase != "4838709677419355" {
			t.Fatalf("quote = %+v", q)
		}
		g.Send(q.Address, wei(q)) // mined at once: one confirmation
		l.step()
		ps, _ := l.svc.PageSession(ctx, sess.ID)
		if ps.Active == nil {
			t.Fatalf("no payment after the transfer was mined: %v", l.payments(sess.ID))
		}
		g.Mine(ethDepth - 2)
		l.step()
		if l.status(sess.ID) != checkout.StatusOpen {
			t.Fatalf("complete at %d confirmations; want %d", ethDepth-1, ethDepth)
		}
		g.Mine(1)
		l.step()
		l.step()
		if l.status(sess.ID) != checkout.StatusComplete || l.events(checkout.EventCheckoutCompleted, sess.ID) != 1 {
			t.Fatalf("at depth: status %s; want complete, once", l.status(sess.ID))
		}

		// One wei short, then the wei: the two add up.
		short, q := l.session(1500)
		g.Send(q.Address, new(big.Int).Sub(wei(q), big.NewInt(1)))
		l.step()
		g.Mine(ethDepth)
		l.step()
		if l.status(short.ID) != checkout.StatusOpen {
			t.Fatalf("one wei short, at depth: status %s; want open", l.status(short.ID))
		}
		g.Send(q.Address, big.NewInt(1))
		l.step()
		g.Mine(ethDepth)
		l.step()
		l.step()
		if l.status(short.ID) != checkout.StatusComplete {
			t.Errorf("one wei short, then the wei: status %s, payments %v; want complete", l.status(short.ID), l.payments(short.ID))
		}

		// Down, paid meanwhile, started again: the payment is found.
		later, q := l.session(1500)
		g.Send(q.Address, wei(q))
		g.Mine(ethDepth)
		l.restartWatcher()
		l.step()
		l.step()
		if l.status(later.ID) != checkout.StatusComplete {
			t.Errorf("a payment made while checkoutd was down: status %s, payments %v; want complete", l.status(later.ID), l.payments(later.ID))
		}
	})
}

// A live ETH payment refunded on ganache: the refund's link takes the
// buyer's address (one with a broken EIP-55 checksum is refused), priced at
// the payment's rate; across a restart, a payout a wei short does not
// count; the merchant's full payout is seen by the scan, and at the depth
// the refund succeeds with payment.refunded, once.
func TestLiveEthereumRefund(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		g := chaintest.StartGanache(t)
		ctx := context.Background()
		l := newLiveEthereum(t, db, g)
		sess, q := l.session(1500) // 4838709677419355 wei
		paid, _ := new(big.Int).SetString(q.AmountBase, 10)
		g.Send(q.Address, paid)
		g.Mine(ethDepth)
		l.step()
		l.step()
		if l.status(sess.ID) != checkout.StatusComplete {
			t.Fatalf("the session = %s; want complete", l.status(sess.ID))
		}
		got, err := l.db.SessionGet(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		scope := checkout.Scope{MerchantID: l.store.ID, Mode: checkout.ModeLive}
		amount := int64(600)
		out, err := l.svc.RefundPayment(ctx, service.RefundRequest{Scope: scope, PaymentID: *got.PaymentID,
			Params: checkout.RefundParams{Amount: &amount}, By: checkout.Actor{Kind: checkout.ActorCLI, Name: "ops"}})
		if err != nil {
			t.Fatal(err)
		}
		r := out.Refund
		if r.Status != checkout.RefundPending || r.Crypto == nil || r.Crypto.Network != "main" || r.Crypto.Coin != "ETH" {
			t.Fatalf("the live ETH refund = %+v", r)
		}
		// The test mnemonic's first address, its checksum broken by one
		// letter's case.
		if _, err := l.svc.GiveRefundAddress(ctx, r.LinkToken, "0x9858efFD232B4033E47d90003D41EC34EcaEda94"); !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("an address with a broken checksum = %v; want validation_failed", err)
		}
		const buyer = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
		link, err := l.svc.GiveRefundAddress(ctx, r.LinkToken, buyer)
		if err != nil {
			t.Fatal(err)
		}
		// 600/1500 of the 4838709677419355 wei received, rounded down.
		const due = "1935483870967742"
		if link.Refund.Crypto.AmountBase != due || link.Refund.Crypto.Address != buyer {
			t.Fatalf("the refund priced at the payment's rate = %+v; want %s wei to %s", link.Refund.Crypto, due, buyer)
		}
		wei, _ := new(big.Int).SetString(due, 10)

		l.restartWatcher()
		short := g.Send(buyer, new(big.Int).Sub(wei, big.NewInt(1)))
		l.step()
		if cur, _ := l.db.RefundGet(ctx, r.ID); cur.Crypto.TxHash != "" {
			t.Fatalf("a payout a wei short was taken: %+v", cur.Crypto)
		}
		payout := g.Send(buyer, wei) // mined at once: one confirmation
		l.step()
		cur, err := l.db.RefundGet(ctx, r.ID)
		if err != nil || !strings.EqualFold(cur.Crypto.TxHash, payout) || cur.Crypto.Stage() != checkout.StageConfirming {
			t.Fatalf("after the payout, the refund = %+v, %v; want confirming %s (not %s)", cur.Crypto, err, payout, short)
		}
		g.Mine(ethDepth - 2)
		l.step()
		l.step()
		if cur, _ := l.db.RefundGet(ctx, r.ID); cur.Status != checkout.RefundPending {
			t.Fatalf("the refund at %d confirmations = %s; want pending until %d", ethDepth-1, cur.Status, ethDepth)
		}
		g.Mine(1)
		l.step()
		l.step()
		cur, _ = l.db.RefundGet(ctx, r.ID)
		p, _ := l.db.PaymentGet(ctx, r.PaymentID)
		if cur.Status != checkout.RefundSucceeded || p.AmountRefunded != 600 || p.Status != checkout.PaymentPartiallyRefunded {
			t.Errorf("at depth: refund %s, payment %s refunded %d; want succeeded, partially_refunded 600", cur.Status, p.Status, p.AmountRefunded)
		}
		es, err := l.db.EventList(ctx, checkout.EventListParams{MerchantID: l.store.ID, Mode: checkout.ModeLive, Type: checkout.EventPaymentRefunded, Limit: 10})
		if err != nil || len(es) != 1 {
			t.Errorf("payment.refunded events = %d, %v; want 1", len(es), err)
		}
	})
}
