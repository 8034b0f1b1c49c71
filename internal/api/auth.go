package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/httpsig"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

type keyCtx struct{}

// KeyFrom returns the API key that authenticated the request, or nil.
func KeyFrom(ctx context.Context) *checkout.APIKey {
	k, _ := ctx.Value(keyCtx{}).(*checkout.APIKey)
	return k
}

// Authenticate admits requests that carry a valid bearer key, or a valid
// signature of an HMAC key (Signature-Input and Signature), and puts the key
// in their context. Without credentials: 401 authentication_required; with
// an unknown, revoked or malformed key: 401 invalid_api_key, and with a
// refused signature 401 invalid_signature, each of which spends one of the
// client's failures (fails). A client with none left is answered 429
// rate_limited, without a read of the key, for every credential that cannot
// be valid (FailureLimiter); a valid key still gets in.
func Authenticate(svc *service.Service, fails *FailureLimiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := authenticate(r, svc, fails)
		if err != nil {
			switch checkout.ErrorCode(err) {
			case checkout.EAuthenticationRequired, checkout.EInvalidAPIKey:
				w.Header().Set("WWW-Authenticate", `Bearer realm="checkoutd"`)
			case checkout.EInvalidSignature:
				w.Header().Set("WWW-Authenticate", `Signature realm="checkoutd"`)
			}
			web.WriteError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyCtx{}, key)))
	})
}

func authenticate(r *http.Request, svc *service.Service, fails *FailureLimiter) (*checkout.APIKey, error) {
	h := r.Header.Get("Authorization")
	if httpsig.IsSigned(r.Header) {
		if strings.TrimSpace(h) != "" {
			return nil, checkout.Errorf(checkout.EInvalidSignature,
				"Send either a signature (Signature-Input and Signature) or Authorization, not both.")
		}
		return authenticateSigned(r, svc, fails)
	}
	if strings.TrimSpace(h) == "" {
		return nil, checkout.Errorf(checkout.EAuthenticationRequired,
			"This API needs a secret key: send Authorization: Bearer <secret key>.")
	}
	secret, err := bearerSecret(h)
	client := clientOf(r.RemoteAddr)
	over, wait := fails.blocked(client)
	if over {
		may := false
		if err == nil {
			if may, err = svc.BearerKeyMayExist(r.Context(), secret); err != nil {
				return nil, err
			}
		}
		if !may {
			return nil, fails.refuse(wait)
		}
	}
	var key *checkout.APIKey
	if err == nil {
		key, err = svc.Authenticate(r.Context(), secret)
	}
	countOutcome(fails, client, over, err, checkout.EInvalidAPIKey)
	return key, err
}

// countOutcome spends one of the client's failures when err has the code of
// a refused credential, and counts a key admitted over the limit.
func countOutcome(fails *FailureLimiter, client netip.Prefix, over bool, err error, refused string) {
	switch {
	case checkout.IsCode(err, refused):
		fails.fail(client)
	case err == nil && over:
		fails.admit()
	}
}

// authenticateSigned authenticates a request signed with an HMAC key
// (RFC 9421, DESIGN.md 6). The signature covers the body's digest, so the
// body is read here, at most MaxBodyBytes (413 beyond), and put back for the
// handler. A refused signature spends one of the client's failures, as an
// invalid key does; over the limit, a keyid that names no key this node
// knows of is refused before anything else.
func authenticateSigned(r *http.Request, svc *service.Service, fails *FailureLimiter) (*checkout.APIKey, error) {
	client := clientOf(r.RemoteAddr)
	over, wait := fails.blocked(client)
	if over {
		may, err := svc.SigningKeyMayExist(r.Context(), httpsig.KeyID(r.Header))
		if err != nil {
			return nil, err
		}
		if !may {
			return nil, fails.refuse(wait)
		}
	}
	if r.ContentLength > MaxBodyBytes {
		return nil, checkout.Errorf(checkout.EPayloadTooLarge, "The request body is larger than %d bytes.", MaxBodyBytes)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, checkout.Errorf(checkout.EInvalidJSON, "The request body could not be read.")
	}
	if len(body) > MaxBodyBytes {
		return nil, checkout.Errorf(checkout.EPayloadTooLarge, "The request body is larger than %d bytes.", MaxBodyBytes)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	key, err := svc.AuthenticateSigned(r.Context(), httpsig.Request{Method: r.Method, URL: r.URL, Header: r.Header, Body: body})
	countOutcome(fails, client, over, err, checkout.EInvalidSignature)
	return key, err
}

// bearerSecret returns the secret of an Authorization header that reads
// Bearer <secret>, and fails with invalid_api_key for any other.
func bearerSecret(h string) (string, error) {
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return "", checkout.Errorf(checkout.EInvalidAPIKey,
			"The Authorization header must read Bearer <secret key>.")
	}
	secret = strings.TrimSpace(secret)
	if _, typ, ok := checkout.ParseSecret(secret); ok && typ == checkout.KeyHMAC {
		return "", checkout.Errorf(checkout.EInvalidAPIKey,
			"This is an HMAC key's secret, which is never sent: sign the request with it (Signature-Input and Signature, docs/api.md), or send a bearer key.")
	}
	return secret, nil
}

// requireStore fails with store_not_found unless the key belongs to the
// store of the path.
func requireStore(key *checkout.APIKey, storeID string) error {
	if key.MerchantID != storeID {
		return checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", storeID)
	}
	return nil
}

// requirePermission fails with permission_denied unless the key carries perm.
func requirePermission(key *checkout.APIKey, perm checkout.Permission) error {
	if !key.Allows(perm) {
		return &checkout.Error{
			Code:    checkout.EPermissionDenied,
			Message: "This API key lacks the " + string(perm) + " permission.",
		}
	}
	return nil
}
