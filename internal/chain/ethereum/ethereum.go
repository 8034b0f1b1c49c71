package ethereum

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/checkoutd/checkoutd/internal/chain"
	"github.com/checkoutd/checkoutd/internal/chain/jsonrpc"
)

// Decimals is how many wei make one ether, as a power of ten.
const Decimals = 18

// Defaults of Config.
const (
	DefaultMaxBlocks   = 100
	DefaultReorgWindow = 64
)

// Config says how to reach a node.
type Config struct {
	// URL is the node's JSON-RPC address, such as http://127.0.0.1:8545
	// or a provider's URL with its key in the path.
	URL string
	// HTTPClient makes the calls; nil for http.DefaultClient.
	HTTPClient *http.Client
	// MaxBlocks bounds the blocks one Since scans (DefaultMaxBlocks when
	// 0): a watcher far behind catches up over several calls, each one
	// short.
	MaxBlocks int
	// ReorgWindow is how many blocks back Since scans again when the
	// cursor's block left the chain and the adapter does not remember
	// where the branches part (after a restart): DefaultReorgWindow when
	// 0. Deeper reorganisations than this are not expected after the
	// merge (finality comes within two epochs, 64 blocks).
	ReorgWindow int
}

// String keeps the URL, which may hold a key, out of a Config printed by
// mistake.
func (c Config) String() string { return "ethereum{URL:[redacted]}" }

// GoString does the same for %#v.
func (c Config) GoString() string { return c.String() }

// Node is an Ethereum node watched for transfers to addresses. It is safe
// for concurrent use; its scans are meant to run one at a time.
type Node struct {
	rpc         *jsonrpc.Client
	maxBlocks   int64
	reorgWindow int64

	mu      sync.Mutex
	watched map[string]string // lower-case address to the address as watched
	hashes  map[int64]string  // hashes of blocks scanned lately, by height
}

var _ chain.Node = (*Node)(nil)

// New returns the adapter of the node cfg describes. It does not contact
// the node.
func New(cfg Config) (*Node, error) {
	rpc, err := jsonrpc.New(cfg.URL, "", "", cfg.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("ethereum: %w", err)
	}
	n := &Node{rpc: rpc, maxBlocks: int64(cfg.MaxBlocks), reorgWindow: int64(cfg.ReorgWindow),
		watched: map[string]string{}, hashes: map[int64]string{}}
	if n.maxBlocks <= 0 {
		n.maxBlocks = DefaultMaxBlocks
	}
	if n.reorgWindow <= 0 {
		n.reorgWindow = DefaultReorgWindow
	}
	return n, nil
}

func (n *Node) call(ctx context.Context, method string, params, result any) error {
	if err := n.rpc.Call(ctx, "", method, params, result); err != nil {
		return fmt.Errorf("ethereum: %w", err)
	}
	return nil
}

// ValidAddress reports whether s is an address: 0x and 40 hex digits (the
// EIP-55 checksum of mixed-case addresses is not checked here).
func ValidAddress(s string) bool {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != 40 {
		return false
	}
	for _, r := range h {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// Watch adds address to the addresses the scans look for. The set lives in
// memory: after a restart, the watcher watches its open addresses again
// before its first Since.
func (n *Node) Watch(ctx context.Context, address string) error {
	if !ValidAddress(address) {
		return fmt.Errorf("ethereum: watch %q: not an address (0x and 40 hex digits)", address)
	}
	n.mu.Lock()
	n.watched[strings.ToLower(address)] = address
	n.mu.Unlock()
	return nil
}

// Unwatch removes address from the scans, once its session is settled.
func (n *Node) Unwatch(address string) {
	n.mu.Lock()
	delete(n.watched, strings.ToLower(address))
	n.mu.Unlock()
}

// ChainID returns the node's chain id (1 on mainnet), for checking at
// start that the node is on the chain the operator meant.
func (n *Node) ChainID(ctx context.Context) (*big.Int, error) {
	var s string
	if err := n.call(ctx, "eth_chainId", nil, &s); err != nil {
		return nil, err
	}
	id, err := chain.ParseQuantity(s)
	if err != nil {
		return nil, fmt.Errorf("ethereum: eth_chainId: %w", err)
	}
	return id, nil
}

// Balance returns the balance of address in wei at the latest block.
func (n *Node) Balance(ctx context.Context, address string) (*big.Int, error) {
	if !ValidAddress(address) {
		return nil, fmt.Errorf("ethereum: balance of %q: not an address", address)
	}
	var s string
	if err := n.call(ctx, "eth_getBalance", []any{address, "latest"}, &s); err != nil {
		return nil, err
	}
	b, err := chain.ParseQuantity(s)
	if err != nil {
		return nil, fmt.Errorf("ethereum: eth_getBalance: %w", err)
	}
	return b, nil
}

// rpcHeader is a block of eth_getBlockByNumber without its
// transactions.
type rpcHeader struct {
	Number     string `json:"number"`
	Hash       string `json:"hash"`
	ParentHash string `json:"parentHash"`
}

// rpcBlock is a block of eth_getBlockByNumber with full transactions.
type rpcBlock struct {
	rpcHeader
	Transactions []rpcTx `json:"transactions"`
}

// rpcTx is a transaction of eth_getBlockByNumber (full) and
// eth_getTransactionByHash.
type rpcTx struct {
	Hash        string  `json:"hash"`
	To          *string `json:"to"`
	Value       string  `json:"value"`
	BlockHash   *string `json:"blockHash"`
	BlockNumber *string `json:"blockNumber"`
}

// block returns the block at height with its transactions, or nil when
// the chain has none there.
func (n *Node) block(ctx context.Context, height int64) (*rpcBlock, error) {
	var b *rpcBlock
	if err := n.call(ctx, "eth_getBlockByNumber", []any{quantity(height), true}, &b); err != nil {
		return nil, err
	}
	return b, nil
}

// header returns the block at a height ("latest" or a quantity) without
// its transactions, or nil when the chain has none there.
func (n *Node) header(ctx context.Context, height string) (*rpcHeader, error) {
	var b *rpcHeader
	if err := n.call(ctx, "eth_getBlockByNumber", []any{height, false}, &b); err != nil {
		return nil, err
	}
	return b, nil
}

func quantity(n int64) string { return "0x" + strconv.FormatInt(n, 16) }

func parseHeight(s string) (int64, error) {
	h, err := chain.ParseQuantity(s)
	if err != nil || !h.IsInt64() {
		return 0, fmt.Errorf("ethereum: block number %q: not a height", s)
	}
	return h.Int64(), nil
}

// Tip returns the latest block.
func (n *Node) Tip(ctx context.Context) (chain.Block, error) {
	b, err := n.header(ctx, "latest")
	if err != nil {
		return chain.Block{}, err
	}
	if b == nil {
		return chain.Block{}, errors.New("ethereum: the node has no latest block: is it synced?")
	}
	h, err := parseHeight(b.Number)
	if err != nil {
		return chain.Block{}, err
	}
	return chain.Block{Height: h, Hash: b.Hash}, nil
}

// Status reads the latest block and eth_syncing, whose answer is false
// or the current and highest blocks of a sync under way.
func (n *Node) Status(ctx context.Context) (chain.Status, error) {
	tip, err := n.Tip(ctx)
	if err != nil {
		return chain.Status{}, err
	}
	st := chain.Status{Tip: tip, Best: tip.Height}
	var raw json.RawMessage
	if err := n.call(ctx, "eth_syncing", nil, &raw); err != nil {
		return chain.Status{}, err
	}
	var syncing struct {
		HighestBlock string `json:"highestBlock"`
	}
	if string(raw) == "false" || json.Unmarshal(raw, &syncing) != nil {
		return st, nil
	}
	st.Syncing = true
	if h, err := parseHeight(syncing.HighestBlock); err == nil {
		st.Best = max(h, tip.Height)
	}
	return st, nil
}

// Cursor returns the cursor of a scan that ended at block b.
func Cursor(b chain.Block) string { return strconv.FormatInt(b.Height, 10) + ":" + b.Hash }

// parseCursor reads a cursor of Cursor.
func parseCursor(c string) (chain.Block, error) {
	h, hash, ok := strings.Cut(c, ":")
	height, err := strconv.ParseInt(h, 10, 64)
	if !ok || err != nil || height < 0 || hash == "" {
		return chain.Block{}, fmt.Errorf("ethereum: cursor %q is not one of this adapter's (height:hash)", c)
	}
	return chain.Block{Height: height, Hash: hash}, nil
}

// Since scans the blocks after the cursor's, at most MaxBlocks of them,
// for transfers to watched addresses; the returned cursor is the last block
// scanned, so a caller behind the tip calls again until
// Scan.Cursor names Scan.Tip. An empty cursor starts at the tip, scanning
// nothing. When the cursor's block is no longer in the chain, Since finds
// where the branches part (from the hashes it scanned lately, else
// ReorgWindow blocks back), scans from there and sets Reorg.
//
// Ethereum nodes do not agree on what a pending block holds, so
// transactions are reported once mined, each Confirmed.
func (n *Node) Since(ctx context.Context, cursor string) (chain.Scan, error) {
	tip, err := n.Tip(ctx)
	if err != nil {
		return chain.Scan{}, err
	}
	scan := chain.Scan{Tip: tip}
	if cursor == "" {
		n.remember(tip)
		scan.Cursor = Cursor(tip)
		return scan, nil
	}
	last, err := parseCursor(cursor)
	if err != nil {
		return chain.Scan{}, err
	}
	ok, err := n.inChain(ctx, last)
	if err != nil {
		return chain.Scan{}, err
	}
	if !ok {
		scan.Reorg = true
		if last, err = n.fork(ctx, last.Height); err != nil {
			return chain.Scan{}, err
		}
	}
	n.mu.Lock()
	watched := make(map[string]string, len(n.watched))
	for k, v := range n.watched {
		watched[k] = v
	}
	n.mu.Unlock()

	end := min(tip.Height, last.Height+n.maxBlocks)
	for h := last.Height + 1; h <= end; h++ {
		b, err := n.block(ctx, h)
		if err != nil {
			return chain.Scan{}, err
		}
		if b == nil || !strings.EqualFold(b.ParentHash, last.Hash) {
			// The chain changed under the scan: stop here; the next
			// Since finds the fork.
			break
		}
		for _, t := range b.Transactions {
			if t.To == nil {
				continue
			}
			addr, ok := watched[strings.ToLower(*t.To)]
			if !ok {
				continue
			}
			tx, err := n.payment(ctx, t, addr, chain.Block{Height: h, Hash: b.Hash}, tip.Height)
			if err != nil {
				return chain.Scan{}, err
			}
			if tx.State == chain.Confirmed && len(tx.Outputs) > 0 {
				scan.Txs = append(scan.Txs, tx)
			}
		}
		last = chain.Block{Height: h, Hash: b.Hash}
		n.remember(last)
	}
	scan.Cursor = Cursor(last)
	return scan, nil
}

// inChain reports whether b is the chain's block at its height.
func (n *Node) inChain(ctx context.Context, b chain.Block) (bool, error) {
	got, err := n.header(ctx, quantity(b.Height))
	if err != nil {
		return false, err
	}
	return got != nil && strings.EqualFold(got.Hash, b.Hash), nil
}

// fork returns the highest block below height that is in the chain and
// was scanned before, found from the remembered hashes; without them, the
// chain's block ReorgWindow below height.
func (n *Node) fork(ctx context.Context, height int64) (chain.Block, error) {
	floor := max(0, height-n.reorgWindow)
	for h := height - 1; h > floor; h-- {
		n.mu.Lock()
		hash, ok := n.hashes[h]
		n.mu.Unlock()
		if !ok {
			break
		}
		b := chain.Block{Height: h, Hash: hash}
		in, err := n.inChain(ctx, b)
		if err != nil {
			return chain.Block{}, err
		}
		if in {
			return b, nil
		}
	}
	b, err := n.header(ctx, quantity(floor))
	if err != nil {
		return chain.Block{}, err
	}
	if b == nil {
		return chain.Block{}, fmt.Errorf("ethereum: the node has no block %d: is it synced?", floor)
	}
	return chain.Block{Height: floor, Hash: b.Hash}, nil
}

// remember records the hash of a scanned block, forgetting those too deep
// to matter.
func (n *Node) remember(b chain.Block) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hashes[b.Height] = b.Hash
	for h := range n.hashes {
		if h <= b.Height-n.reorgWindow || h > b.Height {
			delete(n.hashes, h)
		}
	}
}

// payment makes the Tx of a mined transfer t to addr in block b: its
// receipt says whether the value moved.
func (n *Node) payment(ctx context.Context, t rpcTx, addr string, b chain.Block, tip int64) (chain.Tx, error) {
	tx := chain.Tx{ID: t.Hash, State: chain.Confirmed, Block: b, Confirmations: tip - b.Height + 1}
	var receipt *struct {
		Status *string `json:"status"`
	}
	if err := n.call(ctx, "eth_getTransactionReceipt", []any{t.Hash}, &receipt); err != nil {
		return chain.Tx{}, err
	}
	if receipt != nil && receipt.Status != nil && *receipt.Status != "0x1" {
		tx.State, tx.Confirmations = chain.Failed, 0
		return tx, nil
	}
	value, err := chain.ParseQuantity(t.Value)
	if err != nil {
		return chain.Tx{}, fmt.Errorf("ethereum: transaction %s: value: %w", t.Hash, err)
	}
	if value.Sign() > 0 {
		tx.Outputs = []chain.Output{{Index: 0, Address: addr, Amount: value}}
	}
	return tx, nil
}

// Transaction returns what the node knows of a transaction now: Missing
// when it does not know it (never seen, or dropped or reorganised away and
// not broadcast again), Mempool when pending, Confirmed with its depth
// when in a block of the chain, Failed when mined but reverted. Its output
// is there when it pays a watched address.
func (n *Node) Transaction(ctx context.Context, txid string) (chain.Tx, error) {
	var t *rpcTx
	if err := n.call(ctx, "eth_getTransactionByHash", []any{txid}, &t); err != nil {
		return chain.Tx{}, err
	}
	if t == nil {
		return chain.Tx{ID: txid, State: chain.Missing}, nil
	}
	var addr string
	if t.To != nil {
		n.mu.Lock()
		addr = n.watched[strings.ToLower(*t.To)]
		n.mu.Unlock()
	}
	if t.BlockNumber == nil || t.BlockHash == nil {
		tx := chain.Tx{ID: txid, State: chain.Mempool}
		if addr != "" {
			if v, err := chain.ParseQuantity(t.Value); err == nil && v.Sign() > 0 {
				tx.Outputs = []chain.Output{{Address: addr, Amount: v}}
			}
		}
		return tx, nil
	}
	h, err := parseHeight(*t.BlockNumber)
	if err != nil {
		return chain.Tx{}, err
	}
	b := chain.Block{Height: h, Hash: *t.BlockHash}
	in, err := n.inChain(ctx, b)
	if err != nil {
		return chain.Tx{}, err
	}
	if !in {
		// The node's index still points into a branch that left the
		// chain.
		return chain.Tx{ID: txid, State: chain.Dropped}, nil
	}
	tip, err := n.Tip(ctx)
	if err != nil {
		return chain.Tx{}, err
	}
	tx, err := n.payment(ctx, *t, addr, b, tip.Height)
	if err != nil {
		return chain.Tx{}, err
	}
	if addr == "" {
		tx.Outputs = nil
	}
	return tx, nil
}
