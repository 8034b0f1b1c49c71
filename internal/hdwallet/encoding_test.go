package hdwallet

import (
	"encoding/hex"
	"strings"
	"testing"
)

// BIP 173's test vectors (bitcoin/bips bip-0173.mediawiki).
func TestBech32Vectors(t *testing.T) {
	for _, s := range []string{
		"A12UEL5L",
		"a12uel5l",
		"an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
		"abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
		"11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j",
		"split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
		"?1ezyfcl",
	} {
		hrp, data, err := bech32Decode(s)
		if err != nil {
			t.Errorf("bech32Decode(%s) = %v; want valid", s, err)
			continue
		}
		if got := bech32Encode(hrp, data); got != strings.ToLower(s) {
			t.Errorf("bech32Encode(bech32Decode(%s)) = %s", s, got)
		}
	}
	for _, s := range []string{
		"\x201nwldj5",
		"\x7f1axkwrx",
		"\x801eym55h",
		"an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx",
		"pzry9x0s0muk",
		"1pzry9x0s0muk",
		"x1b4n0q5v",
		"li1dgmt3",
		"de1lg7wt\xff",
		"A1G7SGD8",
		"10a06t8",
		"1qzzfhee",
	} {
		if _, _, err := bech32Decode(s); err == nil {
			t.Errorf("bech32Decode(%q) accepted an invalid string", s)
		}
	}
}

// BIP 173's version-0 segwit addresses: encoding the program gives the
// address, and decoding it gives the program back.
func TestSegwitV0Vectors(t *testing.T) {
	for _, tt := range []struct{ address, script string }{
		{"BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6"},
		{"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7", "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262"},
		{"tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy", "0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433"},
	} {
		script, _ := hex.DecodeString(tt.script)
		hrp := strings.ToLower(tt.address[:2])
		if got := segwitV0Address(hrp, script[2:]); got != strings.ToLower(tt.address) {
			t.Errorf("segwitV0Address(%s, %s) = %s; want %s", hrp, tt.script, got, strings.ToLower(tt.address))
		}
		program, err := decodeSegwitV0(hrp, tt.address)
		if err != nil || hex.EncodeToString(program) != tt.script[4:] {
			t.Errorf("decodeSegwitV0(%s) = %x, %v; want %s", tt.address, program, err, tt.script[4:])
		}
	}
	for _, s := range []string{
		"tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty", // invalid human-readable part (for bc and tb)
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", // invalid checksum
		"BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2", // invalid witness version
		"bc1rw5uspcuh",                         // invalid program length
		"BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P", // invalid program length for v0
		"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7", // mixed case
		"tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv", // non-zero padding
		"bc1gmk9yu", // empty data section
	} {
		for _, hrp := range []string{"bc", "tb"} {
			if _, err := decodeSegwitV0(hrp, s); err == nil {
				t.Errorf("decodeSegwitV0(%s, %s) accepted an invalid address", hrp, s)
			}
		}
	}
}

// EIP-55's test vectors (ethereum/ERCs, ERCS/erc-55.md): all caps, all
// lower case, and mixed.
func TestEIP55Vectors(t *testing.T) {
	for _, want := range []string{
		"0x52908400098527886E0F7030069857D2E4169EE7",
		"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
		"0xde709f2102306220921060314715629080e2fb77",
		"0x27b1fdb04752bbc536007a920d24acb045561c26",
		"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
		"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
	} {
		b, err := hex.DecodeString(strings.ToLower(want[2:]))
		if err != nil {
			t.Fatal(err)
		}
		if got := eip55(b); got != want {
			t.Errorf("eip55(%x) = %s; want %s", b, got, want)
		}
	}
}

// BIP 380's checksum vectors, and checksums Litecoin Core computed
// (getdescriptorinfo; see ltcVectors).
func TestDescriptorChecksum(t *testing.T) {
	for _, tt := range []struct{ desc, sum string }{
		{"raw(deadbeef)", "89f8spxm"},
		{"wpkh(tprv8ZgxMBicQKsPe5YMU9gHen4Ez3ApihUfykaqUorj9t6FDqy3nP6eoXiAo2ssvpAjoLroQxHqr3R5nE3a5dU3DHTjTgJDd7zrbniJr6nrCzd/84h/1h/0h/0/*)", "tttzurp0"},
		{"wpkh(tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M/0/*)", "gt9he67w"},
		{"wpkh(tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M/1/*)", "elqky0wk"},
		{"pkh(" + ethXpub + "/0/*)", "7c2z54r5"},
	} {
		got, err := descriptorChecksum(tt.desc)
		if err != nil || got != tt.sum {
			t.Errorf("descriptorChecksum(%.30s…) = %q, %v; want %s", tt.desc, got, err, tt.sum)
		}
	}
	if _, err := descriptorChecksum("raw(Ü)"); err == nil {
		t.Error("descriptorChecksum(raw(Ü)) accepted a character outside the set")
	}
}

// The Base58 prefix of each version is its name: the table has the right
// bytes.
func TestVersionNames(t *testing.T) {
	k, err := decodeRaw(bip84Xpub)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range keyVersions {
		b := k.serialize(kv.version)
		if kv.private {
			b = append(append(b[:45:45], 0), make([]byte, 32)...)
			b[77] = 1
		}
		if got := base58CheckEncode(b); !strings.HasPrefix(got, kv.name) {
			t.Errorf("version %08x encodes as %s…; want prefix %s", kv.version, got[:4], kv.name)
		}
	}
}
