// Package chain is what checkoutd's payment watcher needs from a
// blockchain node, and the types it answers with. One adapter per kind of
// node implements Node: bitcoind (Bitcoin Core and Litecoin Core JSON-RPC,
// through a watch-only wallet on the node) and ethereum (any standard
// Ethereum JSON-RPC node, scanning blocks).
//
// The watcher drives a Node in three moves. It calls Watch for each fresh
// address before showing it to a buyer. It polls Since with the cursor of
// its last scan, stores the new cursor after handling the scan, and so
// resumes where it stopped after a restart of either side. And it re-checks
// each transaction it counts with Transaction until the transaction is
// deep enough, for a transaction's confirmations, and whether it is in the
// best chain at all, change after the scan that reported it.
//
// Amounts are integers of the coin's base unit (satoshi, litoshi, wei) as
// *big.Int: wei overflow an int64 above about 9.22 ETH. Nothing here ever
// holds an amount in a float.
//
// The package knows nothing of sessions, stores or databases. docs/chains.md
// says what each node must run and how catch-up and reorganisations are
// handled.
package chain
