package hdwallet

import (
	"errors"
	"strings"
)

// Output descriptor checksums (BIP 380; Bitcoin Core's doc/descriptors.md).

const descInputCharset = "0123456789()[],'/*abcdefgh@:$%{}" +
	"IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~" +
	"ijklmnopqrstuvwxyzABCDEFGH`#\"\\ "

var errDescChar = errors.New("character outside the descriptor character set")

func descPolymod(c uint64, v int) uint64 {
	gen := [5]uint64{0xf5dee51989, 0xa9fdca3312, 0x1bab10e32d, 0x3706b1677a, 0x644d626ffd}
	top := c >> 35
	c = (c&0x7ffffffff)<<5 ^ uint64(v)
	for i := range 5 {
		if (top>>i)&1 == 1 {
			c ^= gen[i]
		}
	}
	return c
}

// descriptorChecksum returns the 8-character checksum of desc (without its
// '#' suffix).
func descriptorChecksum(desc string) (string, error) {
	c := uint64(1)
	cls, clsCount := 0, 0
	for i := 0; i < len(desc); i++ {
		pos := strings.IndexByte(descInputCharset, desc[i])
		if pos < 0 {
			return "", errDescChar
		}
		c = descPolymod(c, pos&31)
		cls = cls*3 + pos>>5
		clsCount++
		if clsCount == 3 {
			c = descPolymod(c, cls)
			cls, clsCount = 0, 0
		}
	}
	if clsCount > 0 {
		c = descPolymod(c, cls)
	}
	for range 8 {
		c = descPolymod(c, 0)
	}
	c ^= 1
	var out [8]byte
	for i := range 8 {
		out[i] = charset32[(c>>(5*(7-i)))&31]
	}
	return string(out[:]), nil
}

// withChecksum returns desc#checksum. desc is built by this package from
// characters of the set, so it cannot fail.
func withChecksum(desc string) string {
	sum, err := descriptorChecksum(desc)
	if err != nil {
		panic("hdwallet: descriptor outside the character set")
	}
	return desc + "#" + sum
}
