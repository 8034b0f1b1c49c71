package chain

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// ParseDecimal reads an exact decimal number of coins, as nodes write
// amounts in JSON ("0.00012345"), into base units with the given number of
// decimals: ParseDecimal("0.00012345", 8) is 12345. More decimals than the
// coin has, exponents and anything but digits with one optional point and
// sign are refused, never rounded.
func ParseDecimal(s string, decimals int) (*big.Int, error) {
	digits := s
	neg := strings.HasPrefix(digits, "-")
	if neg {
		digits = digits[1:]
	}
	whole, frac, _ := strings.Cut(digits, ".")
	if whole == "" || !allDigits(whole) || !allDigits(frac) {
		return nil, fmt.Errorf("amount %q is not a decimal number", s)
	}
	if len(frac) > decimals {
		return nil, fmt.Errorf("amount %q has more than %d decimals", s, decimals)
	}
	n, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", decimals-len(frac)), 10)
	if !ok {
		return nil, fmt.Errorf("amount %q is not a decimal number", s)
	}
	if neg {
		n.Neg(n)
	}
	return n, nil
}

// ParseQuantity reads a hex quantity of Ethereum JSON-RPC ("0x1bc16d674ec80000").
func ParseQuantity(s string) (*big.Int, error) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || h == "" {
		return nil, fmt.Errorf("quantity %q is not 0x-prefixed hex", s)
	}
	n, ok := new(big.Int).SetString(h, 16)
	if !ok {
		return nil, fmt.Errorf("quantity %q is not 0x-prefixed hex", s)
	}
	return n, nil
}

// Int64 returns n as an int64, or an error when it does not fit (wei
// above about 9.22 ETH).
func Int64(n *big.Int) (int64, error) {
	if !n.IsInt64() {
		return 0, errors.New("amount " + n.String() + " does not fit in an int64")
	}
	return n.Int64(), nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
