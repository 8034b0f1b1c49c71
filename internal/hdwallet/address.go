package hdwallet

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// legacyVersions are the Base58Check version bytes of the legacy (P2PKH
// and P2SH) addresses of each coin's networks.
var legacyVersions = map[string]map[Network][]byte{
	BTC: {Mainnet: {0x00, 0x05}, Testnet: {0x6f, 0xc4}, Regtest: {0x6f, 0xc4}, Signet: {0x6f, 0xc4}},
	// Litecoin's M and Q P2SH versions, and the 3 and 2 it shared with
	// Bitcoin before.
	LTC: {Mainnet: {0x30, 0x32, 0x05}, Testnet: {0x6f, 0x3a, 0xc4}, Regtest: {0x6f, 0x3a, 0xc4}},
}

// CheckAddress checks that addr is an address of coin on network that a
// wallet can pay (a refund's payout, which the buyer gives): for BTC and
// LTC a segwit address of the network's prefix (bech32 for version 0,
// bech32m for taproot and later versions) or a legacy Base58Check one
// (P2PKH or P2SH) of the network's version bytes; for ETH 0x and 40 hex
// digits, whose EIP-55 checksum must hold when it mixes cases; for SOL a
// base58 public key of 32 bytes (the same on every Solana network, and
// with no checksum to catch a typo). The error
// says what is wrong, in words a buyer can act on.
func CheckAddress(coin string, network Network, addr string) error {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return fmt.Errorf("enter the address to send the refund to")
	}
	if len(addr) > 100 {
		return fmt.Errorf("that is not a %s address: it is too long", coinName(coin))
	}
	switch coin {
	case ETH:
		return checkETHAddress(addr)
	case SOL:
		return checkSOLAddress(addr)
	case BTC, LTC:
		ci := coins[coin]
		hrp, ok := ci.hrp[network]
		if !ok {
			return fmt.Errorf("%s has no %s network", coinName(coin), network)
		}
		if strings.HasPrefix(strings.ToLower(addr), hrp+"1") {
			return checkSegwit(coin, network, hrp, addr)
		}
		for _, other := range ci.hrp {
			if strings.HasPrefix(strings.ToLower(addr), other+"1") {
				return fmt.Errorf("that is a %s address of another network: this refund is paid on %s", coinName(coin), networkWords(network))
			}
		}
		payload, _, err := base58CheckDecode(addr)
		if err != nil || len(payload) != 21 {
			return fmt.Errorf("that is not a %s address of the %s network: check it, and that it is for %s", coinName(coin), network, networkWords(network))
		}
		for _, v := range legacyVersions[coin][network] {
			if payload[0] == v {
				return nil
			}
		}
		return fmt.Errorf("that is a %s address of another network: this refund is paid on %s", coinName(coin), networkWords(network))
	}
	return fmt.Errorf("checkoutd does not check %s addresses", coin)
}

func checkSegwit(coin string, network Network, hrp, addr string) error {
	bad := fmt.Errorf("that %s address is mistyped: its checksum does not match", coinName(coin))
	_, data, err := bech32DecodeWith(addr, 1)
	version := -1
	if err == nil && len(data) > 0 && data[0] == 0 {
		version = 0
	} else if _, data, err = bech32DecodeWith(addr, bech32mConst); err == nil && len(data) > 0 && data[0] >= 1 && data[0] <= 16 {
		version = int(data[0])
	}
	if version < 0 {
		return bad
	}
	program, ok := convertBits(data[1:], 5, 8, false)
	switch {
	case !ok || len(program) < 2 || len(program) > 40:
		return bad
	case version == 0 && len(program) != 20 && len(program) != 32:
		return bad
	case version == 1 && len(program) != 32:
		return bad
	}
	return nil
}

func checkETHAddress(addr string) error {
	hexPart, ok := strings.CutPrefix(addr, "0x")
	if !ok || len(hexPart) != 40 {
		return fmt.Errorf("that is not an Ethereum address: 0x and 40 hexadecimal digits")
	}
	raw, err := hex.DecodeString(hexPart)
	if err != nil {
		return fmt.Errorf("that is not an Ethereum address: 0x and 40 hexadecimal digits")
	}
	if hexPart != strings.ToLower(hexPart) && hexPart != strings.ToUpper(hexPart) && eip55(raw) != "0x"+hexPart {
		return fmt.Errorf("that Ethereum address is mistyped: its mixed-case checksum (EIP-55) does not match")
	}
	return nil
}

func coinName(coin string) string {
	if ci, ok := coins[coin]; ok {
		return ci.name
	}
	if coin == SOL {
		return "Solana"
	}
	return coin
}

// checkSOLAddress checks a Solana address: 32 to 44 base58 characters
// that decode to a 32-byte public key.
func checkSOLAddress(addr string) error {
	b, pos, err := base58Decode(addr)
	switch {
	case err != nil:
		return fmt.Errorf("that is not a Solana address: character %d (%q) is not one an address has", pos+1, addr[pos])
	case len(addr) < 32 || len(addr) > 44 || len(b) != 32:
		return fmt.Errorf("that is not a Solana address: one is 32 to 44 characters that stand for a 32-byte key")
	}
	return nil
}

func networkWords(n Network) string {
	switch n {
	case Mainnet:
		return "the main network (real coins)"
	case Testnet:
		return "the test network (testnet coins)"
	case Regtest:
		return "a private test network (regtest)"
	}
	return string(n)
}
