package hdwallet

// script is the kind of output a key's version bytes promise (SLIP-0132).
type script int

const (
	scriptAny      script = iota // xpub, tpub, Ltub, ttub: the version says nothing of the script
	scriptWPKH                   // native segwit (BIP 84)
	scriptWrapped                // P2SH-P2WPKH (BIP 49)
	scriptMultisig               // multisig (Ypub, Zpub, Upub, Vpub)
)

// keyVersion describes one set of version bytes.
type keyVersion struct {
	name    string // the Base58 prefix it produces: xpub
	version uint32
	private bool
	testnet bool
	script  script
	// litecoin marks the versions only Litecoin wallets use.
	litecoin bool
}

// keyVersions are the version bytes of BIP 32 and SLIP-0132 that a merchant
// may paste. Private ones are listed so that they are recognised and
// refused rather than called unknown.
var keyVersions = []keyVersion{
	{name: "xpub", version: 0x0488b21e, script: scriptAny},
	{name: "ypub", version: 0x049d7cb2, script: scriptWrapped},
	{name: "zpub", version: 0x04b24746, script: scriptWPKH},
	{name: "Ypub", version: 0x0295b43f, script: scriptMultisig},
	{name: "Zpub", version: 0x02aa7ed3, script: scriptMultisig},
	{name: "tpub", version: 0x043587cf, testnet: true, script: scriptAny},
	{name: "upub", version: 0x044a5262, testnet: true, script: scriptWrapped},
	{name: "vpub", version: 0x045f1cf6, testnet: true, script: scriptWPKH},
	{name: "Upub", version: 0x024289ef, testnet: true, script: scriptMultisig},
	{name: "Vpub", version: 0x02575483, testnet: true, script: scriptMultisig},
	{name: "Ltub", version: 0x019da462, script: scriptAny, litecoin: true},
	{name: "Mtub", version: 0x01b26ef6, script: scriptWrapped, litecoin: true},
	{name: "ttub", version: 0x0436f6e1, testnet: true, script: scriptAny, litecoin: true},

	{name: "xprv", version: 0x0488ade4, private: true},
	{name: "yprv", version: 0x049d7878, private: true},
	{name: "zprv", version: 0x04b2430c, private: true},
	{name: "Yprv", version: 0x0295b005, private: true},
	{name: "Zprv", version: 0x02aa7a99, private: true},
	{name: "tprv", version: 0x04358394, testnet: true, private: true},
	{name: "uprv", version: 0x044a4e28, testnet: true, private: true},
	{name: "vprv", version: 0x045f18bc, testnet: true, private: true},
	{name: "Uprv", version: 0x024285b5, testnet: true, private: true},
	{name: "Vprv", version: 0x02575048, testnet: true, private: true},
	{name: "Ltpv", version: 0x019d9cfe, private: true, litecoin: true},
	{name: "Mtpv", version: 0x01b26792, private: true, litecoin: true},
	{name: "ttpv", version: 0x0436ef7d, testnet: true, private: true, litecoin: true},
}

func versionByBytes(v uint32) (keyVersion, bool) {
	for _, kv := range keyVersions {
		if kv.version == v {
			return kv, true
		}
	}
	return keyVersion{}, false
}

func versionByName(name string) (keyVersion, bool) {
	for _, kv := range keyVersions {
		if kv.name == name {
			return kv, true
		}
	}
	return keyVersion{}, false
}

// Canonical versions the package writes keys in (descriptors, storage):
// what Bitcoin Core and Litecoin Core use.
const (
	versionXpub = 0x0488b21e
	versionTpub = 0x043587cf
)
