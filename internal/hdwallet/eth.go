package hdwallet

import (
	"encoding/hex"

	"golang.org/x/crypto/sha3"
)

// ethAddress is the EIP-55 address of an uncompressed public key (65 bytes,
// 0x04 first): the last 20 bytes of the Keccak-256 of its coordinates.
func ethAddress(uncompressed []byte) string {
	h := sha3.NewLegacyKeccak256()
	h.Write(uncompressed[1:])
	return eip55(h.Sum(nil)[12:])
}

// eip55 writes a 20-byte address in hex with the EIP-55 checksum: a letter
// is upper case where the matching nibble of the Keccak-256 of the
// lower-case hex is 8 or more.
func eip55(addr []byte) string {
	lower := hex.EncodeToString(addr)
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(lower))
	sum := h.Sum(nil)
	out := []byte(lower)
	for i, c := range out {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(out)
}
