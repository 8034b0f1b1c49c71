// Package hdwallet derives the receiving addresses of a merchant's wallet
// from its extended public key, without a private key and without a
// network.
//
// A merchant gives, per store and coin, the account-level extended public
// key of a wallet (or, for Bitcoin and Litecoin, a wpkh output descriptor of
// it). ParseAccount checks it for the coin and the network its node runs on
// and refuses, without repeating it, anything that is a private key. The
// Account then derives the address at each index of the receive chain
// (account/0/i, BIP 32 public derivation): a native segwit P2WPKH address
// (BIP 84, bech32 of BIP 173) for BTC and LTC, an EIP-55 address (BIP 44,
// m/44'/60'/0'/0/i) for ETH, and for BTC and LTC the descriptors a node's
// watch-only wallet imports. Counting indexes, so that no address serves
// two sessions, is the caller's job.
//
// docs/crypto-keys.md says which keys are accepted and how a merchant
// exports one.
package hdwallet
