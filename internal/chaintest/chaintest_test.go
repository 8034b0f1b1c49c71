package chaintest_test

import (
	"math/big"
	"testing"

	"github.com/checkoutd/checkoutd/internal/chaintest"
)

func TestLitecoin(t *testing.T) {
	n := chaintest.StartLitecoin(t)
	h, _ := n.Tip()
	if h != chaintest.StartBlocks {
		t.Fatalf("height after start = %d; want %d", h, chaintest.StartBlocks)
	}
	addr := n.NewAddress()
	txid := n.Send(addr, 12345)
	if !n.InMempool(txid) {
		t.Fatalf("Send(%s) = %s; not in the mempool", addr, txid)
	}
	bumped := n.BumpFee(txid)
	if n.InMempool(txid) || !n.InMempool(bumped) {
		t.Fatalf("BumpFee(%s) = %s; want the old one out of the mempool and the new one in", txid, bumped)
	}
	blocks := n.Mine(1)
	if n.InMempool(bumped) {
		t.Fatalf("%s still in the mempool after Mine", bumped)
	}
	n.InvalidateBlock(blocks[0])
	if !n.InMempool(bumped) {
		t.Fatalf("%s not back in the mempool after InvalidateBlock", bumped)
	}
	n.ReconsiderBlock(blocks[0])

	spent := n.Send(addr, 100_000)
	conflict, _ := n.DoubleSpend(spent)
	if n.InMempool(spent) || conflict == spent {
		t.Fatalf("DoubleSpend(%s) = %s; want the first out of the mempool", spent, conflict)
	}

	h, hash := n.Tip()
	n.Restart()
	if h2, hash2 := n.Tip(); h2 != h || hash2 != hash {
		t.Fatalf("tip after Restart = %d %s; want %d %s", h2, hash2, h, hash)
	}
	n.Send(n.NewAddress(), 100_000) // the wallets are loaded again
}

func TestGanache(t *testing.T) {
	g := chaintest.StartGanache(t)
	start := g.BlockNumber()
	g.Send(g.NewAddress(), big.NewInt(1))
	g.Mine(2)
	if got := g.BlockNumber(); got != start+3 {
		t.Fatalf("BlockNumber() = %d; want %d", got, start+3)
	}
	snap := g.Snapshot()
	g.Mine(1)
	g.Revert(snap)
	if got := g.BlockNumber(); got != start+3 {
		t.Fatalf("BlockNumber() after Revert = %d; want %d", got, start+3)
	}
}
