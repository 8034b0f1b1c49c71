package chain

import (
	"context"
	"math/big"
)

// Node is a blockchain node watched for payments to addresses.
type Node interface {
	// Watch makes the node report payments to address from now on. It is
	// idempotent, and must be called before the address is shown to a
	// buyer: payments made to it before are not looked for.
	Watch(ctx context.Context, address string) error
	// Tip returns the best block.
	Tip(ctx context.Context) (Block, error)
	// Status says whether the node is reachable (an error when not) and
	// in step with its network, for readiness checks and metrics.
	Status(ctx context.Context) (Status, error)
	// Since returns the transactions paying watched addresses that the
	// node saw after the scan that returned cursor: those in later blocks,
	// and those not in a block (in the mempool, dropped or conflicted).
	// An empty cursor starts from the node's earliest record (bitcoind) or
	// the tip (ethereum). A transaction may be reported again by a later
	// scan; the watcher keys what it records by transaction id and output.
	Since(ctx context.Context, cursor string) (Scan, error)
	// Transaction returns what the node knows of a transaction now.
	Transaction(ctx context.Context, txid string) (Tx, error)
}

// Block identifies a block.
type Block struct {
	Height int64
	Hash   string
}

// Status is how a node stands.
type Status struct {
	// Tip is the node's best block.
	Tip Block
	// Best is the height of the best chain the node has heard of: above
	// Tip.Height while it downloads blocks.
	Best int64
	// Syncing reports that the node is still catching up with its
	// network: the confirmations it reports lag the network's, and a
	// payment may be seen late, never early.
	Syncing bool
}

// Scan is the answer of Node.Since.
type Scan struct {
	// Txs are the transactions found, each with its state at the time
	// of the scan.
	Txs []Tx
	// Cursor is where the next scan starts. The watcher stores it once it
	// has recorded Txs, and passes it to the next Since.
	Cursor string
	// Tip is the best block at the time of the scan; Tip.Height less the
	// height the cursor stands for is how far the scan lags (ethereum
	// scans a bounded number of blocks per call).
	Tip Block
	// Reorg reports that the block of the cursor left the best chain, or
	// that the node no longer knew it: transactions reported before may
	// have left the chain, so the watcher re-checks each one it has not
	// finished with (Node.Transaction).
	Reorg bool
}

// State is where a transaction stands.
type State string

// The states of a transaction.
const (
	// Mempool: seen by the node, waiting to be mined.
	Mempool State = "mempool"
	// Confirmed: in a block of the best chain, Confirmations deep.
	Confirmed State = "confirmed"
	// Dropped: neither in a block nor in the mempool: evicted, expired,
	// or replaced by a transaction of Conflicts (BIP 125 fee bump). It may
	// still come back, if someone broadcasts it again.
	Dropped State = "dropped"
	// Conflicted: a transaction spending the same inputs is in the best
	// chain, so this one cannot confirm unless that block is reorganised
	// away.
	Conflicted State = "conflicted"
	// Failed: mined, but reverted, so no value moved (Ethereum: a
	// transfer to a contract that refused it). It never counts.
	Failed State = "failed"
	// Missing: the node does not know the transaction (never seen, or
	// reorganised away on Ethereum, where a node forgets such a
	// transaction unless it is rebroadcast).
	Missing State = "missing"
)

// Counts reports whether s lets a transaction's confirmations count.
func (s State) Counts() bool { return s == Confirmed }

// Tx is a transaction paying watched addresses, as a node sees it now.
type Tx struct {
	ID    string
	State State
	// Confirmations is the depth of the transaction's block when
	// Confirmed (1 when in the tip), otherwise 0.
	Confirmations int64
	// Block holds the transaction when Confirmed.
	Block Block
	// Conflicts lists the transactions known to spend the same inputs:
	// a replacement, a double spend.
	Conflicts []string
	// Outputs are its outputs to watched addresses. Transaction may leave
	// them empty when the State is Missing.
	Outputs []Output
}

// Output is one payment of a transaction to a watched address.
type Output struct {
	// Index is the output's position in the transaction (vout); 0 on
	// Ethereum, whose transactions have one recipient.
	Index   int
	Address string
	// Amount is in base units: satoshi, litoshi or wei. It is positive.
	Amount *big.Int
}
