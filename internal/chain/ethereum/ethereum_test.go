package ethereum_test

import (
	"context"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/chain"
	"github.com/checkoutd/checkoutd/internal/chain/ethereum"
	"github.com/checkoutd/checkoutd/internal/chaintest"
)

func start(t *testing.T, cfg ethereum.Config) (*chaintest.Ganache, *ethereum.Node) {
	t.Helper()
	g := chaintest.StartGanache(t)
	cfg.URL = g.URL
	n, err := ethereum.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g, n
}

func watch(t *testing.T, g *chaintest.Ganache, n *ethereum.Node) string {
	t.Helper()
	addr := g.NewAddress()
	if err := n.Watch(context.Background(), addr); err != nil {
		t.Fatalf("Watch(%s): %v", addr, err)
	}
	return addr
}

func since(t *testing.T, n *ethereum.Node, cursor string) chain.Scan {
	t.Helper()
	s, err := n.Since(context.Background(), cursor)
	if err != nil {
		t.Fatalf("Since(%q): %v", cursor, err)
	}
	return s
}

func transaction(t *testing.T, n *ethereum.Node, txid string) chain.Tx {
	t.Helper()
	tx, err := n.Transaction(context.Background(), txid)
	if err != nil {
		t.Fatalf("Transaction(%s): %v", txid, err)
	}
	return tx
}

func txState(tx chain.Tx) string {
	s := fmt.Sprintf("%s %s conf=%d", tx.ID, tx.State, tx.Confirmations)
	for _, o := range tx.Outputs {
		s += fmt.Sprintf(" %s=%s", o.Address, o.Amount)
	}
	return s
}

func eth(s string) *big.Int {
	n, err := chain.ParseDecimal(s, ethereum.Decimals)
	if err != nil {
		panic(err)
	}
	return n
}

func TestTransferSeenAndCounted(t *testing.T) {
	g, n := start(t, ethereum.Config{})
	ctx := context.Background()
	addr := watch(t, g, n)
	other := g.NewAddress() // not watched
	first := since(t, n, "")
	if len(first.Txs) != 0 || first.Cursor != ethereum.Cursor(first.Tip) {
		t.Fatalf("Since(\"\") = %d txs, cursor %s; want none, at the tip %+v", len(first.Txs), first.Cursor, first.Tip)
	}

	// 16.5 ETH: more wei than an int64 holds.
	amount := eth("16.500000000000000001")
	txid := g.Send(addr, amount)
	g.Send(other, eth("1"))
	s := since(t, n, first.Cursor)
	if len(s.Txs) != 1 {
		t.Fatalf("Since = %d txs; want the one to the watched address", len(s.Txs))
	}
	tx := s.Txs[0]
	if tx.ID != txid || tx.State != chain.Confirmed || tx.Confirmations != 2 ||
		len(tx.Outputs) != 1 || tx.Outputs[0].Address != addr || tx.Outputs[0].Amount.Cmp(amount) != 0 {
		t.Fatalf("Since: %s; want %s confirmed conf=2 %s=%s", txState(tx), txid, addr, amount)
	}
	if s.Tip.Height != g.BlockNumber() || s.Cursor != ethereum.Cursor(s.Tip) {
		t.Errorf("Since: tip %+v cursor %s; want the tip %d", s.Tip, s.Cursor, g.BlockNumber())
	}
	if next := since(t, n, s.Cursor); len(next.Txs) != 0 || next.Reorg {
		t.Errorf("Since(tip) = %d txs, reorg %v; want none", len(next.Txs), next.Reorg)
	}

	g.Mine(10)
	tx = transaction(t, n, txid)
	if tx.State != chain.Confirmed || tx.Confirmations != 12 || tx.Outputs[0].Amount.Cmp(amount) != 0 {
		t.Errorf("Transaction after 10 blocks: %s; want confirmed conf=12", txState(tx))
	}
	bal, err := n.Balance(ctx, addr)
	if err != nil || bal.Cmp(amount) != 0 {
		t.Errorf("Balance(%s) = %v, %v; want %s", addr, bal, err, amount)
	}
	st, err := n.Status(ctx)
	if h := g.BlockNumber(); err != nil || st.Tip.Height != h || st.Best != h || st.Syncing {
		t.Errorf("Status() = %+v, %v; want tip %d, in step", st, err, h)
	}
	id, err := n.ChainID(ctx)
	if err != nil || id.Int64() != 1337 {
		t.Errorf("ChainID() = %v, %v; want 1337", id, err)
	}
	if tx := transaction(t, n, "0x"+strings.Repeat("0", 64)); tx.State != chain.Missing {
		t.Errorf("Transaction(unknown) = %s; want missing", txState(tx))
	}
}

func TestTwoTransfersOneAddress(t *testing.T) {
	g, n := start(t, ethereum.Config{})
	addr := watch(t, g, n)
	// Watched in mixed case, paid in lower case: the same address.
	upper := "0x" + strings.ToUpper(addr[2:])
	n.Unwatch(addr)
	if err := n.Watch(context.Background(), upper); err != nil {
		t.Fatal(err)
	}
	cursor := since(t, n, "").Cursor
	a := g.Send(addr, big.NewInt(300))
	b := g.Send(addr, big.NewInt(200))
	s := since(t, n, cursor)
	var ids []string
	total := new(big.Int)
	for _, tx := range s.Txs {
		ids = append(ids, tx.ID)
		for _, o := range tx.Outputs {
			if o.Address != upper {
				t.Errorf("output address %s; want it as watched, %s", o.Address, upper)
			}
			total.Add(total, o.Amount)
		}
	}
	if !slices.Equal(ids, []string{a, b}) || total.Int64() != 500 {
		t.Errorf("Since = %v total %s; want [%s %s] total 500", ids, total, a, b)
	}
}

// A scan catches up over several calls when far behind, as after a
// restart of checkoutd: a new adapter, the stored cursor, the addresses
// watched again.
func TestCatchUp(t *testing.T) {
	g, n := start(t, ethereum.Config{MaxBlocks: 3})
	addr := watch(t, g, n)
	cursor := since(t, n, "").Cursor
	g.Mine(4)
	txid := g.Send(addr, big.NewInt(1000))
	g.Mine(3)

	again, err := ethereum.New(ethereum.Config{URL: g.URL, MaxBlocks: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Watch(context.Background(), addr); err != nil {
		t.Fatal(err)
	}
	var found []chain.Tx
	calls := 0
	for {
		s := since(t, again, cursor)
		calls++
		found = append(found, s.Txs...)
		cursor = s.Cursor
		if cursor == ethereum.Cursor(s.Tip) {
			break
		}
		if calls > 10 {
			t.Fatalf("no caught up after %d calls", calls)
		}
	}
	if calls != 3 || len(found) != 1 || found[0].ID != txid || found[0].Confirmations != 4 {
		t.Errorf("catch-up: %d calls, %d txs; want 3 calls and %s with 4 confirmations", calls, len(found), txid)
	}
}

// A reorganisation that removes a counted transfer: the scan says Reorg and
// the transaction is gone.
func TestReorg(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run("restarted="+strconv.FormatBool(restarted), func(t *testing.T) {
			g, n := start(t, ethereum.Config{ReorgWindow: 8})
			addr := watch(t, g, n)
			cursor := since(t, n, "").Cursor
			snap := g.Snapshot()
			txid := g.Send(addr, big.NewInt(7))
			g.Mine(2)
			s := since(t, n, cursor)
			if len(s.Txs) != 1 || s.Txs[0].Confirmations != 3 {
				t.Fatalf("before the reorg: %d txs; want %s with 3 confirmations", len(s.Txs), txid)
			}
			cursor = s.Cursor

			g.Revert(snap)
			g.Mine(5) // a longer branch without the transfer
			if restarted {
				// A new adapter remembers no hashes: it goes back
				// ReorgWindow blocks.
				var err error
				if n, err = ethereum.New(ethereum.Config{URL: g.URL, ReorgWindow: 8}); err != nil {
					t.Fatal(err)
				}
				n.Watch(context.Background(), addr)
			}
			s = since(t, n, cursor)
			if !s.Reorg || len(s.Txs) != 0 || s.Cursor != ethereum.Cursor(s.Tip) {
				t.Errorf("after the reorg: reorg %v, %d txs, cursor %s; want a reorg, none, the tip %+v", s.Reorg, len(s.Txs), s.Cursor, s.Tip)
			}
			if tx := transaction(t, n, txid); tx.State != chain.Missing && tx.State != chain.Dropped {
				t.Errorf("Transaction after the reorg = %s; want missing or dropped", txState(tx))
			}

			// Paid again on the new branch, it is found from the new cursor.
			txid2 := g.Send(addr, big.NewInt(7))
			s = since(t, n, s.Cursor)
			if len(s.Txs) != 1 || s.Txs[0].ID != txid2 || s.Reorg {
				t.Errorf("after paying again: %d txs, reorg %v; want %s", len(s.Txs), s.Reorg, txid2)
			}
		})
	}
}

// A transfer that the recipient's code reverts is mined but moves no
// value: it is no payment.
func TestFailedTransfer(t *testing.T) {
	g, n := start(t, ethereum.Config{})
	refuser := g.DeployRefuser()
	if err := n.Watch(context.Background(), refuser); err != nil {
		t.Fatal(err)
	}
	cursor := since(t, n, "").Cursor
	txid := g.Send(refuser, eth("1"))
	if s := since(t, n, cursor); len(s.Txs) != 0 {
		t.Errorf("Since = %s; want no payment", txState(s.Txs[0]))
	}
	if tx := transaction(t, n, txid); tx.State != chain.Failed || tx.State.Counts() {
		t.Errorf("Transaction = %s; want failed", txState(tx))
	}
}

func TestWatchRefusesNonAddress(t *testing.T) {
	n, err := ethereum.New(ethereum.Config{URL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"", "0x123", "90f8bf6a479f320ead074411a4b0e7944ea8c9c1", "0x90f8bf6a479f320ead074411a4b0e7944ea8c9cg", "rltc1qkw8c792azdg5v6vxx0ktuyjvzp4979pjaqu4g2"} {
		if err := n.Watch(context.Background(), a); err == nil {
			t.Errorf("Watch(%q): no error", a)
		}
	}
}

// A provider's key in the URL never shows in an error or a printed Config.
func TestURLKeyNeverInErrors(t *testing.T) {
	const key = "k3y-0f-the-Provider"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := ethereum.Config{URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/v3/" + key}
	n, err := ethereum.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.Tip(context.Background())
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("Tip() on an unreachable node = %v; want an error without the key", err)
	}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, key) {
			t.Errorf("printed Config %q holds the key", s)
		}
	}
	if _, err := ethereum.New(ethereum.Config{URL: "::" + key}); err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("New(bad URL) = %v; want an error without the key", err)
	}
}
