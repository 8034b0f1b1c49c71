// Package bitcoind watches payments through the JSON-RPC of Bitcoin Core or
// Litecoin Core (the same API), version 0.21 or later.
//
// The node keeps the watched addresses in a wallet of checkoutd's own,
// watch-only and blank: no private key ever reaches the node or checkoutd.
// EnsureWallet creates it (a descriptor wallet where the node supports
// them, else a legacy one, as Debian's litecoind is built without SQLite)
// and loads it; a wallet call that finds it unloaded, after a node
// restart, loads it again. The node's wallet then does the watching: it
// sees a payment in the mempool, follows it into blocks, through
// reorganisations and replacements, and Since reads what changed with
// listsinceblock from the last block seen.
//
// The RPC password never appears in an error or a log line.
package bitcoind
