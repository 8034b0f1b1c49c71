package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// statusOf maps every error code to its HTTP status (DESIGN.md section 5).
// It is the one place where codes meet statuses.
var statusOf = map[string]int{
	checkout.EInvalidJSON:            http.StatusBadRequest,
	checkout.EValidationFailed:       http.StatusBadRequest,
	checkout.EAmountMismatch:         http.StatusBadRequest,
	checkout.EAuthenticationRequired: http.StatusUnauthorized,
	checkout.EInvalidAPIKey:          http.StatusUnauthorized,
	checkout.EInvalidSignature:       http.StatusUnauthorized,
	checkout.EPermissionDenied:       http.StatusForbidden,
	checkout.EStoreNotFound:          http.StatusNotFound,
	checkout.ECheckoutNotFound:       http.StatusNotFound,
	checkout.ENotFound:               http.StatusNotFound,
	checkout.EMethodNotAllowed:       http.StatusMethodNotAllowed,
	checkout.EIdempotencyConflict:    http.StatusConflict,
	checkout.EPaymentNotFound:        http.StatusNotFound,
	checkout.ERefundNotFound:         http.StatusNotFound,
	checkout.EPaymentNotRefundable:   http.StatusConflict,
	checkout.ERefundTooLarge:         http.StatusConflict,
	checkout.ERefundNotCancelable:    http.StatusConflict,
	checkout.EDisputeNotFound:        http.StatusNotFound,
	checkout.EDisputeClosed:          http.StatusConflict,
	checkout.EPayloadTooLarge:        http.StatusRequestEntityTooLarge,
	checkout.EUnsupportedMediaType:   http.StatusUnsupportedMediaType,
	checkout.ERateLimited:            http.StatusTooManyRequests,
	checkout.EInternal:               http.StatusInternalServerError,
	checkout.EUnavailable:            http.StatusServiceUnavailable,
}

// ErrorCodes lists every code the API can answer with, for the OpenAPI
// document's test.
func ErrorCodes() []string {
	codes := make([]string, 0, len(statusOf))
	for c := range statusOf {
		codes = append(codes, c)
	}
	return codes
}

// StatusOf returns the HTTP status of an error code.
func StatusOf(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Code      string               `json:"code"`
	Message   string               `json:"message"`
	Param     string               `json:"param,omitempty"`
	RequestID string               `json:"request_id"`
	Details   []checkout.Violation `json:"details,omitempty"`
}

// WriteError writes err in the error envelope. An internal error, or any
// error that is not a *checkout.Error, reaches the client as a generic
// message; its detail goes to the log under the request id.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var ce *checkout.Error
	if !errors.As(err, &ce) || ce.Code == checkout.EConflict {
		ce = checkout.Internal(err)
	}
	if _, known := statusOf[ce.Code]; !known {
		ce = checkout.Internal(err)
	}
	status := StatusOf(ce.Code)
	if status >= 500 {
		Logger(r.Context()).ErrorContext(r.Context(), "request failed", "code", ce.Code, "err", err)
	}
	if ce.Code == checkout.EUnavailable || ce.Code == checkout.ERateLimited {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(ce)))
	}
	body := errorBody{
		Code:      ce.Code,
		Message:   ce.Message,
		Param:     ce.Param,
		RequestID: RequestID(r.Context()),
		Details:   ce.Details,
	}
	if ce.Code == checkout.EInternal {
		body.Message = checkout.ErrorMessage(ce)
	}
	writeJSON(w, status, struct {
		OK    bool      `json:"ok"`
		Error errorBody `json:"error"`
	}{false, body})
}

// DefaultRetryAfter is what Retry-After says on a service_unavailable
// answer whose error does not say better: the database unreachable.
const DefaultRetryAfter = 5 * time.Second

// retryAfterSeconds is ce.RetryAfter in whole seconds, rounded up, at least
// 1 (Retry-After has no fractions, and 0 invites a client to hammer).
func retryAfterSeconds(ce *checkout.Error) int {
	d := ce.RetryAfter
	if d <= 0 {
		d = DefaultRetryAfter
	}
	return max(1, int((d+time.Second-1)/time.Second))
}

// WriteRawData writes {"ok": true, "data": data} with status, data being
// JSON already encoded (a stored session, replayed as it was first sent).
func WriteRawData(w http.ResponseWriter, status int, data json.RawMessage) {
	var b bytes.Buffer
	b.Grow(len(data) + 24)
	b.WriteString(`{"ok":true,"data":`)
	b.Write(data)
	b.WriteString("}\n")
	writeBytes(w, status, b.Bytes())
}

// WriteData encodes v as the data of a success envelope.
func WriteData(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // a value of ours that cannot be encoded is a bug
	}
	WriteRawData(w, status, data)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	writeBytes(w, status, append(b, '\n'))
}

func writeBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b)
}
