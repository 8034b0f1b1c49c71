package service

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/httpsig"
)

// AuthenticateSigned returns the live HMAC key that signed r (RFC 9421,
// DESIGN.md 6). r.BaseURL is filled with the service's base URL: @target-uri
// is rebuilt from it, never from the Host header. Every refusal is
// invalid_signature saying which check failed: the signature's shape,
// alg, created, a covered component, the Content-Digest, the key (unknown,
// revoked, or not an HMAC key: a signature made with a bearer key is
// refused), the signature itself, and last the nonce, remembered in the
// database until the signature's window ends, so a signature is accepted
// once on any node. The nonce is recorded only for a signature that
// verified: nobody without the secret can spend a merchant's nonces.
func (s *Service) AuthenticateSigned(ctx context.Context, r httpsig.Request) (*checkout.APIKey, error) {
	r.BaseURL = s.baseURL
	now := s.now()
	signed, err := httpsig.Parse(r, now)
	if err != nil {
		return nil, signatureError(err)
	}
	k, err := s.signingKey(ctx, signed.KeyID)
	if err != nil {
		return nil, err
	}
	secret, err := s.HMACSecret(k)
	if err != nil {
		return nil, err
	}
	if err := signed.Verify(secret); err != nil {
		return nil, signatureError(err)
	}
	fresh, err := s.store.SignatureNonceUse(ctx, k.ID, signed.Nonce, now, signed.Created.Add(httpsig.Window))
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, checkout.Errorf(checkout.EInvalidSignature,
			"The signature is replayed: its nonce was used before within the last %d seconds. Sign each request with a new nonce.", int(httpsig.Window.Seconds()))
	}
	return k, nil
}

// signingKey is the live HMAC key keyid names, from the cache of keys at
// most KeyCacheTTL old (so a revoked key stops signing as fast as a bearer
// key stops working).
func (s *Service) signingKey(ctx context.Context, id string) (*checkout.APIKey, error) {
	unknown := checkout.Errorf(checkout.EInvalidSignature, "The signature's keyid names no usable HMAC key: it is unknown, revoked, or a bearer key, which cannot sign.")
	if !validKeyID(id) {
		return nil, unknown
	}
	cacheKey := "id:" + id
	k, ok := s.keys.get(cacheKey)
	if !ok {
		start := s.keys.start()
		var err error
		k, err = s.store.APIKeyGet(ctx, id)
		if checkout.IsCode(err, checkout.ENotFound) {
			return nil, unknown
		}
		if err != nil {
			return nil, err
		}
		s.keys.put(cacheKey, k, start)
	}
	if k.Type != checkout.KeyHMAC || k.Revoked() {
		return nil, unknown
	}
	return k, nil
}

// signatureError turns an httpsig failure into invalid_signature with its
// message.
func signatureError(err error) error {
	var f *httpsig.Failure
	if errors.As(err, &f) {
		return checkout.Errorf(checkout.EInvalidSignature, "%s", f.Message)
	}
	return err
}

// validKeyID reports whether id has the shape of a key id (key_ and 32
// hex): another costs no database read.
func validKeyID(id string) bool {
	h, ok := strings.CutPrefix(id, "key_")
	if !ok || len(h) != 32 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}
