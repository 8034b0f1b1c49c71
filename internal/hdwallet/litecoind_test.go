package hdwallet

import (
	"crypto/rand"
	"encoding/json"
	"slices"
	"testing"

	"github.com/checkoutd/checkoutd/internal/chaintest"
	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

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
// from them the addresses the package derives. (chaintest skips the test
// without litecoind, or fails it under CHECKOUTD_TEST_REQUIRE_CHAINS=1.)
func TestAgainstLitecoinCore(t *testing.T) {
	n := chaintest.StartLitecoin(t)
	derive := func(params ...any) []string {
		t.Helper()
		var got []string
		if err := json.Unmarshal(n.Call("deriveaddresses", params), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
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
		if got := derive(a.Descriptor(), []int{0, 9}); !slices.Equal(got, want) {
			t.Fatalf("Litecoin Core derives %v from %s; the package %v", got, a.Descriptor(), want)
		}

		// One address's own descriptor.
		addr, err := a.Address(uint32(i) * 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got := derive(addr.Descriptor); len(got) != 1 || got[0] != addr.Address {
			t.Fatalf("Litecoin Core derives %v from %s; the package %s", got, addr.Descriptor, addr.Address)
		}
	}
}
