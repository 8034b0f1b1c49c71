package hdwallet

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// descriptor is what parseDescriptor takes from a wpkh descriptor.
type descriptor struct {
	key    string // the extended key, not yet parsed
	chain  uint32
	origin *origin
}

// knownFunctions are descriptor functions a merchant's wallet may export,
// named in the refusal; other text is not echoed.
var knownFunctions = []string{"pkh", "sh", "wsh", "tr", "combo", "addr", "raw", "multi", "sortedmulti", "rawtr"}

// parseDescriptor parses wpkh([fingerprint/path]KEY/0/*) with an optional
// #checksum, KEY/1/* and KEY/<0;1>/* (whose receive chain 0 it takes).
// Messages never quote the descriptor: it may hold a private key.
func parseDescriptor(s string) (descriptor, error) {
	var d descriptor
	body, sum, hasSum := strings.Cut(s, "#")
	if !strings.HasPrefix(body, "wpkh(") || !strings.HasSuffix(body, ")") {
		fn, _, _ := strings.Cut(body, "(")
		for _, k := range knownFunctions {
			if fn == k {
				return d, keyError(ErrUnsupported, "Only wpkh(...) descriptors (native segwit, one key) are accepted; this one is %s(...). Export the wallet's native segwit (BIP 84) descriptor.", fn)
			}
		}
		return d, keyError(ErrUnsupported, "Only wpkh(...) descriptors (native segwit, one key) are accepted, such as wpkh([fingerprint/84h/0h/0h]xpub.../0/*).")
	}
	inner := body[len("wpkh(") : len(body)-1]
	if strings.ContainsAny(inner, "(),") {
		return d, keyError(ErrUnsupported, "Only wpkh(...) descriptors with a single key are accepted; this one nests a script or holds several keys.")
	}

	// The key origin.
	if strings.HasPrefix(inner, "[") {
		end := strings.IndexByte(inner, ']')
		if end < 0 {
			return d, keyError(ErrMalformed, "The descriptor's key origin has no closing ']'.")
		}
		o, err := parseOrigin(inner[1:end])
		if err != nil {
			return d, err
		}
		d.origin = o
		inner = inner[end+1:]
	}

	// KEY/chain/*: the key has no '/', and the path is checked as a whole.
	key, path, _ := strings.Cut(inner, "/")
	if name, ok := privatePrefix(key); ok {
		return d, privateKeyError(name)
	}
	switch path {
	case "0/*", "<0;1>/*":
		d.chain = 0
	case "1/*":
		d.chain = 1
	default:
		switch {
		case path == "":
			return d, keyError(ErrUnsupported, "The descriptor has no range: end the key with /0/* (the receive addresses).")
		case strings.HasSuffix(path, "*h") || strings.HasSuffix(path, "*'"):
			return d, keyError(ErrUnsupported, "The descriptor's range is hardened (/*h), which needs the private key: give the account key with /0/*.")
		}
		return d, keyError(ErrUnsupported, "The descriptor must give the account key followed by /0/* (receive addresses) or /1/*; give the account-level descriptor the wallet exports.")
	}

	if hasSum {
		want, err := descriptorChecksum(body)
		if err != nil {
			return d, keyError(ErrMalformed, "The descriptor holds a character descriptors never use. Copy it again from the wallet.")
		}
		if sum != want {
			return d, keyError(ErrChecksum, "The descriptor's checksum does not match: it was mistyped or changed. Copy it again from the wallet, or leave out the #checksum.")
		}
	}
	d.key = key
	return d, nil
}

// parseOrigin parses "d34db33f/84h/0h/0h".
func parseOrigin(s string) (*origin, error) {
	parts := strings.Split(s, "/")
	fp, err := hex.DecodeString(parts[0])
	if err != nil || len(fp) != 4 {
		return nil, keyError(ErrMalformed, "The descriptor's key origin must start with the 8 hex digits of the master key's fingerprint.")
	}
	o := &origin{}
	copy(o.fingerprint[:], fp)
	for _, p := range parts[1:] {
		hard := strings.HasSuffix(p, "h") || strings.HasSuffix(p, "H") || strings.HasSuffix(p, "'")
		if hard {
			p = p[:len(p)-1]
		}
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil || uint32(n) >= hardened || (len(p) > 1 && p[0] == '0') {
			return nil, keyError(ErrMalformed, "The descriptor's key origin has a derivation step that is not a number below 2^31 followed by h or '.")
		}
		step := uint32(n)
		if hard {
			step += hardened
		}
		o.path = append(o.path, step)
	}
	return o, nil
}
