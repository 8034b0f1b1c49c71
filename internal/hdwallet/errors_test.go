package hdwallet

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
)

// reversion returns key under other version bytes, as wallets that use
// SLIP-0132 prefixes show it.
func reversion(t *testing.T, key string, version uint32) string {
	t.Helper()
	k, err := decodeRaw(key)
	if err != nil {
		t.Fatal(err)
	}
	return base58CheckEncode(k.serialize(version))
}

func TestSLIP132Accepted(t *testing.T) {
	tests := []struct {
		coin    string
		network Network
		key     string
		want    string
	}{
		{BTC, Mainnet, bip84Zpub, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"},
		{LTC, Mainnet, reversion(t, ltcVectors[0].key, 0x019da462), ltcVectors[0].receive[0]}, // Ltub
		{LTC, Mainnet, reversion(t, ltcVectors[0].key, 0x04b24746), ltcVectors[0].receive[0]}, // zpub
		{LTC, Testnet, reversion(t, ltcVectors[1].key, 0x0436f6e1), ltcVectors[1].receive[0]}, // ttub
		{LTC, Regtest, reversion(t, ltcVectors[2].key, 0x045f1cf6), ltcVectors[2].receive[0]}, // vpub
		{BTC, Testnet, reversion(t, ltcVectors[1].key, 0x045f1cf6), "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"},
		// Sparrow's multipath descriptor: the receive half is taken.
		{BTC, Mainnet, "wpkh([73c5da0a/84'/0'/0']" + bip84Xpub + "/<0;1>/*)", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"},
		// Spaces and newlines around a pasted key.
		{BTC, Mainnet, "  " + bip84Zpub + "\n", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"},
	}
	for _, tt := range tests {
		a, err := ParseAccount(tt.coin, tt.network, tt.key)
		if err != nil {
			t.Errorf("ParseAccount(%s, %s, %.12s…) = %v", tt.coin, tt.network, strings.TrimSpace(tt.key), err)
			continue
		}
		got, err := a.Address(0)
		if err != nil || got.Address != tt.want {
			t.Errorf("ParseAccount(%s, %s, %.12s…).Address(0) = %s, %v; want %s", tt.coin, tt.network, strings.TrimSpace(tt.key), got.Address, err, tt.want)
		}
	}
}

// Secrets from the published test vectors: given by mistake, each is
// refused as a private key, and no error repeats any 8 characters of it.
func TestPrivateKeysRefusedWithoutEcho(t *testing.T) {
	tests := []struct {
		name, coin string
		network    Network
		secret     string
		want       string // in the message
	}{
		{"xprv", BTC, Mainnet, "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi", "private key (xprv): give the extended public key (xpub)"},
		{"zprv", BTC, Mainnet, "zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE", "private key (zprv)"},
		{"zprv on the wrong network", LTC, Regtest, "zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE", "private key (zprv)"},
		{"mistyped xprv", BTC, Mainnet, "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHL", "private key (xprv)"},
		{"tprv in a descriptor", LTC, Regtest, "wpkh(tprv8ZgxMBicQKsPe5YMU9gHen4Ez3ApihUfykaqUorj9t6FDqy3nP6eoXiAo2ssvpAjoLroQxHqr3R5nE3a5dU3DHTjTgJDd7zrbniJr6nrCzd/84h/1h/0h/0/*)#tttzurp0", "private key (tprv)"},
		{"xprv for ETH", ETH, Mainnet, "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu", "private key (xprv)"},
		{"hex private key", ETH, Mainnet, "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", "64 hex digits"},
		{"hex private key without 0x", ETH, Mainnet, "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", "64 hex digits"},
		{"WIF", BTC, Mainnet, "KyZpNDKnfs94vbrwhJneDi77V6jF64PWPF8x5cdJb8ifgg2DUc9d", "private key (WIF)"},
		{"seed phrase", BTC, Mainnet, "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "seed phrase"},
		// BIP 32 vector 5: private key data under a public version.
		{"xpub with a private key", BTC, Mainnet, "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6LBpB85b3D2yc8sfvZU521AAwdZafEz7mnzBBsz4wKY5fTtTQBm", "private key"},
	}
	for _, tt := range tests {
		_, err := ParseAccount(tt.coin, tt.network, tt.secret)
		if !errors.Is(err, ErrPrivateKey) {
			t.Errorf("%s: ParseAccount = %v; want ErrPrivateKey", tt.name, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.want) {
			t.Errorf("%s: message %q; want it to say %q", tt.name, msg, tt.want)
		}
		words := strings.Fields(tt.secret)
		if len(words) > 1 {
			if strings.Contains(msg, "abandon") {
				t.Errorf("%s: message %q repeats the seed phrase", tt.name, msg)
			}
			continue
		}
		for i := 0; i+8 <= len(tt.secret); i++ {
			if part := tt.secret[i : i+8]; strings.Contains(msg, part) {
				t.Errorf("%s: message %q repeats %q of the secret", tt.name, msg, part)
				break
			}
		}
	}
}

func TestKeyErrors(t *testing.T) {
	typo := []byte(bip84Zpub)
	typo[40] = 'x'
	tests := []struct {
		name    string
		coin    string
		network Network
		input   string
		kind    error
		want    string // in the message
	}{
		{"checksum", BTC, Mainnet, string(typo), ErrChecksum, "mistyped"},
		{"character", BTC, Mainnet, bip84Zpub[:30] + "0" + bip84Zpub[31:], ErrMalformed, "character 31"},
		{"legacy address", BTC, Mainnet, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", ErrMalformed, "not an extended public key"},
		{"empty", LTC, Mainnet, " ", ErrMalformed, "extended public key"},
		{"truncated", BTC, Mainnet, bip84Zpub[:60], ErrChecksum, "cut short"},
		{"testnet key for mainnet", BTC, Mainnet, ltcVectors[1].key, ErrWrongNetwork, "test network, but BTC is configured for mainnet"},
		{"mainnet key for regtest", LTC, Regtest, ltcVectors[0].key, ErrWrongNetwork, "mainnet, but LTC is configured for regtest"},
		{"zpub for testnet", BTC, Testnet, bip84Zpub, ErrWrongNetwork, "tpub or vpub"},
		{"ypub", BTC, Mainnet, reversion(t, bip84Xpub, 0x049d7cb2), ErrUnsupported, "wrapped segwit"},
		{"Mtub", LTC, Mainnet, reversion(t, ltcVectors[0].key, 0x01b26ef6), ErrUnsupported, "wrapped segwit"},
		{"upub", LTC, Regtest, reversion(t, ltcVectors[1].key, 0x044a5262), ErrUnsupported, "wrapped segwit"},
		{"Zpub", BTC, Mainnet, reversion(t, bip84Xpub, 0x02aa7ed3), ErrUnsupported, "multisig"},
		{"Ltub for BTC", BTC, Mainnet, reversion(t, bip84Xpub, 0x019da462), ErrUnsupported, "Litecoin key"},
		{"zpub for ETH", ETH, Mainnet, reversion(t, ethXpub, 0x04b24746), ErrUnsupported, "Ethereum takes an xpub"},
		{"descriptor for ETH", ETH, Mainnet, "wpkh(" + ethXpub + "/0/*)", ErrUnsupported, "not an output descriptor"},
		{"master key", BTC, Mainnet, "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8", ErrUnsupported, "master public key"},
		{"chain-level key", BTC, Mainnet, "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ", ErrUnsupported, "below account level"},
		{"unknown version", BTC, Mainnet, reversion(t, bip84Xpub, 0x01020304), ErrUnsupported, "version is unknown"},
		{"pkh descriptor", BTC, Mainnet, "pkh(" + bip84Xpub + "/0/*)", ErrUnsupported, "this one is pkh(...)"},
		{"nested descriptor", BTC, Mainnet, "sh(wpkh(" + bip84Xpub + "/0/*))", ErrUnsupported, "this one is sh(...)"},
		{"multisig descriptor", BTC, Mainnet, "wsh(sortedmulti(1," + bip84Xpub + "/0/*," + bip84Xpub + "/1/*))", ErrUnsupported, "wsh(...)"},
		{"descriptor checksum", LTC, Regtest, ltcVectors[2].descriptor[:len(ltcVectors[2].descriptor)-1] + "q", ErrChecksum, "checksum does not match"},
		{"descriptor without range", BTC, Mainnet, "wpkh(" + bip84Xpub + ")", ErrUnsupported, "no range"},
		{"hardened range", BTC, Mainnet, "wpkh(" + bip84Xpub + "/0/*h)", ErrUnsupported, "hardened"},
		{"bare range", BTC, Mainnet, "wpkh(" + bip84Xpub + "/*)", ErrUnsupported, "/0/*"},
		{"deeper path", BTC, Mainnet, "wpkh(" + bip84Xpub + "/0/0/*)", ErrUnsupported, "/0/*"},
		{"bad origin", BTC, Mainnet, "wpkh([73c5da/84h/0h/0h]" + bip84Xpub + "/0/*)", ErrMalformed, "fingerprint"},
		{"bad origin step", BTC, Mainnet, "wpkh([73c5da0a/84x/0h/0h]" + bip84Xpub + "/0/*)", ErrMalformed, "derivation step"},
		{"unclosed origin", BTC, Mainnet, "wpkh([73c5da0a/84h" + bip84Xpub + "/0/*)", ErrMalformed, "closing"},
		{"too long", BTC, Mainnet, strings.Repeat("x", 2000), ErrMalformed, "too long"},
		{"too long for a key", BTC, Mainnet, bip84Xpub + bip84Xpub, ErrMalformed, "too long"},
		{"Bitcoin origin for LTC", LTC, Mainnet, "wpkh([73c5da0a/84h/0h/0h]" + bip84Xpub + "/0/*)", ErrUnsupported, "is a Bitcoin account; for Litecoin give the account m/84'/2'/0'"},
		{"test origin for mainnet", LTC, Mainnet, "wpkh([73c5da0a/84h/1h/0h]" + ltcVectors[0].key + "/0/*)", ErrWrongNetwork, "(m/84h/1h/0h) is a test-network path"},
		{"main origin for regtest", LTC, Regtest, "wpkh([73c5da0a/84h/2h/0h]" + ltcVectors[2].key + "/0/*)", ErrWrongNetwork, "is a mainnet path"},
		{"segwit address", BTC, Mainnet, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", ErrMalformed, "This is an address"},
		{"LTC address", LTC, Regtest, ltcVectors[2].receive[0], ErrMalformed, "This is an address"},
		{"ETH address", ETH, Mainnet, ethVectors[0].address, ErrMalformed, "This is an address"},
		{"descriptor with a wrong-network key", BTC, Mainnet, ltcVectors[2].descriptor, ErrWrongNetwork, "test network"},
	}
	for _, tt := range tests {
		_, err := ParseAccount(tt.coin, tt.network, tt.input)
		if !errors.Is(err, tt.kind) {
			t.Errorf("%s: ParseAccount = %v; want %v", tt.name, err, tt.kind)
			continue
		}
		if !checkout.IsCode(err, checkout.EValidationFailed) {
			t.Errorf("%s: code %s; want validation_failed", tt.name, checkout.ErrorCode(err))
		}
		if msg := checkout.ErrorMessage(err); !strings.Contains(msg, tt.want) {
			t.Errorf("%s: message %q; want it to say %q", tt.name, msg, tt.want)
		}
	}
}

func TestParseAccountArguments(t *testing.T) {
	if _, err := ParseAccount("SOL", Mainnet, bip84Xpub); err == nil {
		t.Error("ParseAccount(SOL) accepted a coin without derivation")
	}
	if _, err := ParseAccount(LTC, Signet, ltcVectors[1].key); err == nil {
		t.Error("ParseAccount(LTC, signet) accepted a network Litecoin does not have")
	}
	if _, err := ParseAccount(BTC, "simnet", ltcVectors[1].key); err == nil {
		t.Error("ParseAccount(BTC, simnet) accepted an unknown network")
	}
	for in, want := range map[string]Network{"main": Mainnet, "Mainnet": Mainnet, "test": Testnet, "testnet": Testnet, "regtest": Regtest, "signet": Signet} {
		if got, err := ParseNetwork(in); got != want || err != nil {
			t.Errorf("ParseNetwork(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ParseNetwork("simnet"); err == nil {
		t.Error("ParseNetwork(simnet) = nil error")
	}
}

func TestAddressIndex(t *testing.T) {
	a, err := ParseAccount(BTC, Mainnet, bip84Zpub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Address(MaxIndex); err != nil {
		t.Errorf("Address(MaxIndex) = %v", err)
	}
	if _, err := a.Address(MaxIndex + 1); !errors.Is(err, ErrIndex) {
		t.Errorf("Address(MaxIndex+1) = %v; want ErrIndex", err)
	}
	// Distinct indexes, distinct addresses.
	seen := map[string]bool{}
	for i := range uint32(50) {
		got, err := a.Address(i)
		if err != nil {
			t.Fatal(err)
		}
		if seen[got.Address] {
			t.Fatalf("Address(%d) = %s, seen before", i, got.Address)
		}
		seen[got.Address] = true
	}
}

func TestAccountAccessors(t *testing.T) {
	a, err := ParseAccount(LTC, Regtest, reversion(t, ltcVectors[2].key, 0x045f1cf6))
	if err != nil {
		t.Fatal(err)
	}
	if a.Coin() != LTC || a.Network() != Regtest || a.Chain() != 0 {
		t.Errorf("Coin, Network, Chain = %s, %s, %d; want LTC, regtest, 0", a.Coin(), a.Network(), a.Chain())
	}
	// Whatever the form given, the key is stored as tpub and the descriptor
	// is Litecoin Core's (here without origin: a bare key has none).
	if got := a.ExtendedKey(); got != ltcVectors[2].key {
		t.Errorf("ExtendedKey() = %s; want %s", got, ltcVectors[2].key)
	}
	if got, want := a.Descriptor(), "wpkh("+ltcVectors[2].key+"/0/*)#gt9he67w"; got != want {
		t.Errorf("Descriptor() = %s; want %s", got, want)
	}
	// The fingerprint is that of the account key: the parent fingerprint
	// its first receive chain key records.
	k, _ := decodeRaw(ltcVectors[2].key)
	chain, _ := k.child(0)
	fp := chain.parentFP
	if got, want := a.Fingerprint(), hex.EncodeToString(fp[:]); got != want {
		t.Errorf("Fingerprint() = %s; want %s", got, want)
	}
}
