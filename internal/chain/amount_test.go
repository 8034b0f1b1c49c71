package chain_test

import (
	"math/big"
	"testing"

	"github.com/checkoutd/checkoutd/internal/chain"
)

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		dec  int
		want string // "" for an error
	}{
		{"0.00012345", 8, "12345"},
		{"0.00000001", 8, "1"},
		{"21000000.00000000", 8, "2100000000000000"},
		{"84000000", 8, "8400000000000000"},
		{"0.1", 8, "10000000"},
		{"-0.5", 8, "-50000000"},
		{"1.5", 18, "1500000000000000000"},
		{"123456789.123456789123456789", 18, "123456789123456789123456789"},
		{"0.000000001", 8, ""},
		{"1e-05", 8, ""},
		{"1E8", 8, ""},
		{"", 8, ""},
		{".5", 8, ""},
		{"1.2.3", 8, ""},
		{"+1", 8, ""},
		{"0x10", 8, ""},
		{" 1", 8, ""},
		{"--1", 8, ""},
	}
	for _, tt := range tests {
		got, err := chain.ParseDecimal(tt.in, tt.dec)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseDecimal(%q, %d) = %v; want an error", tt.in, tt.dec, got)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseDecimal(%q, %d) = %v, %v; want %s", tt.in, tt.dec, got, err, tt.want)
		}
	}
}

func TestParseQuantity(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0x0", "0"},
		{"0x1bc16d674ec80000", "2000000000000000000"},
		{"0xde0b6b3a76400000", "16000000000000000000"}, // 16 ETH: over int64
		{"0x", ""},
		{"12", ""},
		{"0xzz", ""},
	}
	for _, tt := range tests {
		got, err := chain.ParseQuantity(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseQuantity(%q) = %v; want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseQuantity(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestInt64(t *testing.T) {
	if n, err := chain.Int64(big.NewInt(12345)); err != nil || n != 12345 {
		t.Errorf("Int64(12345) = %d, %v", n, err)
	}
	wei, _ := new(big.Int).SetString("16000000000000000000", 10)
	if n, err := chain.Int64(wei); err == nil {
		t.Errorf("Int64(16 ETH in wei) = %d; want an error", n)
	}
}
