package checkout

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// CryptoKey is a store's extended public key (or wpkh descriptor) for one
// coin on one network, from which each live crypto quote takes a fresh
// receiving address (docs/crypto-keys.md). checkoutd never holds a private
// key: the funds go straight to the merchant's wallet. The key is public
// data, but it reveals every address of the merchant's account, so it is
// shown only to the store's members.
type CryptoKey struct {
	// ID is derived from the store, coin, network and key (CryptoKeyID):
	// setting a key that was set before resumes its index, so no address is
	// ever handed out twice.
	ID         string
	MerchantID string
	Coin       string
	// Network is the chain of the coin's node: main, test or regtest.
	Network string
	// Key is the key or descriptor as the merchant gave it, trimmed.
	Key string
	// Fingerprint is the key's BIP 32 fingerprint (8 hex digits), which
	// wallets show beside it.
	Fingerprint string
	// NextIndex is the index of the next address to hand out.
	NextIndex int64
	// Active is whether quotes use this key: one per store and coin.
	// Replaced keys stay, inactive, with their index.
	Active    bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CryptoKeyID returns the id of a store's key for a coin on a network.
func CryptoKeyID(merchantID, coin, network, key string) string {
	h := sha256.Sum256([]byte(merchantID + "\x00" + coin + "\x00" + network + "\x00" + key))
	return "xpk_" + hex.EncodeToString(h[:16])
}
