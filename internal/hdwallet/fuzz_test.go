package hdwallet

import (
	"errors"
	"strings"
	"testing"
)

// base58Runs returns the runs of at least n base58 characters in s: what
// a secret key would look like inside an error message.
func base58Runs(s string, n int) []string {
	var runs []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && index58[s[i]] >= 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= n {
			runs = append(runs, s[start:i])
		}
		start = -1
	}
	return runs
}

// FuzzParseAccount: no input panics; no error quotes a long base58 run of
// the input (a secret key would be one); an accepted account derives, and
// the key and descriptor it writes parse back to the same addresses.
func FuzzParseAccount(f *testing.F) {
	for _, s := range []string{
		bip84Zpub, bip84Xpub, ethXpub, ltcVectors[0].key, ltcVectors[1].descriptor,
		"wpkh([73c5da0a/84'/0'/0']" + bip84Xpub + "/<0;1>/*)",
		"wpkh(" + bip84Xpub + "/1/*)#aaaaaaaa",
		"xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi",
		"KyZpNDKnfs94vbrwhJneDi77V6jF64PWPF8x5cdJb8ifgg2DUc9d",
		"sh(wpkh(xpub))", "wpkh(", "wpkh([", "#", "1111", "",
	} {
		f.Add(s, uint8(0), uint8(0))
	}
	coinList := []string{BTC, LTC, ETH}
	networks := []Network{Mainnet, Testnet, Regtest}
	f.Fuzz(func(t *testing.T, s string, c, n uint8) {
		coin, network := coinList[int(c)%len(coinList)], networks[int(n)%len(networks)]
		a, err := ParseAccount(coin, network, s)
		if err != nil {
			msg := err.Error()
			for _, run := range base58Runs(s, 12) {
				if strings.Contains(msg, run) {
					t.Fatalf("ParseAccount(%q) = %q: the error quotes the input", s, msg)
				}
			}
			return
		}
		want, err := a.Address(7)
		if err != nil && !errors.Is(err, ErrIndex) {
			t.Fatalf("Address(7) = %v", err)
		}
		again := []string{a.ExtendedKey()}
		if d := a.Descriptor(); d != "" {
			again = append(again, d)
		}
		for _, in := range again {
			b, err := ParseAccount(coin, network, in)
			if err != nil {
				t.Fatalf("ParseAccount(%q) of its own output = %v", in, err)
			}
			if a.Chain() != 0 && !strings.Contains(in, "(") {
				continue // a bare key means chain 0
			}
			got, _ := b.Address(7)
			if got.Address != want.Address {
				t.Fatalf("ParseAccount(%q).Address(7) = %s; want %s", in, got.Address, want.Address)
			}
		}
	})
}

// FuzzBech32Decode: no input panics, and what decodes re-encodes to the
// input in lower case.
func FuzzBech32Decode(f *testing.F) {
	for _, s := range []string{"a12uel5l", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "?1ezyfcl", "1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hrp, data, err := bech32Decode(s)
		if err != nil {
			return
		}
		if got := bech32Encode(hrp, data); got != strings.ToLower(s) {
			t.Fatalf("bech32Encode(bech32Decode(%q)) = %q", s, got)
		}
		_, _ = decodeSegwitV0(hrp, s)
	})
}
