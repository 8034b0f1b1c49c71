package hdwallet

import (
	"encoding/hex"
	"testing"
)

// All the reference values below come from one wallet: the BIP 84 test
// mnemonic "abandon abandon ... abandon about" (no passphrase), master key
// fingerprint 73c5da0a.

// BIP 84's published test vectors (bitcoin/bips bip-0084.mediawiki): the
// account zpub of m/84'/0'/0' and its first receive and change addresses.
const bip84Zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"

// bip84Xpub is the same key under xpub's version bytes (what Bitcoin Core
// and Sparrow show), from the reference run described at ltcVectors.
const bip84Xpub = "xpub6CatWdiZiodmUeTDp8LT5or8nmbKNcuyvz7WyksVFkKB4RHwCD3XyuvPEbvqAQY3rAPshWcMLoP2fMFMKHPJ4ZeZXYVUhLv1VMrjPC7PW6V"

func TestBIP84(t *testing.T) {
	for _, key := range []string{bip84Zpub, bip84Xpub} {
		a, err := ParseAccount(BTC, Mainnet, key)
		if err != nil {
			t.Fatalf("ParseAccount(%s…) = %v", key[:8], err)
		}
		if got := a.ExtendedKey(); got != bip84Xpub {
			t.Errorf("ExtendedKey() = %s; want %s", got, bip84Xpub)
		}
		for _, tt := range []struct {
			index   uint32
			pubKey  string
			address string
		}{
			{0, "0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"},
			{1, "03e775fd51f0dfb8cd865d9ff1cca2a158cf651fe997fdc9fee9c1d3b5e995ea77", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"},
		} {
			got, err := a.Address(tt.index)
			if err != nil {
				t.Fatalf("Address(%d) = %v", tt.index, err)
			}
			if got.Address != tt.address || hex.EncodeToString(got.PublicKey) != tt.pubKey || got.Index != tt.index {
				t.Errorf("Address(%d) = %s %x; want %s %s", tt.index, got.Address, got.PublicKey, tt.address, tt.pubKey)
			}
		}
	}

	// The account's descriptor, checksum by Litecoin Core (getdescriptorinfo
	// on mainnet, where Litecoin keys are xpubs too).
	d, err := ParseAccount(BTC, Mainnet, "wpkh([73c5da0a/84'/0'/0']"+bip84Zpub+"/0/*)")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Descriptor(), "wpkh([73c5da0a/84h/0h/0h]"+bip84Xpub+"/0/*)#afwvtk2s"; got != want {
		t.Errorf("Descriptor() = %s; want %s", got, want)
	}

	// The first change address, m/84'/0'/0'/1/0, through a /1/* descriptor.
	a, err := ParseAccount(BTC, Mainnet, "wpkh([73c5da0a/84h/0h/0h]"+bip84Xpub+"/1/*)")
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Address(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el"; got.Address != want {
		t.Errorf("change Address(0) = %s; want %s", got.Address, want)
	}
	if want := "03025324888e429ab8e3dbaf1f7802648b9cd01e9b418485c5fa4c1b9b5700e1a6"; hex.EncodeToString(got.PublicKey) != want {
		t.Errorf("change PublicKey = %x; want %s", got.PublicKey, want)
	}
}

// ltcVectors were produced once, on 2026-11-24, by two independent means
// that agree:
//
//   - the account keys (tpub of m/84'/1'/0', xpub of m/84'/2'/0' and
//     m/44'/60'/0') by BIP 32 private derivation from the mnemonic's seed
//     with python3-ecdsa's secp256k1 and hashlib (PBKDF2, HMAC-SHA512);
//   - the addresses by Litecoin Core 0.21.2 (Debian's litecoind), offline
//     (-connect=0) on main, test and regtest, with
//     deriveaddresses "wpkh(<root xprv or tprv>/84h/<coin>h/0h/0/*)#…" "[0,4]",
//     a hardened private derivation from the root key that never uses the
//     account keys, and again from the public descriptors
//     wpkh([73c5da0a/84h/<coin>h/0h]<account key>/0/*)#… and .../1/*, which
//     gave the same addresses. The descriptor checksums are Litecoin Core's
//     (getdescriptorinfo).
var ltcVectors = []struct {
	network    Network
	key        string
	descriptor string // Litecoin Core's, with its checksum
	receive    []string
	change     []string
}{
	{
		network:    Mainnet,
		key:        "xpub6CjGURuDpczf6uNrCCwfhVizn5J3hsWcvZ2m6GAdmAjZnoWJPrx6TFPjGSftc2o5fvox6ubQjSXmjjaHZjwYMH7SGFpHHb9Jg24zBf66mbE",
		descriptor: "wpkh([73c5da0a/84h/2h/0h]xpub6CjGURuDpczf6uNrCCwfhVizn5J3hsWcvZ2m6GAdmAjZnoWJPrx6TFPjGSftc2o5fvox6ubQjSXmjjaHZjwYMH7SGFpHHb9Jg24zBf66mbE/0/*)#xy7gfejd",
		receive: []string{
			"ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh",
			"ltc1qwlezpr3890hcp6vva9twqh27mr6edadreqvhnn",
			"ltc1qc6aucuznvhh9uvux246x24vf9y9ncfk729m92s",
			"ltc1qr4uckk3jjxtknw5mtqmtwvt87955rc7ays0hsh",
			"ltc1q8mtg60wwrnh5wjver003uewy4drfm9sses95z2",
		},
		change: []string{
			"ltc1qyeljcy9v88jg8sqvnqh0m5q390xruc5r98q9yy",
			"ltc1qzenvkhkqqazfanrjs6htluwlm2sdwt0sgc3jh8",
			"ltc1qjl3elnwcgqvq3j74k47e69lhvv3swpxq6z72wd",
			"ltc1qy2v3n5lt0zx79c305hymj92cdpje7cxw3argcv",
			"ltc1qm6fwmzt5sflk47mf58qktevput9e89mls7drw5",
		},
	},
	{
		network:    Testnet,
		key:        "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M",
		descriptor: "wpkh([73c5da0a/84h/1h/0h]tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M/0/*)#evh9fu0w",
		receive: []string{
			"tltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9pesrjxk",
			"tltc1qd7spv5q28348xl4myc8zmh983w5jx32ctl5d4h",
			"tltc1qxdyjf6h5d6qxap4n2dap97q4j5ps6ua8fha3gz",
			"tltc1qynpgs6wap6h9uvy7j0xlesew2w82qn0372e2xj",
			"tltc1q677973lw0w796gttpy52f296jqaaksz0duklcr",
		},
		change: []string{
			"tltc1q9u62588spffmq4dzjxsr5l297znf3z6jdfgyhw",
			"tltc1qkwgskuzmmwwvqajnyr7yp9hgvh5y45kg7xwnty",
			"tltc1q2vma00td2g9llw8hwa8ny3r774rtt7ae2p32j4",
			"tltc1qdz50mh3c5n2nyhazlxcum3ckwd7vppfh2zuc3x",
			"tltc1qw3xfnyuspj8qnr2envc448mxwam7f7p2wycnh0",
		},
	},
	{
		network:    Regtest,
		key:        "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M",
		descriptor: "wpkh([73c5da0a/84h/1h/0h]tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M/0/*)#evh9fu0w",
		receive: []string{
			"rltc1q6rz28mcfaxtmd6v789l9rrlrusdprr9puuzgkg",
			"rltc1qd7spv5q28348xl4myc8zmh983w5jx32cwn4h9f",
			"rltc1qxdyjf6h5d6qxap4n2dap97q4j5ps6ua8vmutcu",
			"rltc1qynpgs6wap6h9uvy7j0xlesew2w82qn03mxcskv",
			"rltc1q677973lw0w796gttpy52f296jqaaksz0gsh9ga",
		},
		change: []string{
			"rltc1q9u62588spffmq4dzjxsr5l297znf3z6jg9f78s",
			"rltc1qkwgskuzmmwwvqajnyr7yp9hgvh5y45kgm20fm6",
			"rltc1q2vma00td2g9llw8hwa8ny3r774rtt7ae0dsszt",
			"rltc1qdz50mh3c5n2nyhazlxcum3ckwd7vppfh0wazpc",
			"rltc1qw3xfnyuspj8qnr2envc448mxwam7f7p2tgef83",
		},
	},
}

func TestLitecoin(t *testing.T) {
	for _, v := range ltcVectors {
		// The bare key, Litecoin Core's descriptor with its checksum, and the
		// same without it all give the same receive addresses.
		body := v.descriptor[:len(v.descriptor)-9]
		for _, input := range []string{v.key, v.descriptor, body} {
			a, err := ParseAccount(LTC, v.network, input)
			if err != nil {
				t.Fatalf("ParseAccount(LTC, %s, %.40s…) = %v", v.network, input, err)
			}
			for i, want := range v.receive {
				got, err := a.Address(uint32(i))
				if err != nil {
					t.Fatal(err)
				}
				if got.Address != want {
					t.Errorf("%s %.20s… Address(%d) = %s; want %s", v.network, input, i, got.Address, want)
				}
			}
		}
		// Our descriptor of the account is Litecoin Core's, checksum and all.
		a, err := ParseAccount(LTC, v.network, v.descriptor)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Descriptor(); got != v.descriptor {
			t.Errorf("Descriptor() = %s; want %s", got, v.descriptor)
		}
		// The change chain.
		c, err := ParseAccount(LTC, v.network, "wpkh("+v.key+"/1/*)")
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range v.change {
			got, err := c.Address(uint32(i))
			if err != nil {
				t.Fatal(err)
			}
			if got.Address != want {
				t.Errorf("%s change Address(%d) = %s; want %s", v.network, i, got.Address, want)
			}
		}
	}
}

// Bitcoin's test networks use the same key as Litecoin's (tpub of
// m/84'/1'/0'), so their addresses carry the witness programs of the
// Litecoin Core vectors under the tb and bcrt prefixes.
// tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl is also the widely published
// testnet address of m/84'/1'/0'/0/0 for this mnemonic.
func TestBitcoinTestNetworks(t *testing.T) {
	test := ltcVectors[1]
	for _, tt := range []struct {
		network Network
		hrp     string
		first   string
	}{
		{Testnet, "tb", "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"},
		{Regtest, "bcrt", ""},
		{Signet, "tb", "tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl"},
	} {
		a, err := ParseAccount(BTC, tt.network, test.key)
		if err != nil {
			t.Fatal(err)
		}
		for i, ltc := range test.receive {
			got, err := a.Address(uint32(i))
			if err != nil {
				t.Fatal(err)
			}
			want, err := decodeSegwitV0("tltc", ltc)
			if err != nil {
				t.Fatal(err)
			}
			program, err := decodeSegwitV0(tt.hrp, got.Address)
			if err != nil {
				t.Fatalf("decode(%s) = %v", got.Address, err)
			}
			if string(program) != string(want) {
				t.Errorf("%s Address(%d) = %s; its program is not that of %s", tt.network, i, got.Address, ltc)
			}
			if i == 0 && tt.first != "" && got.Address != tt.first {
				t.Errorf("%s Address(0) = %s; want %s", tt.network, got.Address, tt.first)
			}
		}
	}
}

// ethVectors: the account xpub of m/44'/60'/0' and the addresses of
// m/44'/60'/0'/0/i, produced once by the Python reference described at
// ltcVectors, with Keccak-256 from python3-pycryptodome and EIP-55 written
// from the EIP. Litecoin Core's deriveaddresses of pkh(<root>/44h/60h/0h/0/*)
// and of pkh(<this xpub>/0/*) agreed, which checks the xpub.
// 0x9858EfFD232B4033E47d90003D41EC34EcaEda94 is also the widely published
// first address of this mnemonic (MetaMask, ethers).
const ethXpub = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"

var ethVectors = []struct{ pubKey, address string }{
	{"0237b0bb7a8288d38ed49a524b5dc98cff3eb5ca824c9f9dc0dfdb3d9cd600f299", "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"},
	{"039fd0991d0222b4e1339c1a1a5b5f6d9f6a96672a3247b638ee6156d9ea877a2f", "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"},
	{"03880bcb4bf46b49bdb071e307e282b11b9166907d9708f8c706092c44743f3e67", "0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A"},
	{"0371fd9d361f19065cb8e7be22dfd2ff3f7f265dcaf01f45cfcc956e55dba8b124", "0xF3f50213C1d2e255e4B2bAD430F8A38EEF8D718E"},
	{"02b1692ae0dfea1c15ba4250f4feb903a6633a3458acffa46a5380ef55645d1695", "0x51cA8ff9f1C0a99f88E86B8112eA3237F55374cA"},
}

func TestEthereum(t *testing.T) {
	// The network does not matter for Ethereum.
	for _, network := range []Network{Mainnet, Regtest} {
		a, err := ParseAccount(ETH, network, ethXpub)
		if err != nil {
			t.Fatal(err)
		}
		if a.Descriptor() != "" {
			t.Errorf("Descriptor() = %q; want none for ETH", a.Descriptor())
		}
		if got := a.ExtendedKey(); got != ethXpub {
			t.Errorf("ExtendedKey() = %s; want %s", got, ethXpub)
		}
		for i, v := range ethVectors {
			got, err := a.Address(uint32(i))
			if err != nil {
				t.Fatal(err)
			}
			if got.Address != v.address || hex.EncodeToString(got.PublicKey) != v.pubKey || got.Descriptor != "" {
				t.Errorf("Address(%d) = %s %x %q; want %s %s", i, got.Address, got.PublicKey, got.Descriptor, v.address, v.pubKey)
			}
		}
	}
}

// The single-address descriptor is wpkh(<public key>) with the checksum
// Litecoin Core gives it (getdescriptorinfo, same run as ltcVectors).
func TestAddressDescriptor(t *testing.T) {
	a, err := ParseAccount(BTC, Mainnet, bip84Zpub)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Address(0)
	if err != nil {
		t.Fatal(err)
	}
	want := "wpkh(0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c)#" + wantAddressChecksum
	if got.Descriptor != want {
		t.Errorf("Descriptor = %s; want %s", got.Descriptor, want)
	}
}

const wantAddressChecksum = "3chvf9zl"
