package hdwallet

import (
	"errors"
	"strings"
)

// BIP 173 bech32, enough of it to encode version-0 witness addresses and to
// decode for checks; and BIP 350 bech32m, to check the taproot (version 1
// and up) addresses a buyer may give for a refund (CheckAddress).

const charset32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

var errBech32 = errors.New("invalid bech32 string")

func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

func bech32HRPExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := 0; i < len(hrp); i++ {
		out = append(out, hrp[i]&31)
	}
	return out
}

// bech32Encode encodes 5-bit data under a lower-case hrp.
func bech32Encode(hrp string, data []byte) string {
	values := append(bech32HRPExpand(hrp), data...)
	polymod := bech32Polymod(append(values, 0, 0, 0, 0, 0, 0)) ^ 1
	var b strings.Builder
	b.WriteString(hrp)
	b.WriteByte('1')
	for _, d := range data {
		b.WriteByte(charset32[d])
	}
	for i := range 6 {
		b.WriteByte(charset32[(polymod>>(5*(5-i)))&31])
	}
	return b.String()
}

// bech32mConst is the checksum constant of bech32m (BIP 350); bech32's is 1.
const bech32mConst = 0x2bc830a3

// bech32Decode decodes s into its lower-case hrp and 5-bit data, checksum
// removed, per BIP 173's rules (length, case, characters, checksum).
func bech32Decode(s string) (string, []byte, error) {
	return bech32DecodeWith(s, 1)
}

// bech32DecodeWith is bech32Decode with the checksum constant of bech32 (1)
// or bech32m (bech32mConst).
func bech32DecodeWith(s string, constant uint32) (string, []byte, error) {
	if len(s) > 90 {
		return "", nil, errBech32
	}
	lower, upper := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 33 || c > 126 {
			return "", nil, errBech32
		}
		lower = lower || (c >= 'a' && c <= 'z')
		upper = upper || (c >= 'A' && c <= 'Z')
	}
	if lower && upper {
		return "", nil, errBech32
	}
	s = strings.ToLower(s)
	pos := strings.LastIndexByte(s, '1')
	if pos < 1 || pos+7 > len(s) {
		return "", nil, errBech32
	}
	hrp := s[:pos]
	data := make([]byte, 0, len(s)-pos-1)
	for i := pos + 1; i < len(s); i++ {
		d := strings.IndexByte(charset32, s[i])
		if d < 0 {
			return "", nil, errBech32
		}
		data = append(data, byte(d))
	}
	if bech32Polymod(append(bech32HRPExpand(hrp), data...)) != constant {
		return "", nil, errBech32
	}
	return hrp, data[:len(data)-6], nil
}

// convertBits regroups a bit stream from groups of from bits to groups of to
// bits; pad says whether a final partial group is padded with zeros (when
// encoding) or must be zero padding of less than from bits (when decoding).
func convertBits(data []byte, from, to uint, pad bool) ([]byte, bool) {
	var acc, bits uint
	maxv := uint(1)<<to - 1
	var out []byte
	for _, v := range data {
		if uint(v)>>from != 0 {
			return nil, false
		}
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte((acc>>bits)&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte((acc<<(to-bits))&maxv))
		}
	} else if bits >= from || (acc<<(to-bits))&maxv != 0 {
		return nil, false
	}
	return out, true
}

// segwitV0Address is the bech32 address of a version-0 witness program
// (20 bytes for P2WPKH, 32 for P2WSH).
func segwitV0Address(hrp string, program []byte) string {
	data, _ := convertBits(program, 8, 5, true)
	return bech32Encode(hrp, append([]byte{0}, data...))
}

// decodeSegwitV0 returns the witness program of a version-0 address of hrp.
func decodeSegwitV0(hrp, addr string) ([]byte, error) {
	got, data, err := bech32Decode(addr)
	if err != nil {
		return nil, err
	}
	if got != hrp || len(data) < 1 || data[0] != 0 {
		return nil, errBech32
	}
	program, ok := convertBits(data[1:], 5, 8, false)
	if !ok || (len(program) != 20 && len(program) != 32) {
		return nil, errBech32
	}
	return program, nil
}
