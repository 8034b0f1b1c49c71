package hdwallet

import (
	"crypto/sha256"
	"errors"
	"math/big"
)

// alphabet58 is Bitcoin's base58 alphabet: no 0, O, I or l.
const alphabet58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var (
	errBase58Char     = errors.New("not a base58 character")
	errBase58Checksum = errors.New("base58check checksum mismatch")
	errBase58Short    = errors.New("too short for base58check")
)

// index58 maps an ASCII byte to its base58 digit, or -1.
var index58 = func() [256]int8 {
	var t [256]int8
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(alphabet58); i++ {
		t[alphabet58[i]] = int8(i)
	}
	return t
}()

// base58Encode encodes b; each leading zero byte becomes a leading '1'.
// math/big is plenty for 82-byte keys, which are all it encodes.
func base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, alphabet58[mod.Int64()])
	}
	for range zeros {
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// base58Decode decodes s. On a bad character it returns its position (from
// 0) so that the message can point at it without repeating the input.
func base58Decode(s string) ([]byte, int, error) {
	n := new(big.Int)
	radix := big.NewInt(58)
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for i := 0; i < len(s); i++ {
		d := index58[s[i]]
		if d < 0 {
			return nil, i, errBase58Char
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(d)))
	}
	return append(make([]byte, zeros), n.Bytes()...), 0, nil
}

// base58CheckEncode appends the 4-byte double-SHA256 checksum and encodes.
func base58CheckEncode(payload []byte) string {
	sum := doubleSHA256(payload)
	return base58Encode(append(append([]byte(nil), payload...), sum[:4]...))
}

// base58CheckDecode decodes s and verifies and strips its checksum.
func base58CheckDecode(s string) ([]byte, int, error) {
	b, pos, err := base58Decode(s)
	if err != nil {
		return nil, pos, err
	}
	if len(b) < 4 {
		return nil, 0, errBase58Short
	}
	payload, sum := b[:len(b)-4], b[len(b)-4:]
	want := doubleSHA256(payload)
	if string(sum) != string(want[:4]) {
		return nil, 0, errBase58Checksum
	}
	return payload, 0, nil
}

func doubleSHA256(b []byte) [32]byte {
	h := sha256.Sum256(b)
	return sha256.Sum256(h[:])
}
