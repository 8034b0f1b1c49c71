package hdwallet

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/ripemd160" //nolint:staticcheck // HASH160 is RIPEMD-160 by consensus; nothing replaces it.
)

// hardened is the first hardened child index (BIP 32).
const hardened = uint32(1) << 31

// extKeyLen is the length of a serialized extended key without checksum.
const extKeyLen = 78

// extendedKey is a BIP 32 extended public key.
type extendedKey struct {
	version     uint32
	depth       byte
	parentFP    [4]byte
	childNumber uint32
	chainCode   [32]byte
	pubKey      *secp256k1.PublicKey
}

var (
	errInvalidChild = errors.New("child key invalid (BIP 32: try the next index)")
	errHardened     = errors.New("hardened derivation needs the private key")
)

// decodeExtendedKey splits a 78-byte payload. It checks the structure and
// that the key is a point of secp256k1, not the version bytes.
func decodeExtendedKey(b []byte) (extendedKey, error) {
	var k extendedKey
	if len(b) != extKeyLen {
		return k, errors.New("wrong length")
	}
	k.version = binary.BigEndian.Uint32(b[0:4])
	k.depth = b[4]
	copy(k.parentFP[:], b[5:9])
	k.childNumber = binary.BigEndian.Uint32(b[9:13])
	copy(k.chainCode[:], b[13:45])
	if k.depth == 0 && (k.parentFP != [4]byte{} || k.childNumber != 0) {
		return k, errors.New("depth 0 with a parent fingerprint or child number")
	}
	if b[45] != 0x02 && b[45] != 0x03 {
		return k, errors.New("not a compressed public key")
	}
	pub, err := secp256k1.ParsePubKey(b[45:78])
	if err != nil {
		return k, errors.New("public key not on secp256k1")
	}
	k.pubKey = pub
	return k, nil
}

// serialize returns the 78-byte payload of k under version.
func (k extendedKey) serialize(version uint32) []byte {
	b := make([]byte, 0, extKeyLen)
	b = binary.BigEndian.AppendUint32(b, version)
	b = append(b, k.depth)
	b = append(b, k.parentFP[:]...)
	b = binary.BigEndian.AppendUint32(b, k.childNumber)
	b = append(b, k.chainCode[:]...)
	return append(b, k.pubKey.SerializeCompressed()...)
}

// String returns the Base58Check form of k under its own version.
func (k extendedKey) String() string { return base58CheckEncode(k.serialize(k.version)) }

// fingerprint is the first four bytes of HASH160 of k's public key.
func (k extendedKey) fingerprint() [4]byte {
	var fp [4]byte
	copy(fp[:], hash160(k.pubKey.SerializeCompressed()))
	return fp
}

// child derives the non-hardened child i of k (BIP 32 CKDpub).
func (k extendedKey) child(i uint32) (extendedKey, error) {
	if i >= hardened {
		return extendedKey{}, errHardened
	}
	if k.depth == 255 {
		return extendedKey{}, errors.New("depth exceeds 255")
	}
	mac := hmac.New(sha512.New, k.chainCode[:])
	mac.Write(k.pubKey.SerializeCompressed())
	var ib [4]byte
	binary.BigEndian.PutUint32(ib[:], i)
	mac.Write(ib[:])
	sum := mac.Sum(nil)

	var il secp256k1.ModNScalar
	if overflow := il.SetByteSlice(sum[:32]); overflow {
		return extendedKey{}, errInvalidChild
	}
	var tweak, parent, result secp256k1.JacobianPoint
	secp256k1.ScalarBaseMultNonConst(&il, &tweak)
	k.pubKey.AsJacobian(&parent)
	secp256k1.AddNonConst(&tweak, &parent, &result)
	if (result.X.IsZero() && result.Y.IsZero()) || result.Z.IsZero() {
		return extendedKey{}, errInvalidChild
	}
	result.ToAffine()

	c := extendedKey{
		version:     k.version,
		depth:       k.depth + 1,
		parentFP:    k.fingerprint(),
		childNumber: i,
		pubKey:      secp256k1.NewPublicKey(&result.X, &result.Y),
	}
	copy(c.chainCode[:], sum[32:])
	return c, nil
}

func hash160(b []byte) []byte {
	h := sha256.Sum256(b)
	r := ripemd160.New()
	r.Write(h[:])
	return r.Sum(nil)
}
