package chaintest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Ganache is a local Ethereum chain (ganache 7), chain id 1337, with ten
// deterministic accounts of 1000 ETH each that the node signs for.
// Transactions are mined as they arrive, one block each (instamine
// "eager": eth_sendTransaction returns once its block is mined), and Mine
// adds empty blocks, so confirmations are counted in blocks a test makes.
type Ganache struct {
	// URL is the node's JSON-RPC address.
	URL string
	// Accounts are the funded accounts; Send pays from the first.
	Accounts []string

	t    testing.TB
	proc *proc
	rpc  *rpcClient
}

// ganachePaths are where the ganache program is looked for after
// CHECKOUTD_TEST_GANACHE: on PATH, then where .ci/install-chains installs
// it without root.
func ganachePaths() []string {
	paths := []string{"ganache"}
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".cache", "checkoutd", "ganache", "node_modules", ".bin", "ganache"))
	}
	return paths
}

// StartGanache starts ganache on a free port with a temporary database and
// waits until it answers. It stops when t ends.
func StartGanache(t testing.TB) *Ganache {
	t.Helper()
	bin, err := lookPath("CHECKOUTD_TEST_GANACHE", ganachePaths()...)
	if err != nil {
		missing(t, "ganache not installed: npm install -g ganache@7.9 (or .ci/install-chains, or set CHECKOUTD_TEST_GANACHE)")
	}
	dir := tempDir(t, "checkoutd-ganache-")
	port := freePort(t)
	g := &Ganache{URL: "http://127.0.0.1:" + strconv.Itoa(port), t: t}
	g.rpc = &rpcClient{url: g.URL, http: &http.Client{}}
	args := []string{
		"--chain.chainId", "1337",
		"--server.host", "127.0.0.1", "--server.port", strconv.Itoa(port),
		"--wallet.deterministic",
		"--miner.instamine", "eager",
		"--database.dbPath", filepath.Join(dir, "db"),
		"--logging.quiet",
	}
	p, err := startProc("ganache", bin, args, filepath.Join(dir, "ganache.log"))
	if err != nil {
		t.Fatal(err)
	}
	g.proc = p
	t.Cleanup(p.kill)
	err = waitUntil(p, StartTimeout, func() error {
		_, err := g.rpc.call(context.Background(), "", "eth_blockNumber", nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := decode(g.Call("eth_accounts", nil), &g.Accounts); err != nil || len(g.Accounts) == 0 {
		t.Fatalf("ganache accounts: %v %v", g.Accounts, err)
	}
	return g
}

// Try calls a method and returns its error.
func (g *Ganache) Try(method string, params any) (json.RawMessage, error) {
	return g.rpc.call(context.Background(), "", method, params)
}

// Call calls a method and fails t on an error.
func (g *Ganache) Call(method string, params any) json.RawMessage {
	g.t.Helper()
	r, err := g.Try(method, params)
	if err != nil {
		g.t.Fatalf("ganache: %v", err)
	}
	return r
}

// NewAddress returns a fresh random address that nobody holds a key of,
// standing for an address checkoutd derived from a merchant's key.
func (g *Ganache) NewAddress() string {
	b := make([]byte, 20)
	rand.Read(b)
	return "0x" + hex.EncodeToString(b)
}

// Send pays wei to addr from the first account in a plain transfer and
// returns the transaction hash once its block is mined.
func (g *Ganache) Send(addr string, wei *big.Int) string {
	g.t.Helper()
	// The gas is given, for ganache would refuse a transfer that reverts
	// when estimating it.
	return g.SendTx(map[string]any{"to": addr, "value": "0x" + wei.Text(16), "gas": "0x186a0"})
}

// SendTx sends a transaction from the first account (eth_sendTransaction
// with tx as its fields, "from" added) and returns its hash once mined.
func (g *Ganache) SendTx(tx map[string]any) string {
	g.t.Helper()
	tx["from"] = g.Accounts[0]
	var hash string
	if err := decode(g.Call("eth_sendTransaction", []any{tx}), &hash); err != nil {
		g.t.Fatal(err)
	}
	return hash
}

// revertingContract is the creation code of a contract that reverts every
// call: its code is PUSH1 0 PUSH1 0 REVERT, copied into place and returned
// by the creation code before it.
const revertingContract = "0x6005600c60003960056000f3" + "60006000fd"

// DeployRefuser deploys a contract that refuses all value sent to it (it
// reverts) and returns its address: a transfer to it is mined, but fails.
func (g *Ganache) DeployRefuser() string {
	g.t.Helper()
	hash := g.SendTx(map[string]any{"data": revertingContract, "gas": "0x30000"})
	var r struct {
		ContractAddress string `json:"contractAddress"`
		Status          string `json:"status"`
	}
	if err := decode(g.Call("eth_getTransactionReceipt", []any{hash}), &r); err != nil || r.Status != "0x1" {
		g.t.Fatalf("deploy: receipt %+v, %v", r, err)
	}
	return r.ContractAddress
}

// Mine mines count empty blocks.
func (g *Ganache) Mine(count int) {
	g.t.Helper()
	for range count {
		g.Call("evm_mine", nil)
	}
}

// BlockNumber returns the height of the latest block.
func (g *Ganache) BlockNumber() int64 {
	g.t.Helper()
	var s string
	if err := decode(g.Call("eth_blockNumber", nil), &s); err != nil {
		g.t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		g.t.Fatal(err)
	}
	return n
}

// Snapshot records the chain's state and returns its id for Revert.
func (g *Ganache) Snapshot() string {
	g.t.Helper()
	var id string
	if err := decode(g.Call("evm_snapshot", nil), &id); err != nil {
		g.t.Fatal(err)
	}
	return id
}

// Revert rolls the chain back to a snapshot, dropping the blocks and
// transactions made since. Mining again then makes other blocks at the
// same heights: a reorganisation, as a watcher sees one.
func (g *Ganache) Revert(id string) {
	g.t.Helper()
	var ok bool
	if err := decode(g.Call("evm_revert", []any{id}), &ok); err != nil || !ok {
		g.t.Fatalf("evm_revert %s: %v %v", id, ok, err)
	}
}
