package bitcoind_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/chain"
	"github.com/checkoutd/checkoutd/internal/chain/bitcoind"
	"github.com/checkoutd/checkoutd/internal/chaintest"
)

// wait bounds each wait for the node's wallet to catch up with its chain
// and mempool (it learns of them asynchronously).
const wait = 30 * time.Second

// start starts a node and the adapter with its wallet ready.
func start(t *testing.T) (*chaintest.Litecoin, *bitcoind.Node) {
	t.Helper()
	ltc := chaintest.StartLitecoin(t)
	n, err := bitcoind.New(bitcoind.Config{URL: ltc.URL, User: ltc.User, Password: ltc.Password, Wallet: "checkoutd"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.EnsureWallet(context.Background()); err != nil {
		t.Fatalf("EnsureWallet: %v", err)
	}
	return ltc, n
}

// watch returns a fresh address the adapter watches.
func watch(t *testing.T, ltc *chaintest.Litecoin, n *bitcoind.Node) string {
	t.Helper()
	addr := ltc.NewAddress()
	if err := n.Watch(context.Background(), addr); err != nil {
		t.Fatalf("Watch(%s): %v", addr, err)
	}
	return addr
}

// txState renders what a test checks of a transaction.
func txState(tx chain.Tx) string {
	s := fmt.Sprintf("%s conf=%d", tx.State, tx.Confirmations)
	for _, o := range tx.Outputs {
		s += fmt.Sprintf(" %s:%d=%s", o.Address, o.Index, o.Amount)
	}
	return s
}

// waitTx polls Transaction until the transaction is in state want with
// confs confirmations.
func waitTx(t *testing.T, n *bitcoind.Node, txid string, want chain.State, confs int64) chain.Tx {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		tx, err := n.Transaction(context.Background(), txid)
		if err != nil {
			t.Fatalf("Transaction(%s): %v", txid, err)
		}
		if tx.State == want && tx.Confirmations == confs {
			return tx
		}
		if time.Now().After(deadline) {
			t.Fatalf("Transaction(%s) = %s; want %s conf=%d within %v", txid, txState(tx), want, confs, wait)
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a condition with a deadline
	}
}

// waitScan polls Since(cursor) until ok accepts the scan, and returns it.
func waitScan(t *testing.T, n *bitcoind.Node, cursor string, what string, ok func(chain.Scan) bool) chain.Scan {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		s, err := n.Since(context.Background(), cursor)
		if err != nil {
			t.Fatalf("Since(%q): %v", cursor, err)
		}
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			var got []string
			for _, tx := range s.Txs {
				got = append(got, tx.ID+" "+txState(tx))
			}
			t.Fatalf("Since(%q) = %v (reorg %v); want %s within %v", cursor, got, s.Reorg, what, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// find returns the transaction txid of s.
func find(s chain.Scan, txid string) (chain.Tx, bool) {
	i := slices.IndexFunc(s.Txs, func(tx chain.Tx) bool { return tx.ID == txid })
	if i < 0 {
		return chain.Tx{}, false
	}
	return s.Txs[i], true
}

// has waits for a scan reporting txid in state.
func has(txid string, state chain.State) func(chain.Scan) bool {
	return func(s chain.Scan) bool {
		tx, ok := find(s, txid)
		return ok && tx.State == state
	}
}

func since(t *testing.T, n *bitcoind.Node, cursor string) chain.Scan {
	t.Helper()
	s, err := n.Since(context.Background(), cursor)
	if err != nil {
		t.Fatalf("Since(%q): %v", cursor, err)
	}
	return s
}

func TestPaymentSeenThenConfirmed(t *testing.T) {
	ltc, n := start(t)
	ctx := context.Background()
	addr := watch(t, ltc, n)
	first := since(t, n, "")
	if len(first.Txs) != 0 {
		t.Fatalf("Since(\"\") before any payment = %d transactions; want none", len(first.Txs))
	}

	txid := ltc.Send(addr, 12345)
	s := waitScan(t, n, first.Cursor, "the payment in the mempool", has(txid, chain.Mempool))
	tx, _ := find(s, txid)
	want := chain.Output{Index: tx.Outputs[0].Index, Address: addr}
	if len(tx.Outputs) != 1 || tx.Outputs[0].Address != addr || tx.Outputs[0].Amount.Int64() != 12345 || tx.Confirmations != 0 {
		t.Fatalf("Since: %s; want mempool conf=0 %s:%d=12345", txState(tx), want.Address, want.Index)
	}

	blocks := ltc.Mine(1)
	tx = waitTx(t, n, txid, chain.Confirmed, 1)
	height, _ := ltc.Tip()
	if tx.Block.Hash != blocks[0] || tx.Block.Height != height {
		t.Errorf("Transaction block = %+v; want %d %s", tx.Block, height, blocks[0])
	}
	if got := tx.Outputs[0].Amount.Int64(); got != 12345 {
		t.Errorf("Transaction amount = %d; want 12345", got)
	}
	// The scan from the first cursor reports the mined transaction.
	s = waitScan(t, n, first.Cursor, "the payment confirmed", has(txid, chain.Confirmed))
	if s.Tip.Hash != blocks[0] || s.Cursor != blocks[0] {
		t.Errorf("Since tip %+v cursor %s; want the mined block %s", s.Tip, s.Cursor, blocks[0])
	}
	// From the new cursor, nothing new.
	if next := since(t, n, s.Cursor); len(next.Txs) != 0 || next.Reorg {
		t.Errorf("Since(tip) = %d transactions, reorg %v; want none", len(next.Txs), next.Reorg)
	}

	ltc.Mine(5)
	waitTx(t, n, txid, chain.Confirmed, 6)
	tip, err := n.Tip(ctx)
	h, hash := ltc.Tip()
	if err != nil || tip.Height != h || tip.Hash != hash {
		t.Errorf("Tip() = %+v, %v; want %d %s", tip, err, h, hash)
	}
	st, err := n.Status(ctx)
	if err != nil || st.Tip != tip || st.Best != h || st.Syncing {
		t.Errorf("Status() = %+v, %v; want tip %+v, best %d, in step", st, err, tip, h)
	}
}

func TestAmountsExact(t *testing.T) {
	ltc, n := start(t)
	// Amounts whose decimal writing a float64 would not keep.
	for _, litoshi := range []int64{100_000, 12_345_678, 2_999_999_999, 1_234_567_891} {
		addr := watch(t, ltc, n)
		txid := ltc.Send(addr, litoshi)
		tx := waitTx(t, n, txid, chain.Mempool, 0)
		if len(tx.Outputs) != 1 || tx.Outputs[0].Amount.Int64() != litoshi || tx.Outputs[0].Address != addr {
			t.Errorf("Send(%d): Transaction = %s; want %s=%d", litoshi, txState(tx), addr, litoshi)
		}
	}
}

func TestTwoPaymentsToOneAddress(t *testing.T) {
	ltc, n := start(t)
	addr := watch(t, ltc, n)
	cursor := since(t, n, "").Cursor
	tx1 := ltc.Send(addr, 300_000)
	tx2 := ltc.Send(addr, 200_000)
	s := waitScan(t, n, cursor, "both payments", func(s chain.Scan) bool {
		return has(tx1, chain.Mempool)(s) && has(tx2, chain.Mempool)(s)
	})
	var total int64
	for _, tx := range s.Txs {
		for _, o := range tx.Outputs {
			if o.Address == addr {
				total += o.Amount.Int64()
			}
		}
	}
	if total != 500_000 {
		t.Errorf("Since: total to %s = %d; want 500000", addr, total)
	}
	ltc.Mine(2)
	waitTx(t, n, tx1, chain.Confirmed, 2)
	waitTx(t, n, tx2, chain.Confirmed, 2)
}

// A reorganisation takes a counted transaction out of the chain: it goes
// back to the mempool, its confirmations to 0, and the scan says Reorg.
func TestReorgUncounts(t *testing.T) {
	ltc, n := start(t)
	addr := watch(t, ltc, n)
	txid := ltc.Send(addr, 150_000)
	waitTx(t, n, txid, chain.Mempool, 0)
	blocks := ltc.Mine(2)
	waitTx(t, n, txid, chain.Confirmed, 2)
	cursor := since(t, n, "").Cursor
	if cursor != blocks[1] {
		t.Fatalf("cursor %s; want the tip %s", cursor, blocks[1])
	}

	ltc.InvalidateBlock(blocks[0]) // both blocks leave the chain
	s := waitScan(t, n, cursor, "the payment back in the mempool", has(txid, chain.Mempool))
	if !s.Reorg {
		t.Errorf("Since(old tip) after the reorg: Reorg = false; want true")
	}
	waitTx(t, n, txid, chain.Mempool, 0)

	// A competing branch mines it again, in another block.
	again := ltc.Mine(1)
	tx := waitTx(t, n, txid, chain.Confirmed, 1)
	if tx.Block.Hash != again[0] {
		t.Errorf("block after the reorg = %s; want %s", tx.Block.Hash, again[0])
	}
}

// A reorganisation can bring a double spend in place of a counted payment:
// the payment then stays out of the chain for good.
func TestReorgDoubleSpend(t *testing.T) {
	ltc, n := start(t)
	addr := watch(t, ltc, n)
	txid := ltc.Send(addr, 150_000)
	blocks := ltc.Mine(1)
	waitTx(t, n, txid, chain.Confirmed, 1)
	cursor := since(t, n, "").Cursor

	ltc.InvalidateBlock(blocks[0])
	waitTx(t, n, txid, chain.Mempool, 0)
	ltc.DoubleSpend(txid)
	ltc.Mine(1)
	s := waitScan(t, n, cursor, "the payment conflicted", has(txid, chain.Conflicted))
	if !s.Reorg {
		t.Errorf("Since(old tip): Reorg = false; want true")
	}
	waitTx(t, n, txid, chain.Conflicted, 0)
}

// A fee bump replaces the payment with another transaction paying the same:
// the first is dropped and names its replacement.
func TestReplacedByFee(t *testing.T) {
	ltc, n := start(t)
	addr := watch(t, ltc, n)
	cursor := since(t, n, "").Cursor
	old := ltc.Send(addr, 250_000)
	waitTx(t, n, old, chain.Mempool, 0)
	replacement := ltc.BumpFee(old)

	s := waitScan(t, n, cursor, "the old one dropped and the replacement in the mempool", func(s chain.Scan) bool {
		return has(old, chain.Dropped)(s) && has(replacement, chain.Mempool)(s)
	})
	tx, _ := find(s, old)
	if !slices.Contains(tx.Conflicts, replacement) {
		t.Errorf("dropped %s: Conflicts = %v; want %s among them", old, tx.Conflicts, replacement)
	}
	rtx, _ := find(s, replacement)
	if len(rtx.Outputs) != 1 || rtx.Outputs[0].Amount.Int64() != 250_000 {
		t.Errorf("replacement = %s; want 250000 to %s", txState(rtx), addr)
	}
	ltc.Mine(1)
	waitTx(t, n, replacement, chain.Confirmed, 1)
	waitTx(t, n, old, chain.Conflicted, 0)
}

// After the node restarts, the scan from the last cursor finds what
// happened meanwhile, and the wallet is loaded again when needed.
func TestNodeRestartCatchUp(t *testing.T) {
	ltc, n := start(t)
	addr := watch(t, ltc, n)
	cursor := since(t, n, "").Cursor
	txid := ltc.Send(addr, 400_000)
	waitTx(t, n, txid, chain.Mempool, 0)
	ltc.Mine(3)
	ltc.Stop()
	if _, err := n.Since(context.Background(), cursor); err == nil {
		t.Fatal("Since with the node stopped: no error")
	}
	ltc.Restart()
	// checkoutd restarted too: a new adapter, with the stored cursor.
	n, err := bitcoind.New(bitcoind.Config{URL: ltc.URL, User: ltc.User, Password: ltc.Password, Wallet: "checkoutd"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.EnsureWallet(context.Background()); err != nil {
		t.Fatalf("EnsureWallet after the restart: %v", err)
	}

	s := waitScan(t, n, cursor, "the payment mined while the watcher looked away", has(txid, chain.Confirmed))
	if tx, _ := find(s, txid); tx.Confirmations != 3 {
		t.Errorf("after restart: %s; want 3 confirmations", txState(tx))
	}

	// An operator unloads the wallet: the next call loads it again, and
	// addresses imported before are still watched.
	ltc.UnloadWallet("checkoutd")
	txid2 := ltc.Send(addr, 100_000)
	waitScan(t, n, s.Cursor, "a payment after the wallet was unloaded", has(txid2, chain.Mempool))
	// A new address imports into the reloaded wallet.
	addr2 := watch(t, ltc, n)
	txid3 := ltc.Send(addr2, 100_000)
	waitTx(t, n, txid3, chain.Mempool, 0)
}

func TestCursorUnknown(t *testing.T) {
	ltc, n := start(t)
	addr := watch(t, ltc, n)
	txid := ltc.Send(addr, 100_000)
	ltc.Mine(1)
	waitTx(t, n, txid, chain.Confirmed, 1)
	s := since(t, n, strings.Repeat("ab", 32))
	if !s.Reorg {
		t.Error("Since(unknown block): Reorg = false; want true")
	}
	if _, ok := find(s, txid); !ok {
		t.Errorf("Since(unknown block) misses %s: want the whole wallet listed", txid)
	}
}

func TestTransactionUnknown(t *testing.T) {
	_, n := start(t)
	id := strings.Repeat("0", 64)
	tx, err := n.Transaction(context.Background(), id)
	if err != nil || tx.State != chain.Missing {
		t.Errorf("Transaction(unknown) = %s, %v; want missing", txState(tx), err)
	}
}

func TestWatchRefusesForeignAddress(t *testing.T) {
	_, n := start(t)
	for _, addr := range []string{"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "nonsense", ""} {
		if err := n.Watch(context.Background(), addr); err == nil {
			t.Errorf("Watch(%q): no error", addr)
		}
	}
}

func TestWatchIdempotent(t *testing.T) {
	ltc, n := start(t)
	addr := watch(t, ltc, n)
	if err := n.Watch(context.Background(), addr); err != nil {
		t.Fatalf("Watch(%s) again: %v", addr, err)
	}
	if err := n.EnsureWallet(context.Background()); err != nil {
		t.Fatalf("EnsureWallet again: %v", err)
	}
	txid := ltc.Send(addr, 100_000)
	tx := waitTx(t, n, txid, chain.Mempool, 0)
	if len(tx.Outputs) != 1 {
		t.Errorf("outputs = %d; want 1", len(tx.Outputs))
	}
}

func TestEnsureWalletRefusesKeys(t *testing.T) {
	ltc := chaintest.StartLitecoin(t)
	n, err := bitcoind.New(bitcoind.Config{URL: ltc.URL, User: ltc.User, Password: ltc.Password, Wallet: chaintest.FunderWallet})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.EnsureWallet(context.Background()); err == nil || !strings.Contains(err.Error(), "private keys") {
		t.Errorf("EnsureWallet(a wallet with keys) = %v; want a refusal", err)
	}
}

// The RPC password never shows in an error, whatever goes wrong.
func TestPasswordNeverInErrors(t *testing.T) {
	ltc := chaintest.StartLitecoin(t)
	const secret = "s3cret-Pa55word-XYZ"
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error %q holds the password", what, err)
		}
		t.Logf("%s: %v", what, err)
	}
	bad, err := bitcoind.New(bitcoind.Config{URL: ltc.URL, User: ltc.User, Password: secret, Wallet: "w"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Tip(ctx)
	check("wrong password", err)
	if !strings.Contains(err.Error(), "user and password") {
		t.Errorf("wrong password: %q does not say to check the credentials", err)
	}
	check("wrong password, EnsureWallet", bad.EnsureWallet(ctx))

	// Nothing listens on a freshly freed port.
	down, err := bitcoind.New(bitcoind.Config{URL: "http://127.0.0.1:" + strconv.Itoa(freePort(t)), User: "u", Password: secret, Wallet: "w"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = down.Since(ctx, "")
	check("unreachable", err)

	_, err = bitcoind.New(bitcoind.Config{URL: "http://u:" + secret + "@127.0.0.1:1", User: "u", Password: secret, Wallet: "w"})
	check("credentials in the URL", err)

	for _, cfg := range []bitcoind.Config{
		{URL: ltc.URL, User: "u", Password: secret, Wallet: "w"},
		{URL: "http://u:" + secret + "@127.0.0.1:1", User: "u", Password: secret, Wallet: "w"},
	} {
		for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
			if strings.Contains(s, secret) {
				t.Errorf("printed Config %q holds the password", s)
			}
		}
	}
}
