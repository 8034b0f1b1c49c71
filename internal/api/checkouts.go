package api

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// MaxBodyBytes is the largest request body the API reads (DESIGN.md 4.13).
const MaxBodyBytes = 64 << 10

// maxIdempotencyKeyLen bounds the Idempotency-Key header.
const maxIdempotencyKeyLen = 255

// HandleCreateCheckout serves POST /v1/stores/{storeId}/checkouts.
func HandleCreateCheckout(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := pathParams(r, false)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		if err := requireStore(key, storeID); err != nil {
			web.WriteError(w, r, err)
			return
		}
		if err := requirePermission(key, checkout.PermCheckoutsWrite); err != nil {
			web.WriteError(w, r, err)
			return
		}
		idemKey, err := idempotencyKey(r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		params, err := checkout.ParseCreateRequest(body)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		res, err := svc.CreateSession(r.Context(), service.CreateSessionParams{
			Key: key, StoreID: storeID, Params: params, IdempotencyKey: idemKey,
		})
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		if res.Replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		web.WriteRawData(w, http.StatusCreated, res.Data) // a replay answers as the first request did
	})
}

// HandleGetCheckout serves GET /v1/stores/{storeId}/checkouts/{checkoutId}.
func HandleGetCheckout(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := KeyFrom(r.Context())
		storeID, err := pathParams(r, true)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		if err := requireStore(key, storeID); err != nil {
			web.WriteError(w, r, err)
			return
		}
		if err := requirePermission(key, checkout.PermCheckoutsRead); err != nil {
			web.WriteError(w, r, err)
			return
		}
		sess, err := svc.GetSession(r.Context(), key, storeID, r.PathValue("checkoutId"))
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, sess)
	})
}

// pathParams checks the path parameters and returns the store id in its
// canonical lower-case form. Every malformed parameter is reported.
func pathParams(r *http.Request, withCheckout bool) (string, error) {
	var v []checkout.Violation
	storeID := strings.ToLower(r.PathValue("storeId"))
	if !checkout.ValidStoreID(storeID) {
		v = append(v, checkout.Violation{Code: "invalid_format", Param: "storeId",
			Message: "storeId must be a store id in uuid format, such as 3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60."})
	}
	if withCheckout && !checkout.ValidSessionID(r.PathValue("checkoutId")) {
		v = append(v, checkout.Violation{Code: "invalid_format", Param: "checkoutId",
			Message: "checkoutId must be a checkout session id: cs_ and 64 (or, for the earliest sessions, 32) lower-case hex characters."})
	}
	if len(v) > 0 {
		return "", &checkout.Error{Code: checkout.EValidationFailed, Message: v[0].Message, Param: v[0].Param, Details: v}
	}
	return storeID, nil
}

// idempotencyKey returns the Idempotency-Key header: 1 to 255 printable
// ASCII characters, or "" when not sent.
func idempotencyKey(r *http.Request) (string, error) {
	vals := r.Header.Values("Idempotency-Key")
	if len(vals) == 0 {
		return "", nil
	}
	k := vals[0]
	bad := len(vals) > 1 || k == "" || len(k) > maxIdempotencyKeyLen
	for i := 0; i < len(k) && !bad; i++ {
		bad = k[i] < 0x21 || k[i] > 0x7e
	}
	if bad {
		return "", &checkout.Error{
			Code:    checkout.EValidationFailed,
			Message: "Idempotency-Key must be sent once, as 1 to 255 printable ASCII characters without spaces (a UUID is a good choice).",
			Param:   "Idempotency-Key",
			Details: []checkout.Violation{{Code: "invalid_format", Param: "Idempotency-Key", Message: "Idempotency-Key must be 1 to 255 printable ASCII characters."}},
		}
	}
	return k, nil
}

// readBody reads a JSON body of at most MaxBodyBytes: 415 without a JSON
// content type, 413 when larger.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, checkout.Errorf(checkout.EUnsupportedMediaType,
			"Send the body as JSON with Content-Type: application/json.")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return nil, checkout.Errorf(checkout.EUnsupportedMediaType, "JSON bodies must be UTF-8.")
	}
	tooLarge := checkout.Errorf(checkout.EPayloadTooLarge,
		"The request body is larger than %s bytes.", strconv.Itoa(MaxBodyBytes))
	if r.ContentLength > MaxBodyBytes {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, checkout.Errorf(checkout.EInvalidJSON, "The request body could not be read.")
	}
	return body, nil
}
