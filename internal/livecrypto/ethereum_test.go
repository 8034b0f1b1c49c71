package livecrypto_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chain/ethereum"
	"github.com/checkoutd/checkoutd/internal/chaintest"
	"github.com/checkoutd/checkoutd/internal/livecrypto"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// BIP 44's Ethereum account key (m/44'/60'/0') of BIP 84's test mnemonic:
// its first address is 0x9858EfFD232B4033E47d90003D41EC34EcaEda94.
const ethKey = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"

// A live ETH payment on ganache: seen once mined, completed at the depth
// and not before; an underpayment is refused; and a process started again
// watches the open quotes' addresses again (the adapter keeps them in
// memory) and misses no payment made while it was down.
func TestLiveEthereumPayment(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		g := chaintest.StartGanache(t)
		ctx := context.Background()
		const ethDepth = 4
		l := newLiveWith(t, db, func() livecrypto.Coin {
			node, err := ethereum.New(ethereum.Config{URL: g.URL})
			if err != nil {
				t.Fatal(err)
			}
			return livecrypto.Coin{Code: "ETH", Node: node, Network: "main", Depth: ethDepth, StartCursor: ethereum.Cursor}
		}, ethKey, testPrices{"ETH/USD": 310000})
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
