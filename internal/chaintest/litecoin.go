package chaintest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Litecoin is a Litecoin Core node in regtest, with a funded wallet
// (FunderWallet) that pays like a buyer and a wallet (PayeeWallet) that hands
// out fresh addresses nobody else watches.
type Litecoin struct {
	// URL is the node's RPC address (no wallet path); User and Password
	// its credentials.
	URL, User, Password string

	t       testing.TB
	bin     string
	dir     string
	args    []string
	proc    *proc
	rpc     *rpcClient
	wallets bool // the funder and payee wallets exist
	stopped bool
}

// The wallets StartLitecoin makes.
const (
	FunderWallet = "funder"
	PayeeWallet  = "payee"
)

// StartBlocks is how many blocks StartLitecoin mines: the rewards of the
// first 20 are mature (100 blocks deep), 1000 LTC for the funder to spend.
const StartBlocks = 120

// StartLitecoin starts litecoind -regtest on free ports in a temporary data
// directory, creates the funder and payee wallets and mines StartBlocks
// blocks to the funder. The node stops when t ends.
//
// The node relays replacements (-mempoolreplacement=1, off by default in
// Litecoin Core) and its wallets signal them (-walletrbf=1), so that BumpFee
// works.
func StartLitecoin(t testing.TB) *Litecoin {
	t.Helper()
	bin, err := lookPath("CHECKOUTD_TEST_LITECOIND", "litecoind")
	if err != nil {
		missing(t, "litecoind not installed: apt-get install -y litecoind (or .ci/install-chains, or set CHECKOUTD_TEST_LITECOIND)")
	}
	dir := tempDir(t, "checkoutd-litecoind-")
	rpcPort, p2pPort := freePort(t), freePort(t)
	n := &Litecoin{
		URL:      "http://127.0.0.1:" + strconv.Itoa(rpcPort),
		User:     "u",
		Password: "p-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		t:        t,
		bin:      bin,
		dir:      dir,
	}
	n.args = []string{
		"-regtest", "-datadir=" + dir, "-server=1",
		"-rpcport=" + strconv.Itoa(rpcPort), "-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1",
		"-port=" + strconv.Itoa(p2pPort), "-bind=127.0.0.1:" + strconv.Itoa(p2pPort),
		"-rpcuser=" + n.User, "-rpcpassword=" + n.Password,
		"-fallbackfee=0.0001", "-txindex", "-walletrbf=1", "-mempoolreplacement=1",
		"-dnsseed=0", "-upnp=0", "-discover=0", "-listenonion=0",
		"-printtoconsole=1", "-nodebuglogfile",
	}
	n.rpc = &rpcClient{url: n.URL, user: n.User, password: n.Password, http: &http.Client{}}
	t.Cleanup(n.kill)
	n.start()
	for _, w := range []string{FunderWallet, PayeeWallet} {
		n.Call("createwallet", map[string]any{"wallet_name": w, "load_on_startup": true})
	}
	n.wallets = true
	n.Mine(StartBlocks)
	return n
}

func (n *Litecoin) start() {
	n.t.Helper()
	p, err := startProc("litecoind", n.bin, n.args, filepath.Join(n.dir, "litecoind.log"))
	if err != nil {
		n.t.Fatal(err)
	}
	n.proc, n.stopped = p, false
	err = waitUntil(p, StartTimeout, func() error {
		_, err := n.rpc.call(context.Background(), "", "getblockchaininfo", nil)
		return err
	})
	if err != nil {
		n.t.Fatal(err)
	}
	// Wallets load after the RPC opens; wait until the funder's is back.
	if n.wallets {
		err = waitUntil(p, StartTimeout, func() error {
			_, err := n.rpc.call(context.Background(), "/wallet/"+FunderWallet, "getwalletinfo", nil)
			return err
		})
		if err != nil {
			n.t.Fatal(err)
		}
	}
}

func (n *Litecoin) kill() {
	if n.proc != nil {
		n.proc.kill()
	}
}

// Try calls a node method and returns its error, for calls a test expects
// to fail. params is a list of arguments, or a map of named ones.
func (n *Litecoin) Try(method string, params any) (json.RawMessage, error) {
	return n.rpc.call(context.Background(), "", method, params)
}

// Call calls a node method (no wallet) and fails t on an error.
func (n *Litecoin) Call(method string, params any) json.RawMessage {
	n.t.Helper()
	r, err := n.Try(method, params)
	if err != nil {
		n.t.Fatalf("litecoind: %v", err)
	}
	return r
}

// TryWallet calls a method of a wallet and returns its error, for calls a
// test expects may fail (or may not succeed yet).
func (n *Litecoin) TryWallet(wallet, method string, params any) (json.RawMessage, error) {
	return n.rpc.call(context.Background(), "/wallet/"+wallet, method, params)
}

// WaitWallet waits until wallet has txid: the node tells its wallets of a
// new transaction asynchronously, so one paying a watched address may not
// be in the watching wallet yet when Send returns.
func (n *Litecoin) WaitWallet(wallet, txid string) {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := n.TryWallet(wallet, "gettransaction", []any{txid, true}); err == nil {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("wallet %s never saw transaction %s", wallet, txid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CallWallet calls a method of a wallet and fails t on an error.
func (n *Litecoin) CallWallet(wallet, method string, params any) json.RawMessage {
	n.t.Helper()
	r, err := n.rpc.call(context.Background(), "/wallet/"+wallet, method, params)
	if err != nil {
		n.t.Fatalf("litecoind wallet %s: %v", wallet, err)
	}
	return r
}

func (n *Litecoin) newAddress(wallet string) string {
	n.t.Helper()
	var a string
	if err := decode(n.CallWallet(wallet, "getnewaddress", []any{"", "bech32"}), &a); err != nil {
		n.t.Fatal(err)
	}
	return a
}

// NewAddress returns a fresh native segwit address of the payee wallet,
// standing for an address checkoutd derived from a merchant's key.
func (n *Litecoin) NewAddress() string {
	n.t.Helper()
	return n.newAddress(PayeeWallet)
}

// Send pays litoshi to addr from the funder wallet and returns the txid.
// The transaction signals replaceability.
func (n *Litecoin) Send(addr string, litoshi int64) string {
	n.t.Helper()
	var txid string
	r := n.CallWallet(FunderWallet, "sendtoaddress", map[string]any{
		"address": addr, "amount": json.Number(formatCoins(litoshi)), "replaceable": true,
	})
	if err := decode(r, &txid); err != nil {
		n.t.Fatal(err)
	}
	return txid
}

// Mine mines count blocks and returns their hashes.
func (n *Litecoin) Mine(count int) []string {
	n.t.Helper()
	var hashes []string
	// A fresh address each time makes each block new: a block mined again
	// at the height of an invalidated one, with the same transactions in
	// the same second, would otherwise be that invalid block.
	if err := decode(n.Call("generatetoaddress", []any{count, n.newAddress(FunderWallet)}), &hashes); err != nil {
		n.t.Fatal(err)
	}
	return hashes
}

// Tip returns the height and hash of the best block.
func (n *Litecoin) Tip() (int64, string) {
	n.t.Helper()
	var info struct {
		Blocks        int64  `json:"blocks"`
		BestBlockHash string `json:"bestblockhash"`
	}
	if err := decode(n.Call("getblockchaininfo", nil), &info); err != nil {
		n.t.Fatal(err)
	}
	return info.Blocks, info.BestBlockHash
}

// InvalidateBlock marks a block invalid: the node falls back to its
// parent, and the transactions of the block and its descendants return to
// the mempool. Mining again then builds a competing branch: a
// reorganisation.
func (n *Litecoin) InvalidateBlock(hash string) {
	n.t.Helper()
	n.Call("invalidateblock", []any{hash})
}

// ReconsiderBlock undoes InvalidateBlock: the node goes back to the longest
// valid chain.
func (n *Litecoin) ReconsiderBlock(hash string) {
	n.t.Helper()
	n.Call("reconsiderblock", []any{hash})
}

// BumpFee replaces the funder's unconfirmed transaction txid with one that
// pays the same outputs with a higher fee (BIP 125), and returns the new
// txid. The old transaction leaves the mempool.
func (n *Litecoin) BumpFee(txid string) string {
	n.t.Helper()
	var r struct {
		TxID   string   `json:"txid"`
		Errors []string `json:"errors"`
	}
	if err := decode(n.CallWallet(FunderWallet, "bumpfee", []any{txid}), &r); err != nil {
		n.t.Fatal(err)
	}
	if len(r.Errors) > 0 || r.TxID == "" {
		n.t.Fatalf("bumpfee %s: %v", txid, r.Errors)
	}
	n.waitInMempool(r.TxID)
	return r.TxID
}

// waitInMempool waits until the node's mempool holds txid: the wallet
// submits it to the mempool after its RPC returned.
func (n *Litecoin) waitInMempool(txid string) {
	n.t.Helper()
	err := waitUntil(n.proc, 30*time.Second, func() error {
		_, err := n.Try("getmempoolentry", []any{txid})
		return err
	})
	if err != nil {
		n.t.Fatalf("wait for %s in the mempool: %v", txid, err)
	}
}

// DoubleSpend mines a block holding a transaction that spends the inputs
// of the funder's unconfirmed transaction txid back to the funder, as a
// buyer cheating (or a miner preferring another version) would. txid can
// then never confirm; it leaves the mempool. It returns the conflicting
// transaction's id and the new block's hash.
func (n *Litecoin) DoubleSpend(txid string) (conflict, block string) {
	n.t.Helper()
	raw := n.walletTx(txid)
	var tx struct {
		Vin []struct {
			TxID string `json:"txid"`
			Vout int    `json:"vout"`
		} `json:"vin"`
	}
	if err := decode(n.Call("decoderawtransaction", []any{raw}), &tx); err != nil {
		n.t.Fatal(err)
	}
	var total int64
	var inputs []map[string]any
	for _, in := range tx.Vin {
		var prev struct {
			Vout []struct {
				Value json.Number `json:"value"`
			} `json:"vout"`
		}
		if err := decode(n.Call("decoderawtransaction", []any{n.walletTx(in.TxID)}), &prev); err != nil {
			n.t.Fatal(err)
		}
		v, err := parseCoins(prev.Vout[in.Vout].Value.String())
		if err != nil {
			n.t.Fatal(err)
		}
		total += v
		inputs = append(inputs, map[string]any{"txid": in.TxID, "vout": in.Vout})
	}
	const fee = 100_000 // 0.001 LTC: plenty for a regtest block
	var unsigned string
	out := map[string]any{n.newAddress(FunderWallet): json.Number(formatCoins(total - fee))}
	if err := decode(n.Call("createrawtransaction", []any{inputs, []any{out}}), &unsigned); err != nil {
		n.t.Fatal(err)
	}
	var signed struct {
		Hex      string `json:"hex"`
		Complete bool   `json:"complete"`
	}
	if err := decode(n.CallWallet(FunderWallet, "signrawtransactionwithwallet", []any{unsigned}), &signed); err != nil || !signed.Complete {
		n.t.Fatalf("sign the double spend: %v (complete %v)", err, signed.Complete)
	}
	if err := decode(n.Call("decoderawtransaction", []any{signed.Hex}), &struct {
		TxID *string `json:"txid"`
	}{&conflict}); err != nil {
		n.t.Fatal(err)
	}
	var mined struct {
		Hash string `json:"hash"`
	}
	if err := decode(n.Call("generateblock", []any{n.newAddress(FunderWallet), []any{signed.Hex}}), &mined); err != nil {
		n.t.Fatal(err)
	}
	return conflict, mined.Hash
}

// Drop takes the funder's unconfirmed transaction txid out of the node's
// mempool and keeps it out, as a node that evicts a transaction paying too
// low a fee does: the node restarts without its mempool and without
// broadcasting, every wallet that has the transaction abandons it (so none
// broadcasts it again), and the node restarts as it was. It returns the
// transaction's raw hex, for Rebroadcast.
func (n *Litecoin) Drop(txid string) string {
	n.t.Helper()
	raw := n.walletTx(txid)
	n.Stop()
	// The mempool a node saves when it stops (-persistmempool), which it
	// would load again at the next start.
	if err := os.Remove(filepath.Join(n.dir, "regtest", "mempool.dat")); err != nil && !errors.Is(err, os.ErrNotExist) {
		n.t.Fatal(err)
	}
	args := n.args
	n.args = append(append([]string(nil), args...), "-persistmempool=0", "-walletbroadcast=0")
	n.start()
	n.args = args
	var dir struct {
		Wallets []struct {
			Name string `json:"name"`
		} `json:"wallets"`
	}
	var loaded []string
	if err := decode(n.Call("listwalletdir", nil), &dir); err != nil {
		n.t.Fatal(err)
	}
	if err := decode(n.Call("listwallets", nil), &loaded); err != nil {
		n.t.Fatal(err)
	}
	for _, w := range dir.Wallets {
		if !slices.Contains(loaded, w.Name) {
			n.Call("loadwallet", []any{w.Name})
		}
		if _, err := n.TryWallet(w.Name, "gettransaction", []any{txid, true}); err != nil {
			continue // a wallet that never saw it
		}
		n.CallWallet(w.Name, "abandontransaction", []any{txid})
	}
	n.Restart()
	if n.InMempool(txid) {
		n.t.Fatalf("drop %s: still in the mempool after the restart", txid)
	}
	return raw
}

// Rebroadcast sends raw, a transaction dropped with Drop, to the node
// again, as its wallet would, and waits until the mempool holds it.
func (n *Litecoin) Rebroadcast(raw string) string {
	n.t.Helper()
	var txid string
	if err := decode(n.Call("sendrawtransaction", []any{raw}), &txid); err != nil {
		n.t.Fatal(err)
	}
	n.waitInMempool(txid)
	return txid
}

// walletTx returns the raw hex of a transaction of the funder wallet.
func (n *Litecoin) walletTx(txid string) string {
	n.t.Helper()
	var r struct {
		Hex string `json:"hex"`
	}
	if err := decode(n.CallWallet(FunderWallet, "gettransaction", []any{txid}), &r); err != nil {
		n.t.Fatal(err)
	}
	return r.Hex
}

// InMempool reports whether the node's mempool holds txid.
func (n *Litecoin) InMempool(txid string) bool {
	n.t.Helper()
	_, err := n.Try("getmempoolentry", []any{txid})
	var rpcErr *RPCError
	if err != nil && !errors.As(err, &rpcErr) {
		n.t.Fatal(err)
	}
	return err == nil
}

// UnloadWallet unloads a wallet, as an operator might, or as a node
// started without it would have it.
func (n *Litecoin) UnloadWallet(name string) {
	n.t.Helper()
	n.Call("unloadwallet", []any{name})
}

// Stop shuts the node down cleanly (the stop RPC) and waits for it to
// exit, keeping its data directory for Restart.
func (n *Litecoin) Stop() {
	n.t.Helper()
	if n.stopped {
		return
	}
	n.Call("stop", nil)
	if !n.proc.wait(StartTimeout) {
		n.t.Fatalf("litecoind did not stop within %v: %s", StartTimeout, n.proc.tail())
	}
	n.stopped = true
}

// Restart stops the node if it runs and starts it again on the same data
// directory and ports, waiting until it answers and its wallets are loaded.
func (n *Litecoin) Restart() {
	n.t.Helper()
	n.Stop()
	n.start()
}

// formatCoins renders litoshi as an exact decimal of coins: 12345 is
// "0.00012345".
func formatCoins(litoshi int64) string {
	r := new(big.Rat).SetFrac64(litoshi, 100_000_000)
	return r.FloatString(8)
}

// parseCoins reads an exact decimal of coins ("0.00012345") as litoshi.
func parseCoins(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 8 {
		return 0, fmt.Errorf("amount %q has more than 8 decimals", s)
	}
	v, err := strconv.ParseInt(whole+frac+strings.Repeat("0", 8-len(frac)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q: %w", s, err)
	}
	return v, nil
}
