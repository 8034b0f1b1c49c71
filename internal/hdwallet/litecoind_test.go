package hdwallet

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// node is a Litecoin Core in regtest, offline, started for one test.
type node struct {
	url string
}

// startLitecoind starts litecoind -regtest with a temporary data directory
// and stops it when the test ends. It skips the test when litecoind is not
// installed, and fails it under CHECKOUTD_TEST_REQUIRE_LITECOIND=1.
func startLitecoind(t *testing.T) *node {
	t.Helper()
	bin, err := exec.LookPath("litecoind")
	if err != nil {
		msg := "the Litecoin Core cross-check needs litecoind on PATH (apt-get install -y litecoind)"
		if os.Getenv("CHECKOUTD_TEST_REQUIRE_LITECOIND") == "1" {
			t.Fatal(msg)
		}
		t.Skip("skipping: " + msg)
	}
	rpcPort, p2pPort := freePort(t), freePort(t)
	cmd := exec.Command(bin, "-regtest", "-datadir="+t.TempDir(),
		fmt.Sprintf("-rpcport=%d", rpcPort), fmt.Sprintf("-port=%d", p2pPort),
		"-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1", "-rpcuser=u", "-rpcpassword=p",
		"-connect=0", "-listen=0", "-dnsseed=0", "-disablewallet=1", "-printtoconsole=0")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start litecoind: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	n := &node{url: fmt.Sprintf("http://127.0.0.1:%d/", rpcPort)}
	t.Cleanup(func() {
		_ = n.call("stop", nil, nil)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	// Wait for the RPC server to answer (it says "warming up" before).
	deadline := time.Now().Add(60 * time.Second)
	for {
		var info struct{ Chain string }
		err := n.call("getblockchaininfo", []any{}, &info)
		if err == nil && info.Chain == "regtest" {
			return n
		}
		select {
		case err := <-exited:
			t.Fatalf("litecoind exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("litecoind did not answer within a minute: %v", err)
		}
		pause := time.NewTimer(100 * time.Millisecond)
		<-pause.C
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// call makes one JSON-RPC call and decodes its result into out.
func (n *node) call(method string, params []any, out any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth("u", "p")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("%s: HTTP %d: %w", method, resp.StatusCode, err)
	}
	if r.Error != nil {
		return fmt.Errorf("%s: %d %s", method, r.Error.Code, r.Error.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Result, out)
}

// randomAccountKey makes an account-level key (depth 3, hardened) from a
// fresh key pair and chain code, under version.
func randomAccountKey(t *testing.T, version uint32) string {
	t.Helper()
	priv, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	k := extendedKey{depth: 3, childNumber: hardened, pubKey: priv.PubKey()}
	if _, err := rand.Read(k.chainCode[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := rand.Read(k.parentFP[:]); err != nil {
		t.Fatal(err)
	}
	return base58CheckEncode(k.serialize(version))
}

// Litecoin Core, the reference, agrees with the package on random keys:
// it accepts the descriptors and checksums the package writes, and derives
// from them the addresses the package derives.
func TestAgainstLitecoinCore(t *testing.T) {
	n := startLitecoind(t)
	for i := range 16 {
		version := uint32(versionTpub)
		if i%2 == 1 {
			version = 0x045f1cf6 // vpub: the package writes it as tpub
		}
		input := randomAccountKey(t, version)
		if i%4 == 3 {
			// A descriptor with a key origin, on the change chain.
			input = "wpkh([d34db33f/84'/1'/0']" + input + "/1/*)"
		}
		a, err := ParseAccount(LTC, Regtest, input)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for j := range uint32(10) {
			addr, err := a.Address(j)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, addr.Address)
		}
		var got []string
		if err := n.call("deriveaddresses", []any{a.Descriptor(), []int{0, 9}}, &got); err != nil {
			t.Fatalf("deriveaddresses(%s) = %v", a.Descriptor(), err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Litecoin Core derives %v from %s; the package %v", got, a.Descriptor(), want)
		}

		// One address's own descriptor.
		addr, err := a.Address(uint32(i) * 1000)
		if err != nil {
			t.Fatal(err)
		}
		got = nil
		if err := n.call("deriveaddresses", []any{addr.Descriptor}, &got); err != nil {
			t.Fatalf("deriveaddresses(%s) = %v", addr.Descriptor, err)
		}
		if len(got) != 1 || got[0] != addr.Address {
			t.Fatalf("Litecoin Core derives %v from %s; the package %s", got, addr.Descriptor, addr.Address)
		}
	}
}
