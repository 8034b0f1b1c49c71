package hdwallet

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
)

// Network is the chain a coin's node runs on. The values are those of
// Bitcoin Core's and Litecoin Core's getblockchaininfo "chain" field, so a
// node adapter can pass what its node reports.
type Network string

// The networks.
const (
	Mainnet Network = "main"
	Testnet Network = "test"
	Regtest Network = "regtest"
	// Signet is Bitcoin's signed test network (tb1 addresses, test keys);
	// Litecoin has none.
	Signet Network = "signet"
)

// ParseNetwork returns the network named s: main (or mainnet), test (or
// testnet), regtest or signet.
func ParseNetwork(s string) (Network, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "main", "mainnet":
		return Mainnet, nil
	case "test", "testnet", "testnet3", "testnet4":
		return Testnet, nil
	case "regtest":
		return Regtest, nil
	case "signet":
		return Signet, nil
	}
	return "", fmt.Errorf("hdwallet: unknown network %q: use main, test, regtest or signet", s)
}

// The coins this package derives addresses for, as checkout.Coin codes.
const (
	BTC = "BTC"
	LTC = "LTC"
	ETH = "ETH"
	// SOL is checked as a refund's address only (CheckAddress): no
	// account of it is derived here.
	SOL = "SOL"
)

// Length limits: a serialized extended key is 111 characters; a wpkh
// descriptor with key origin and checksum some 160. Base58 decoding is
// quadratic, so nothing longer is decoded.
const (
	maxInput  = 1000
	maxKeyLen = 120
)

// MaxIndex is the largest address index: indexes at or past 2^31 are
// hardened, which needs the private key.
const MaxIndex = hardened - 1

// The kinds of key errors. Each error this package returns is a
// *checkout.Error with code validation_failed, a message the merchant can
// act on, and one of these as its cause, for errors.Is.
var (
	// ErrPrivateKey: a private key or seed phrase was given. The message
	// never repeats it.
	ErrPrivateKey = errors.New("hdwallet: private key given")
	// ErrChecksum: the Base58Check or descriptor checksum does not match.
	ErrChecksum = errors.New("hdwallet: checksum mismatch")
	// ErrWrongNetwork: a test-network key for a mainnet node or the reverse.
	ErrWrongNetwork = errors.New("hdwallet: key for another network")
	// ErrUnsupported: a well-formed key or descriptor of a kind checkoutd
	// does not pay to (wrapped segwit, multisig, another coin, a master or
	// address-level key, a descriptor other than wpkh).
	ErrUnsupported = errors.New("hdwallet: unsupported key")
	// ErrMalformed: not an extended public key or descriptor at all.
	ErrMalformed = errors.New("hdwallet: malformed key")
	// ErrIndex: an address index past MaxIndex, or (once in 2^127) an
	// index BIP 32 has no key for; take the next one.
	ErrIndex = errors.New("hdwallet: no address at this index")
)

func keyError(kind error, format string, args ...any) error {
	return &checkout.Error{Code: checkout.EValidationFailed, Message: fmt.Sprintf(format, args...), Err: kind}
}

// coinInfo holds what differs between the coins.
type coinInfo struct {
	name     string
	purpose  string             // BIP 84 or BIP 44 account path, for messages
	hrp      map[Network]string // bech32 prefixes; nil for ETH
	mainKeys string             // key names accepted on mainnet, for messages
	testKeys string
}

var coins = map[string]coinInfo{
	BTC: {
		name: "Bitcoin", purpose: "m/84'/0'/0'",
		hrp:      map[Network]string{Mainnet: "bc", Testnet: "tb", Regtest: "bcrt", Signet: "tb"},
		mainKeys: "xpub or zpub", testKeys: "tpub or vpub",
	},
	LTC: {
		name: "Litecoin", purpose: "m/84'/2'/0'",
		hrp:      map[Network]string{Mainnet: "ltc", Testnet: "tltc", Regtest: "rltc"},
		mainKeys: "xpub, Ltub or zpub", testKeys: "tpub, ttub or vpub",
	},
	ETH: {
		name: "Ethereum", purpose: "m/44'/60'/0'",
		mainKeys: "xpub", testKeys: "xpub",
	},
}

// Account is a merchant's account-level extended public key for one coin on
// one network: the receiving addresses of the merchant's wallet, without a
// way to spend from them.
type Account struct {
	coin    string
	network Network
	key     extendedKey
	chain   uint32  // 0 (receive) unless a descriptor said /1/*
	origin  *origin // from a descriptor, when it had one
}

// origin is a descriptor's key origin: the master key's fingerprint and the
// path from it to the account key.
type origin struct {
	fingerprint [4]byte
	path        []uint32
}

// ParseAccount parses what a merchant gives for coin (BTC, LTC or ETH) on
// network: an account-level extended public key (xpub, zpub, tpub, vpub,
// Ltub, ttub) or, for BTC and LTC, a wpkh output descriptor
// (wpkh([fingerprint/84h/0h/0h]xpub.../0/*)#checksum). For ETH the network
// is not checked: Ethereum keys and addresses are the same on every chain.
func ParseAccount(coin string, network Network, s string) (*Account, error) {
	ci, ok := coins[coin]
	if !ok {
		return nil, fmt.Errorf("hdwallet: coin %q has no key derivation", coin)
	}
	if ci.hrp != nil {
		if _, ok := ci.hrp[network]; !ok {
			return nil, fmt.Errorf("hdwallet: %s has no network %q", coin, network)
		}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, keyError(ErrMalformed, "Give the %s wallet's extended public key (%s).", ci.name, ci.mainKeys)
	}
	if len(s) > maxInput {
		return nil, keyError(ErrMalformed, "This is too long for an extended public key or a descriptor. Give the %s wallet's account key (%s).", ci.name, ci.mainKeys)
	}
	if looksLikeSeedPhrase(s) {
		return nil, keyError(ErrPrivateKey, "This looks like a seed phrase (recovery words). Never give it to anyone, checkoutd included: give the wallet's extended public key (%s) instead.", ci.mainKeys)
	}
	a := &Account{coin: coin, network: network}
	if strings.ContainsAny(s, "()") {
		if coin == ETH {
			return nil, keyError(ErrUnsupported, "Ethereum takes an extended public key (xpub of %s), not an output descriptor.", ci.purpose)
		}
		d, err := parseDescriptor(s)
		if err != nil {
			return nil, err
		}
		key, err := parseKey(ci, coin, network, d.key)
		if err != nil {
			return nil, err
		}
		if err := checkOrigin(ci, coin, network, d.origin); err != nil {
			return nil, err
		}
		a.key, a.chain, a.origin = key, d.chain, d.origin
		return a, nil
	}
	key, err := parseKey(ci, coin, network, s)
	if err != nil {
		return nil, err
	}
	a.key = key
	return a, nil
}

// coinTypes are the SLIP-0044 coin types of BIP 44/49/84/86 paths that
// name a coin of this package; 1 is every test network's.
var coinTypes = map[uint32]string{0: BTC, 1: "test", 2: LTC, 60: ETH}

// checkOrigin refuses a descriptor whose key origin follows a standard path
// (m/84'/coin'/account') for another coin or network: the key belongs to
// another wallet, which would never show the payments. Other paths are the
// merchant's choice.
func checkOrigin(ci coinInfo, coin string, network Network, o *origin) error {
	if o == nil || len(o.path) < 2 || o.path[1] < hardened {
		return nil
	}
	switch o.path[0] {
	case 44 + hardened, 49 + hardened, 84 + hardened, 86 + hardened:
	default:
		return nil
	}
	ct := o.path[1] - hardened
	name, known := coinTypes[ct]
	if !known {
		return nil
	}
	testPath := ct == 1
	switch {
	case testPath && network == Mainnet:
		return keyError(ErrWrongNetwork, "The descriptor's key origin (%s) is a test-network path (coin type 1'), but %s is configured for mainnet: give the mainnet account (%s).", formatPath(o.path), coin, ci.purpose)
	case !testPath && network != Mainnet:
		return keyError(ErrWrongNetwork, "The descriptor's key origin (%s) is a mainnet path, but %s is configured for %s: give the test-network account (coin type 1').", formatPath(o.path), coin, network)
	case !testPath && name != coin:
		return keyError(ErrUnsupported, "The descriptor's key origin (%s) is a %s account; for %s give the account %s.", formatPath(o.path), coins[name].name, ci.name, ci.purpose)
	}
	return nil
}

func formatPath(path []uint32) string {
	var b strings.Builder
	b.WriteString("m")
	for _, step := range path {
		b.WriteString(formatStep(step))
	}
	return b.String()
}

// looksLikeSeedPhrase reports whether s is a list of 12 or more words.
func looksLikeSeedPhrase(s string) bool {
	words := strings.Fields(s)
	if len(words) < 12 {
		return false
	}
	for _, w := range words {
		for _, r := range w {
			if r < 'a' || r > 'z' {
				return false
			}
		}
	}
	return true
}

// privatePrefix reports whether s starts like a private extended key.
func privatePrefix(s string) (string, bool) {
	if len(s) < 4 {
		return "", false
	}
	kv, ok := versionByName(s[:4])
	if ok && kv.private {
		return kv.name, true
	}
	return "", false
}

// publicOf names the public form of each private key version.
var publicOf = map[string]string{
	"xprv": "xpub", "yprv": "ypub", "zprv": "zpub", "Yprv": "Ypub", "Zprv": "Zpub",
	"tprv": "tpub", "uprv": "upub", "vprv": "vpub", "Uprv": "Upub", "Vprv": "Vpub",
	"Ltpv": "Ltub", "Mtpv": "Mtub", "ttpv": "ttub",
}

func privateKeyError(name string) error {
	what, pub := "This is a private key", "the extended public key"
	if p, ok := publicOf[name]; ok {
		what += " (" + name + ")"
		pub += " (" + p + ")"
	}
	return keyError(ErrPrivateKey, "%s: give %s instead. checkoutd never needs a private key; anyone who has this one can spend the wallet's funds, so keep it secret.", what, pub)
}

// parseKey parses and checks an extended public key for coin on network.
// No message quotes s: if it was a private key, it is a secret.
func parseKey(ci coinInfo, coin string, network Network, s string) (extendedKey, error) {
	if name, ok := privatePrefix(s); ok {
		return extendedKey{}, privateKeyError(name)
	}
	if hexLen(s) == 64 {
		return extendedKey{}, keyError(ErrPrivateKey, "This looks like a private key (64 hex digits): give the wallet's extended public key (%s) instead. checkoutd never needs a private key; anyone who has this one can spend its funds, so keep it secret.", ci.mainKeys)
	}
	if hexLen(s) == 40 || isSegwitAddress(s) {
		return extendedKey{}, keyError(ErrMalformed, "This is an address, not an extended public key. checkoutd gives every payment an address of its own, derived from the wallet's account key: give that key (%s).", ci.mainKeys)
	}
	if len(s) > maxKeyLen {
		return extendedKey{}, keyError(ErrMalformed, "This is too long for an extended public key. Give the %s wallet's account key (%s).", ci.name, ci.mainKeys)
	}
	payload, pos, err := base58CheckDecode(s)
	switch {
	case errors.Is(err, errBase58Char):
		return extendedKey{}, keyError(ErrMalformed, "This is not an extended public key: character %d is not one that keys use (they have no 0, O, I or l, no spaces or punctuation). Copy the key again from the wallet.", pos+1)
	case errors.Is(err, errBase58Checksum):
		return extendedKey{}, keyError(ErrChecksum, "The key's checksum does not match: it was mistyped or cut short. Copy it again from the wallet.")
	case err != nil:
		return extendedKey{}, keyError(ErrMalformed, "This is not an extended public key. Give the %s wallet's account key (%s).", ci.name, ci.mainKeys)
	}
	if isWIF(payload) {
		return extendedKey{}, keyError(ErrPrivateKey, "This is a private key (WIF): give the wallet's extended public key (%s) instead. checkoutd never needs a private key; anyone who has this one can spend its funds, so keep it secret.", ci.mainKeys)
	}
	if len(payload) != extKeyLen {
		return extendedKey{}, keyError(ErrMalformed, "This is not an extended public key (it may be an address or a single public key). Give the %s wallet's account key (%s).", ci.name, ci.mainKeys)
	}
	if payload[45] == 0x00 {
		return extendedKey{}, privateKeyError("")
	}
	kv, known := versionByBytes(uint32(payload[0])<<24 | uint32(payload[1])<<16 | uint32(payload[2])<<8 | uint32(payload[3]))
	if !known {
		return extendedKey{}, keyError(ErrUnsupported, "This extended key's version is unknown: it is not a Bitcoin, Litecoin or Ethereum account key. Give an %s.", ci.mainKeys)
	}
	if kv.private {
		return extendedKey{}, privateKeyError(kv.name)
	}
	key, err := decodeExtendedKey(payload)
	if err != nil {
		return extendedKey{}, keyError(ErrMalformed, "This extended public key is not valid (%v). Copy it again from the wallet.", err)
	}
	if err := checkVersion(ci, coin, network, kv); err != nil {
		return extendedKey{}, err
	}
	if key.depth == 0 {
		return extendedKey{}, keyError(ErrUnsupported, "This is the wallet's master public key; give the account-level key (%s) instead, the one wallets export as their %s.", ci.purpose, ci.mainKeys)
	}
	if key.childNumber < hardened {
		return extendedKey{}, keyError(ErrUnsupported, "This key is below account level (its last derivation step is not hardened): give the account-level key (%s).", ci.purpose)
	}
	return key, nil
}

// hexLen returns the number of hex digits of s, less a 0x prefix, or -1 if
// s is not all hex.
func hexLen(s string) int {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return -1
		}
	}
	return len(s)
}

// isSegwitAddress reports whether s is a segwit address of a network this
// package knows.
func isSegwitAddress(s string) bool {
	hrp, _, err := bech32Decode(s)
	if err != nil {
		return false
	}
	for _, ci := range coins {
		for _, h := range ci.hrp {
			if h == hrp {
				return true
			}
		}
	}
	return false
}

// isWIF reports whether a Base58Check payload is a WIF private key:
// a version byte (Bitcoin, Litecoin, test networks), 32 bytes, and
// 0x01 when compressed.
func isWIF(p []byte) bool {
	if len(p) != 33 && !(len(p) == 34 && p[33] == 0x01) {
		return false
	}
	return p[0] == 0x80 || p[0] == 0xb0 || p[0] == 0xef
}

// checkVersion checks that the version bytes of kv suit coin on network.
func checkVersion(ci coinInfo, coin string, network Network, kv keyVersion) error {
	switch kv.script {
	case scriptWrapped:
		return keyError(ErrUnsupported, "A %s is a key for wrapped segwit addresses (P2SH-P2WPKH, BIP 49), and checkoutd pays to native segwit addresses (BIP 84). Give the extended public key of a native segwit account (%s).", kv.name, ci.purpose)
	case scriptMultisig:
		return keyError(ErrUnsupported, "A %s is a multisig key; checkoutd supports single-signature wallets. Give a single-signature native segwit account key (%s).", kv.name, ci.purpose)
	}
	if coin == ETH {
		if kv.name != "xpub" {
			return keyError(ErrUnsupported, "Ethereum takes an xpub of the account %s; a %s is a Bitcoin or Litecoin key.", ci.purpose, kv.name)
		}
		return nil
	}
	if kv.litecoin && coin != LTC {
		return keyError(ErrUnsupported, "A %s is a Litecoin key; for %s give an %s.", kv.name, ci.name, ci.mainKeys)
	}
	if kv.testnet != (network != Mainnet) {
		if kv.testnet {
			return keyError(ErrWrongNetwork, "This key (%s) is for a test network, but %s is configured for mainnet: give the mainnet account key (%s).", kv.name, coin, ci.mainKeys)
		}
		return keyError(ErrWrongNetwork, "This key (%s) is for mainnet, but %s is configured for %s: give a test-network account key (%s).", kv.name, coin, network, ci.testKeys)
	}
	return nil
}

// Coin returns the account's coin code (BTC, LTC or ETH).
func (a *Account) Coin() string { return a.coin }

// Network returns the network the account was parsed for.
func (a *Account) Network() Network { return a.network }

// ExtendedKey returns the account key in the form Bitcoin Core and Litecoin
// Core use (xpub on mainnet, tpub on test networks, xpub for ETH), whatever
// form the merchant gave. It is what to store and what to show.
func (a *Account) ExtendedKey() string {
	version := uint32(versionXpub)
	if a.coin != ETH && a.network != Mainnet {
		version = versionTpub
	}
	return base58CheckEncode(a.key.serialize(version))
}

// Fingerprint returns the account key's own fingerprint (8 hex digits): a
// short name for the account, the same for every form of the key, to show
// beside it and to tell two keys apart.
func (a *Account) Fingerprint() string {
	fp := a.key.fingerprint()
	return hex.EncodeToString(fp[:])
}

// Chain returns the derivation chain of the account's addresses: 0, the
// receive chain, unless a descriptor gave /1/*.
func (a *Account) Chain() uint32 { return a.chain }

// Descriptor returns the ranged output descriptor of the account's
// addresses with its checksum, for a watch-only wallet's importdescriptors:
// wpkh([fingerprint/84h/0h/0h]xpub.../0/*)#checksum, with the key origin when
// the merchant's descriptor had one. It is empty for ETH.
func (a *Account) Descriptor() string {
	if a.coin == ETH {
		return ""
	}
	var b strings.Builder
	b.WriteString("wpkh(")
	if a.origin != nil {
		b.WriteString("[")
		b.WriteString(hex.EncodeToString(a.origin.fingerprint[:]))
		for _, step := range a.origin.path {
			b.WriteString(formatStep(step))
		}
		b.WriteString("]")
	}
	fmt.Fprintf(&b, "%s/%d/*)", a.ExtendedKey(), a.chain)
	return withChecksum(b.String())
}

func formatStep(step uint32) string {
	if step >= hardened {
		return fmt.Sprintf("/%dh", step-hardened)
	}
	return fmt.Sprintf("/%d", step)
}

// Address is one derived receiving address.
type Address struct {
	// Index is the address's index i on the account's chain
	// (account/0/i).
	Index uint32
	// Address is what the buyer pays to: bech32 P2WPKH (bc1q..., ltc1q...,
	// tb1q..., bcrt1q..., rltc1q...) or an EIP-55 checksummed Ethereum
	// address (0x...).
	Address string
	// PublicKey is the address's compressed public key (33 bytes).
	PublicKey []byte
	// Descriptor is the address's single-key descriptor with checksum,
	// wpkh(<public key hex>)#checksum, for a watch-only wallet's
	// importdescriptors. It is empty for ETH.
	Descriptor string
}

// Address derives the receiving address at index (account/chain/index).
// Indexes run from 0 to MaxIndex. The caller keeps count of the indexes
// it has used and never asks for one twice, so no address is reused.
func (a *Account) Address(index uint32) (Address, error) {
	if index > MaxIndex {
		return Address{}, keyError(ErrIndex, "Address index %d is past the last one (%d).", index, MaxIndex)
	}
	chain, err := a.key.child(a.chain)
	if err != nil {
		return Address{}, keyError(ErrUnsupported, "This key has no chain %d (BIP 32); use another account.", a.chain)
	}
	k, err := chain.child(index)
	if err != nil {
		return Address{}, keyError(ErrIndex, "BIP 32 has no key at index %d; take the next one.", index)
	}
	pub := k.pubKey.SerializeCompressed()
	if a.coin == ETH {
		return Address{Index: index, Address: ethAddress(k.pubKey.SerializeUncompressed()), PublicKey: pub}, nil
	}
	return Address{
		Index:      index,
		Address:    segwitV0Address(coins[a.coin].hrp[a.network], hash160(pub)),
		PublicKey:  pub,
		Descriptor: withChecksum("wpkh(" + hex.EncodeToString(pub) + ")"),
	}, nil
}
