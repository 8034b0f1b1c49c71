package hdwallet

import (
	"bytes"
	"strings"
	"testing"
)

// CheckAddress takes the addresses wallets pay (segwit of both checksums,
// legacy of each network's versions, Ethereum with or without its
// checksum, Solana's keys) of the coin and network asked, and refuses the rest saying
// what is wrong.
func TestCheckAddress(t *testing.T) {
	hash := bytes.Repeat([]byte{0x42}, 20)
	legacy := func(version byte) string { return base58CheckEncode(append([]byte{version}, hash...)) }
	for _, tt := range []struct {
		coin    string
		network Network
		addr    string
		want    string // "" for accepted, else a part of the error
	}{
		// BIP 173 and BIP 350's vectors.
		{BTC, Mainnet, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", ""},
		{BTC, Mainnet, "BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", ""},
		{BTC, Mainnet, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", ""},
		{BTC, Testnet, "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", ""},
		{BTC, Mainnet, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh", "checksum"},                     // v0 with bech32m's checksum
		{BTC, Mainnet, "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd", "checksum"}, // v1 with bech32's
		{BTC, Mainnet, "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", "checksum"},                     // a typo
		{BTC, Mainnet, "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "another network"},
		{BTC, Regtest, segwitV0Address("bcrt", hash), ""},
		{BTC, Mainnet, legacy(0x00), ""},
		{BTC, Mainnet, legacy(0x05), ""},
		{BTC, Testnet, legacy(0x6f), ""},
		{BTC, Mainnet, legacy(0x6f), "another network"},
		{BTC, Mainnet, legacy(0x00)[:20] + "x" + legacy(0x00)[21:], "not a Bitcoin address"},
		{LTC, Mainnet, segwitV0Address("ltc", hash), ""},
		{LTC, Mainnet, legacy(0x30), ""},
		{LTC, Mainnet, legacy(0x32), ""},
		{LTC, Regtest, segwitV0Address("rltc", hash), ""},
		{LTC, Regtest, legacy(0x6f), ""},
		{LTC, Testnet, segwitV0Address("tltc", hash), ""},
		{LTC, Mainnet, segwitV0Address("bc", hash), "not a Litecoin address"},
		{LTC, Regtest, segwitV0Address("ltc", hash), "another network"},
		{LTC, Mainnet, legacy(0x00), "another network"},
		// EIP-55's examples.
		{ETH, Mainnet, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", ""},
		// Solana: a 32-byte key in base58, the same on every network.
		{SOL, Testnet, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", ""},
		{SOL, Mainnet, "11111111111111111111111111111111", ""},
		{SOL, Testnet, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4w", "32 to 44"},
		{SOL, Testnet, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vv", "32 to 44"},
		{SOL, Testnet, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt0v", "character 43"},
		{SOL, Testnet, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "not a Solana address"},
		{ETH, Regtest, "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", ""},
		{ETH, Mainnet, "0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED", ""},
		{ETH, Mainnet, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "checksum"},
		{ETH, Mainnet, "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA", "40 hexadecimal"},
		{ETH, Mainnet, "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "40 hexadecimal"},
		{ETH, Mainnet, "0xZaAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "40 hexadecimal"},
		{BTC, Mainnet, "", "enter the address"},
		{BTC, Mainnet, "  ", "enter the address"},
		{BTC, Mainnet, strings.Repeat("1", 101), "too long"},
		{"DOGE", Mainnet, "D8vFz4p1L37jdg47HXKtSHA5uYLYxbGgPD", "does not check"},
	} {
		err := CheckAddress(tt.coin, tt.network, tt.addr)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckAddress(%s, %s, %s) = %v; want it accepted", tt.coin, tt.network, tt.addr, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckAddress(%s, %s, %s) = %v; want an error saying %q", tt.coin, tt.network, tt.addr, err, tt.want)
		}
	}
}
