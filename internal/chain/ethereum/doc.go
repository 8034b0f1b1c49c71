// Package ethereum watches payments of ether through the standard JSON-RPC
// of any Ethereum node (geth, Nethermind, Erigon, Besu, a provider):
// eth_getBlockByNumber with full transactions, eth_getTransactionByHash,
// eth_getTransactionReceipt, eth_getBalance, eth_chainId.
//
// A payment is a transaction whose recipient (to) is a watched address,
// with a value above zero and a successful receipt. Since scans the blocks
// after the cursor one by one and compares the hash of each block it
// resumes from with the chain, so it notices a reorganisation and scans
// again from the fork. Value that reaches an address inside a contract's
// execution (an internal transfer, as some exchanges and smart wallets
// send) is not a transaction to the address and is not seen by the scan;
// Balance shows it.
//
// Amounts are wei as *big.Int: above about 9.22 ETH they overflow an
// int64.
//
// The node's URL may hold an API key (providers put one in the path): it
// never appears in an error, which names the node by scheme and host only.
package ethereum
