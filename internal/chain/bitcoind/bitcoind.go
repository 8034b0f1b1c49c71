package bitcoind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/checkoutd/checkoutd/internal/chain"
	"github.com/checkoutd/checkoutd/internal/chain/jsonrpc"
)

// Decimals is how many base units (satoshi, litoshi) make one coin, as a
// power of ten.
const Decimals = 8

// MinVersion is the oldest node version supported (0.21.0): createwallet
// with load_on_startup.
const MinVersion = 210000

// Bitcoin Core error codes the adapter acts on.
const (
	codeInvalidAddressOrKey = -5  // unknown block or transaction, invalid address
	codeWalletError         = -4  // among others: compiled without SQLite
	codeWalletNotFound      = -18 // wallet not loaded, or no such wallet
	codeWalletAlreadyLoaded = -35
)

// Label is the label imported addresses get in the wallet.
const Label = "checkoutd"

// Config says how to reach a node.
type Config struct {
	// URL is the node's RPC address, such as http://127.0.0.1:8332,
	// without credentials in it.
	URL string
	// User and Password are the RPC credentials (rpcuser and
	// rpcpassword, or an rpcauth entry).
	User, Password string
	// Wallet names checkoutd's watch-only wallet on the node, such as
	// "checkoutd". It must not be a wallet holding private keys.
	Wallet string
	// HTTPClient makes the calls; nil for http.DefaultClient. Callers
	// bound each call with their context.
	HTTPClient *http.Client
}

// String keeps the password out of a Config printed by mistake.
func (c Config) String() string {
	u := "[invalid]"
	if p, err := url.Parse(c.URL); err == nil {
		u = p.Redacted()
	}
	return fmt.Sprintf("bitcoind{URL:%s User:%s Wallet:%s}", u, c.User, c.Wallet)
}

// GoString does the same for %#v.
func (c Config) GoString() string { return c.String() }

// Node is a Bitcoin Core or Litecoin Core node watched through its
// JSON-RPC. It is safe for concurrent use.
type Node struct {
	rpc        *jsonrpc.Client
	wallet     string
	walletPath string

	mu          sync.Mutex
	descriptors *bool // whether the wallet is a descriptor wallet, once known
}

var _ chain.Node = (*Node)(nil)

// New returns the adapter of the node cfg describes. It does not contact
// the node; EnsureWallet does.
func New(cfg Config) (*Node, error) {
	if cfg.Wallet == "" {
		return nil, errors.New("bitcoind: a wallet name is required (the watch-only wallet checkoutd keeps on the node)")
	}
	if cfg.User == "" {
		return nil, errors.New("bitcoind: an RPC user is required")
	}
	rpc, err := jsonrpc.New(cfg.URL, cfg.User, cfg.Password, cfg.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("bitcoind: %w", err)
	}
	return &Node{rpc: rpc, wallet: cfg.Wallet, walletPath: "/wallet/" + url.PathEscape(cfg.Wallet)}, nil
}

// call calls a node method.
func (n *Node) call(ctx context.Context, method string, params, result any) error {
	if err := n.rpc.Call(ctx, "", method, params, result); err != nil {
		return fmt.Errorf("bitcoind: %w", err)
	}
	return nil
}

// walletCall calls a method of the wallet, loading the wallet first when
// the node answers that it is not loaded (after a node restart).
func (n *Node) walletCall(ctx context.Context, method string, params, result any) error {
	err := n.rpc.Call(ctx, n.walletPath, method, params, result)
	if jsonrpc.IsCode(err, codeWalletNotFound) {
		if err := n.load(ctx); err != nil {
			return err
		}
		err = n.rpc.Call(ctx, n.walletPath, method, params, result)
	}
	if err != nil {
		return fmt.Errorf("bitcoind: wallet %q: %w", n.wallet, err)
	}
	return nil
}

// ErrNoWallet reports that the node has no wallet of the configured name:
// EnsureWallet creates it, and every open address must be watched again.
var ErrNoWallet = errors.New("the watch-only wallet is missing on the node: run EnsureWallet, then Watch every open address again")

// load loads the wallet.
func (n *Node) load(ctx context.Context) error {
	err := n.rpc.Call(ctx, "", "loadwallet", []any{n.wallet}, nil)
	switch {
	case err == nil, jsonrpc.IsCode(err, codeWalletAlreadyLoaded), alreadyLoaded(err):
		n.mu.Lock()
		n.descriptors = nil
		n.mu.Unlock()
		return nil
	case jsonrpc.IsCode(err, codeWalletNotFound):
		return fmt.Errorf("bitcoind: wallet %q: %w", n.wallet, ErrNoWallet)
	}
	return fmt.Errorf("bitcoind: load wallet %q: %w", n.wallet, err)
}

// alreadyLoaded reports the answer of nodes before 22.0 to loading a
// loaded wallet (a generic wallet error), as when two calls load it at once.
func alreadyLoaded(err error) bool {
	var e *jsonrpc.Error
	return errors.As(err, &e) && e.Code == codeWalletError && strings.Contains(e.Message, "already loaded")
}

// walletInfo is what EnsureWallet checks of the wallet.
type walletInfo struct {
	PrivateKeysEnabled bool  `json:"private_keys_enabled"`
	Descriptors        *bool `json:"descriptors"`
}

// EnsureWallet makes sure the node runs a supported version and has
// checkoutd's wallet loaded, creating it when the node has none of that
// name: watch-only (disable_private_keys), blank, a descriptor wallet where
// the node was built with them, loaded again when the node starts
// (load_on_startup). It refuses a wallet that holds private keys. Run it
// when checkoutd starts; it is idempotent.
func (n *Node) EnsureWallet(ctx context.Context) error {
	var net struct {
		Version int `json:"version"`
	}
	if err := n.call(ctx, "getnetworkinfo", nil, &net); err != nil {
		return err
	}
	if net.Version < MinVersion {
		return fmt.Errorf("bitcoind: node version %d is older than %d: upgrade to Bitcoin Core or Litecoin Core 0.21 or later", net.Version, MinVersion)
	}
	var info walletInfo
	err := n.rpc.Call(ctx, n.walletPath, "getwalletinfo", nil, &info)
	if jsonrpc.IsCode(err, codeWalletNotFound) {
		err = n.load(ctx)
		if errors.Is(err, ErrNoWallet) {
			err = n.create(ctx)
		}
		if err != nil {
			return err
		}
		err = n.rpc.Call(ctx, n.walletPath, "getwalletinfo", nil, &info)
	}
	if err != nil {
		return fmt.Errorf("bitcoind: wallet %q: %w", n.wallet, err)
	}
	if info.PrivateKeysEnabled {
		return fmt.Errorf("bitcoind: wallet %q holds private keys: give checkoutd a watch-only wallet of its own (a new wallet name)", n.wallet)
	}
	return nil
}

// create creates the wallet, as a descriptor wallet when the node can.
func (n *Node) create(ctx context.Context) error {
	params := map[string]any{
		"wallet_name":          n.wallet,
		"disable_private_keys": true,
		"blank":                true,
		"descriptors":          true,
		"load_on_startup":      true,
	}
	err := n.rpc.Call(ctx, "", "createwallet", params, nil)
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Code == codeWalletError && strings.Contains(strings.ToLower(e.Message), "sqlite") {
		// Built without descriptor wallets (Debian's litecoind): a legacy
		// watch-only wallet does the same job.
		params["descriptors"] = false
		err = n.rpc.Call(ctx, "", "createwallet", params, nil)
	}
	if err != nil {
		return fmt.Errorf("bitcoind: create wallet %q: %w", n.wallet, err)
	}
	return nil
}

// isDescriptors reports whether the wallet is a descriptor wallet.
func (n *Node) isDescriptors(ctx context.Context) (bool, error) {
	n.mu.Lock()
	d := n.descriptors
	n.mu.Unlock()
	if d != nil {
		return *d, nil
	}
	var info walletInfo
	if err := n.walletCall(ctx, "getwalletinfo", nil, &info); err != nil {
		return false, err
	}
	desc := info.Descriptors != nil && *info.Descriptors
	n.mu.Lock()
	n.descriptors = &desc
	n.mu.Unlock()
	return desc, nil
}

// Watch imports address into the wallet as the descriptor addr(address),
// from now on (no rescan): importdescriptors in a descriptor wallet,
// importmulti in a legacy one.
func (n *Node) Watch(ctx context.Context, address string) error {
	var di struct {
		Checksum string `json:"checksum"`
	}
	err := n.call(ctx, "getdescriptorinfo", []any{"addr(" + address + ")"}, &di)
	if jsonrpc.IsCode(err, codeInvalidAddressOrKey) {
		return fmt.Errorf("bitcoind: watch %q: not a valid address on the node's network", address)
	}
	if err != nil {
		return err
	}
	desc, err := n.isDescriptors(ctx)
	if err != nil {
		return err
	}
	req := map[string]any{"desc": "addr(" + address + ")#" + di.Checksum, "timestamp": "now", "label": Label}
	var results []struct {
		Success bool `json:"success"`
		Error   *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if desc {
		err = n.walletCall(ctx, "importdescriptors", []any{[]any{req}}, &results)
	} else {
		req["watchonly"] = true
		err = n.walletCall(ctx, "importmulti", []any{[]any{req}, map[string]any{"rescan": false}}, &results)
	}
	if err != nil {
		return err
	}
	if len(results) != 1 || !results[0].Success {
		msg := "no result"
		if len(results) == 1 && results[0].Error != nil {
			msg = results[0].Error.Message
		}
		return fmt.Errorf("bitcoind: watch %q: import refused: %s", address, msg)
	}
	return nil
}

// Tip returns the best block.
func (n *Node) Tip(ctx context.Context) (chain.Block, error) {
	st, err := n.Status(ctx)
	return st.Tip, err
}

// Status reads getblockchaininfo: the tip, the best header the node knows,
// and whether it is in its initial block download.
func (n *Node) Status(ctx context.Context) (chain.Status, error) {
	var info struct {
		Blocks               int64  `json:"blocks"`
		Headers              int64  `json:"headers"`
		BestBlockHash        string `json:"bestblockhash"`
		InitialBlockDownload bool   `json:"initialblockdownload"`
	}
	if err := n.call(ctx, "getblockchaininfo", nil, &info); err != nil {
		return chain.Status{}, err
	}
	return chain.Status{
		Tip:     chain.Block{Height: info.Blocks, Hash: info.BestBlockHash},
		Best:    max(info.Headers, info.Blocks),
		Syncing: info.InitialBlockDownload || info.Headers > info.Blocks,
	}, nil
}

// walletTx is a wallet transaction entry of listsinceblock and
// gettransaction.
type walletTx struct {
	TxID           string      `json:"txid"`
	Category       string      `json:"category"`
	Address        string      `json:"address"`
	Amount         json.Number `json:"amount"`
	Vout           int         `json:"vout"`
	Confirmations  int64       `json:"confirmations"`
	BlockHash      string      `json:"blockhash"`
	BlockHeight    int64       `json:"blockheight"`
	WalletConflict []string    `json:"walletconflicts"`
}

// Since lists the wallet's transactions after the block cursor names
// (listsinceblock with include_removed): those in later blocks of the best
// chain, those not in a block, and those the node's reorganisations
// removed since. The next cursor is the tip's hash. A cursor block that
// left the best chain sets Reorg; one the node does not know at all (a
// node rebuilt from scratch) sets Reorg and lists the whole wallet.
func (n *Node) Since(ctx context.Context, cursor string) (chain.Scan, error) {
	var scan chain.Scan
	if cursor != "" {
		var hdr struct {
			Confirmations int64 `json:"confirmations"`
		}
		err := n.call(ctx, "getblockheader", []any{cursor, true}, &hdr)
		switch {
		case jsonrpc.IsCode(err, codeInvalidAddressOrKey):
			cursor, scan.Reorg = "", true
		case err != nil:
			return chain.Scan{}, err
		case hdr.Confirmations < 0:
			scan.Reorg = true // listsinceblock goes back to the fork
		}
	}
	// include_watchonly is left to its default, true in a watch-only
	// wallet: newer nodes deprecate it.
	params := map[string]any{"target_confirmations": 1, "include_removed": true}
	if cursor != "" {
		params["blockhash"] = cursor
	}
	var r struct {
		Transactions []walletTx `json:"transactions"`
		Removed      []walletTx `json:"removed"`
		LastBlock    string     `json:"lastblock"`
	}
	if err := n.walletCall(ctx, "listsinceblock", params, &r); err != nil {
		return chain.Scan{}, err
	}
	txs := map[string]*chain.Tx{}
	var order []string
	for _, e := range r.Transactions {
		if e.Category != "receive" {
			continue
		}
		t := txs[e.TxID]
		if t == nil {
			st, err := n.state(ctx, e)
			if err != nil {
				return chain.Scan{}, err
			}
			t = &st
			txs[e.TxID] = t
			order = append(order, e.TxID)
		}
		if err := addOutput(t, e); err != nil {
			return chain.Scan{}, err
		}
	}
	// A removed transaction is in the list above when it is back in the
	// mempool or in another block; otherwise ask for it.
	for _, e := range r.Removed {
		if e.Category != "receive" || txs[e.TxID] != nil {
			continue
		}
		t, err := n.Transaction(ctx, e.TxID)
		if err != nil {
			return chain.Scan{}, err
		}
		txs[e.TxID] = &t
		order = append(order, e.TxID)
	}
	for _, id := range order {
		scan.Txs = append(scan.Txs, *txs[id])
	}
	if len(r.Removed) > 0 {
		scan.Reorg = true
	}
	tip, err := n.Tip(ctx)
	if err != nil {
		return chain.Scan{}, err
	}
	scan.Tip, scan.Cursor = tip, r.LastBlock
	return scan, nil
}

// Transaction returns the wallet's view of txid (gettransaction). It is
// Missing when the wallet does not know it.
func (n *Node) Transaction(ctx context.Context, txid string) (chain.Tx, error) {
	var r struct {
		walletTx
		Details []walletTx `json:"details"`
	}
	err := n.walletCall(ctx, "gettransaction", map[string]any{"txid": txid}, &r)
	if jsonrpc.IsCode(err, codeInvalidAddressOrKey) {
		return chain.Tx{ID: txid, State: chain.Missing}, nil
	}
	if err != nil {
		return chain.Tx{}, err
	}
	r.walletTx.TxID = txid
	t, err := n.state(ctx, r.walletTx)
	if err != nil {
		return chain.Tx{}, err
	}
	for _, d := range r.Details {
		if d.Category != "receive" {
			continue
		}
		if err := addOutput(&t, d); err != nil {
			return chain.Tx{}, err
		}
	}
	return t, nil
}

// state reads the state of a wallet transaction: its confirmations say
// confirmed (> 0) or conflicted (< 0); at 0 the mempool says whether it
// waits there or was dropped.
func (n *Node) state(ctx context.Context, e walletTx) (chain.Tx, error) {
	t := chain.Tx{ID: e.TxID, Conflicts: e.WalletConflict}
	switch {
	case e.Confirmations > 0:
		t.State, t.Confirmations = chain.Confirmed, e.Confirmations
		t.Block = chain.Block{Height: e.BlockHeight, Hash: e.BlockHash}
	case e.Confirmations < 0:
		t.State = chain.Conflicted
	default:
		err := n.call(ctx, "getmempoolentry", []any{e.TxID}, nil)
		switch {
		case err == nil:
			t.State = chain.Mempool
		case jsonrpc.IsCode(err, codeInvalidAddressOrKey):
			t.State = chain.Dropped
		default:
			return chain.Tx{}, err
		}
	}
	return t, nil
}

// addOutput adds the receive entry e to t.
func addOutput(t *chain.Tx, e walletTx) error {
	amount, err := chain.ParseDecimal(e.Amount.String(), Decimals)
	if err != nil {
		return fmt.Errorf("bitcoind: transaction %s output %d: %w", e.TxID, e.Vout, err)
	}
	if amount.Sign() <= 0 {
		return fmt.Errorf("bitcoind: transaction %s output %d: received amount %s is not positive", e.TxID, e.Vout, amount)
	}
	for _, o := range t.Outputs {
		if o.Index == e.Vout {
			return nil
		}
	}
	t.Outputs = append(t.Outputs, chain.Output{Index: e.Vout, Address: e.Address, Amount: new(big.Int).Set(amount)})
	return nil
}
