// Package livecrypto takes live crypto payments on real chains, the way
// self-hosted processors do: the merchant keeps the keys and checkoutd
// watches the chain. Each quote pays to an address the service derives from
// the store's extended public key (internal/hdwallet); this network has the
// coin's node watch it (internal/chain), prices it at the current rate, and
// reports what the nodes see: transactions paying watched addresses (Scan)
// and their confirmations, counted by the node, so a reorganisation that
// takes a transaction out of the chain takes its confirmations with it.
package livecrypto

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/chain"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/rates"
)

// Coin is one coin the network takes: its node, the node's chain, and the
// confirmations a payment needs.
type Coin struct {
	Code string // BTC, LTC, ETH
	Node chain.Node
	// Network is the node's chain: main, test or regtest. A store's key
	// must be made for it.
	Network string
	// Depth is how many confirmations a payment needs; the coin's default
	// (checkout.Coin.Confirmations) when zero.
	Depth int
	// StartCursor, for a node whose first scan starts at its tip
	// (ethereum.Cursor), makes the cursor of a block: the first quote
	// records the tip's before anyone can pay (Prepare), so that the first
	// scan starts no later than the first payment.
	StartCursor func(chain.Block) string
}

// Rates prices quotes.
type Rates interface {
	// CoinAmount returns amount minor units of currency in base units of
	// coin at the current rate, rounded up, so the merchant is never short.
	CoinAmount(ctx context.Context, coin checkout.Coin, amount int64, currency string) (*big.Int, error)
}

// Cursors keep where each coin's scan resumes, across restarts and nodes
// (the database: store.DB).
type Cursors interface {
	ChainCursor(ctx context.Context, coin string) (string, error)
	SetChainCursor(ctx context.Context, coin, cursor string, now time.Time) error
	// InitChainCursor records cursor unless one is recorded.
	InitChainCursor(ctx context.Context, coin, cursor string, now time.Time) error
}

// Network is the live crypto network of a checkoutd process.
type Network struct {
	coins   map[string]*Coin
	rates   Rates
	cursors Cursors

	mu       sync.Mutex
	scanned  map[string]scanned // by coin: this process's last scan
	status   []pay.CoinStatus   // the nodes' status, cached
	statusAt time.Time
}

// scanned is the tip of a coin's last scan, and when it ran.
type scanned struct {
	tip int64
	at  time.Time
}

// statusTTL is how long the nodes' status is cached: /readyz and metrics
// may ask every few seconds, and each answer costs a call to every node.
const statusTTL = 5 * time.Second

var _ pay.LiveCryptoNetwork = (*Network)(nil)

// New returns a network of coins, priced by rates, its scans resuming
// where cursors say.
func New(rates Rates, cursors Cursors, coins ...Coin) (*Network, error) {
	n := &Network{coins: map[string]*Coin{}, rates: rates, cursors: cursors, scanned: map[string]scanned{}}
	for _, c := range coins {
		cc, ok := checkout.CoinByCode(c.Code)
		if !ok || c.Code == "SOL" {
			return nil, fmt.Errorf("livecrypto: no live %s: the coins are BTC, LTC and ETH", c.Code)
		}
		if c.Depth <= 0 {
			c.Depth = cc.Confirmations
		}
		n.coins[c.Code] = &c
	}
	return n, nil
}

// Offers reports whether coin has a node here.
func (n *Network) Offers(coin string) bool { _, ok := n.coins[coin]; return ok }

// Network returns the chain of coin's node.
func (n *Network) Network(coin string) string {
	if c, ok := n.coins[coin]; ok {
		return c.Network
	}
	return ""
}

// Depth returns the confirmations a payment in coin needs.
func (n *Network) Depth(coin string) int {
	if c, ok := n.coins[coin]; ok {
		return c.Depth
	}
	return 0
}

// Price prices amount of currency in coin at the rate now, rounded up.
func (n *Network) Price(ctx context.Context, coin checkout.Coin, amount int64, currency string) (*big.Int, error) {
	if !n.Offers(coin.Code) {
		return nil, fmt.Errorf("livecrypto: %s is not offered", coin.Code)
	}
	a, err := n.rates.CoinAmount(ctx, coin, amount, currency)
	if err != nil {
		return nil, fmt.Errorf("price %s in %s: %w", coin.Code, currency, err)
	}
	return a, nil
}

// Gone says whether coin's node no longer has txid nor expects to mine it,
// and why: replaced or evicted (pay.GoneDropped), spending coins the chain
// spent otherwise (pay.GoneConflicted), or unknown to it (pay.GoneMissing).
func (n *Network) Gone(ctx context.Context, coin, txid string) (string, error) {
	c, ok := n.coins[coin]
	if !ok {
		return "", fmt.Errorf("livecrypto: %s is not offered", coin)
	}
	tx, err := c.Node.Transaction(ctx, txid)
	if err != nil {
		return "", err
	}
	switch tx.State {
	case chain.Dropped:
		return pay.GoneDropped, nil
	case chain.Conflicted:
		return pay.GoneConflicted, nil
	case chain.Missing:
		return pay.GoneMissing, nil
	}
	return "", nil
}

// Status asks each coin's node how it stands (cached for statusTTL), by
// coin code.
func (n *Network) Status(ctx context.Context) []pay.CoinStatus {
	n.mu.Lock()
	if n.status != nil && time.Since(n.statusAt) < statusTTL {
		defer n.mu.Unlock()
		return slices.Clone(n.status)
	}
	n.mu.Unlock()
	var out []pay.CoinStatus
	for _, code := range slices.Sorted(maps.Keys(n.coins)) {
		cs := pay.CoinStatus{Coin: code}
		st, err := n.coins[code].Node.Status(ctx)
		if err != nil {
			cs.Err = err.Error()
		} else {
			cs.Tip, cs.Best, cs.Syncing = st.Tip.Height, st.Best, st.Syncing
		}
		n.mu.Lock()
		cs.Scanned, cs.ScannedAt = n.scanned[code].tip, n.scanned[code].at
		n.mu.Unlock()
		out = append(out, cs)
	}
	n.mu.Lock()
	n.status, n.statusAt = out, time.Now()
	n.mu.Unlock()
	return slices.Clone(out)
}

// Watch has coin's node watch address. It must not use the database: the
// service calls it inside the transaction that takes the address, so that a
// node that does not answer leaves the address untaken.
func (n *Network) Watch(ctx context.Context, coin, address string) error {
	c, ok := n.coins[coin]
	if !ok {
		return fmt.Errorf("livecrypto: %s is not offered", coin)
	}
	return c.Node.Watch(ctx, address)
}

// Quote has the coin's node watch r.Address (derived by the service from
// the store's key) before anyone is shown it, and prices r at the current
// rate.
func (n *Network) Quote(ctx context.Context, r pay.QuoteRequest) (pay.Quote, error) {
	c, ok := n.coins[r.Coin.Code]
	if !ok {
		return pay.Quote{}, fmt.Errorf("livecrypto: %s is not offered", r.Coin.Code)
	}
	if r.Address == "" {
		return pay.Quote{}, fmt.Errorf("livecrypto: a live quote needs an address derived from the store's key")
	}
	amount, err := n.rates.CoinAmount(ctx, r.Coin, r.Amount, r.Currency)
	if err != nil {
		return pay.Quote{}, fmt.Errorf("price %s in %s: %w", r.Coin.Code, r.Currency, err)
	}
	if err := c.Node.Watch(ctx, r.Address); err != nil {
		return pay.Quote{}, fmt.Errorf("watch %s address: %w", r.Coin.Code, err)
	}
	return pay.Quote{Address: r.Address, Amount: amount}, nil
}

// Prepare readies coin for a quote, before the quote's database
// transaction: for a node whose first scan starts at its tip, it records the
// tip as where scans start, unless a scan or an earlier quote recorded
// where, so that no payment to the quote's address falls before the first
// scan.
func (n *Network) Prepare(ctx context.Context, coin string) error {
	c, ok := n.coins[coin]
	if !ok {
		return fmt.Errorf("livecrypto: %s is not offered", coin)
	}
	if c.StartCursor == nil {
		return nil
	}
	cur, err := n.cursors.ChainCursor(ctx, c.Code)
	if err != nil || cur != "" {
		return err
	}
	tip, err := c.Node.Tip(ctx)
	if err != nil {
		return fmt.Errorf("%s tip: %w", c.Code, err)
	}
	return n.cursors.InitChainCursor(ctx, c.Code, c.StartCursor(tip), time.Now())
}

// Confirmations returns how deep p's transactions are in the best chain now,
// as its node counts: 0 while it is in the mempool, and again after a
// reorganisation takes it out of the chain, or when it was dropped or
// replaced.
func (n *Network) Confirmations(ctx context.Context, p *checkout.Payment, _ time.Time) (int, error) {
	if p.Crypto == nil {
		return 0, fmt.Errorf("payment %s is not a crypto payment", p.ID)
	}
	c, ok := n.coins[p.Crypto.Coin]
	if !ok {
		return 0, fmt.Errorf("livecrypto: payment %s is in %s, which has no node here", p.ID, p.Crypto.Coin)
	}
	// A payment made of several transactions (an underpayment and its
	// rest) is as deep as the shallowest.
	least := -1
	for _, txid := range p.Crypto.TxHashes() {
		tx, err := c.Node.Transaction(ctx, txid)
		if err != nil {
			return 0, err
		}
		if !tx.State.Counts() {
			return 0, nil
		}
		if n := int(tx.Confirmations); least < 0 || n < least {
			least = n
		}
	}
	return max(least, 0), nil
}

// Scan asks each coin's node for the transactions paying watched addresses
// since its last committed scan, and returns their outputs. Those the node
// has dropped, or that conflict with the chain or failed, are left out:
// they pay nothing. The first scan ever starts from the node's earliest
// record (bitcoind) or its tip (ethereum: watch before quoting); the service
// records each transaction once however often it is reported. commit
// stores the cursors; a scan not committed (recording failed) is reported
// again.
func (n *Network) Scan(ctx context.Context) ([]pay.Received, func(context.Context) error, error) {
	var out []pay.Received
	next := map[string]string{}
	for code, c := range n.coins {
		cursor, err := n.cursors.ChainCursor(ctx, code)
		if err != nil {
			return nil, nil, err
		}
		sc, err := c.Node.Since(ctx, cursor)
		if err != nil {
			return nil, nil, fmt.Errorf("scan %s: %w", code, err)
		}
		for _, tx := range sc.Txs {
			if tx.State != chain.Mempool && tx.State != chain.Confirmed {
				continue
			}
			for _, o := range tx.Outputs {
				out = append(out, pay.Received{Coin: code, TxID: tx.ID, Vout: o.Index, Address: o.Address, Amount: o.Amount})
			}
		}
		if sc.Cursor != cursor {
			next[code] = sc.Cursor
		}
		n.mu.Lock()
		n.scanned[code] = scanned{tip: sc.Tip.Height, at: time.Now()}
		n.mu.Unlock()
	}
	commit := func(ctx context.Context) error {
		for code, cur := range next {
			if err := n.cursors.SetChainCursor(ctx, code, cur, time.Now()); err != nil {
				return err
			}
		}
		return nil
	}
	return out, commit, nil
}

// SourceRates prices quotes with a rate source (package rates: the
// operator's fixed rates, a ticker, or both): exactly, rounded up.
type SourceRates struct{ Source rates.Source }

// CoinAmount prices amount of currency in coin at the source's rate now.
func (s SourceRates) CoinAmount(ctx context.Context, coin checkout.Coin, amount int64, currency string) (*big.Int, error) {
	a, _, err := rates.Quote(ctx, s.Source, amount, currency, coin)
	return a, err
}
