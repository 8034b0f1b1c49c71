package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

type keyCtx struct{}

// KeyFrom returns the API key that authenticated the request, or nil.
func KeyFrom(ctx context.Context) *checkout.APIKey {
	k, _ := ctx.Value(keyCtx{}).(*checkout.APIKey)
	return k
}

// Authenticate admits requests that carry a valid key and puts the key in
// their context. Without credentials: 401 authentication_required; with an
// unknown, revoked or malformed key: 401 invalid_api_key.
func Authenticate(svc *service.Service, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := authenticate(r, svc)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="checkoutd"`)
			WriteError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyCtx{}, key)))
	})
}

func authenticate(r *http.Request, svc *service.Service) (*checkout.APIKey, error) {
	h := r.Header.Get("Authorization")
	if strings.TrimSpace(h) == "" {
		return nil, checkout.Errorf(checkout.EAuthenticationRequired,
			"This API needs a secret key: send Authorization: Bearer <secret key>.")
	}
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return nil, checkout.Errorf(checkout.EInvalidAPIKey,
			"The Authorization header must read Bearer <secret key>.")
	}
	secret = strings.TrimSpace(secret)
	if _, typ, ok := checkout.ParseSecret(secret); ok && typ == checkout.KeyHMAC {
		return nil, checkout.Errorf(checkout.EInvalidAPIKey,
			"This is an HMAC key's secret, which is not accepted as a bearer secret; use a bearer key.")
	}
	return svc.Authenticate(r.Context(), secret)
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
