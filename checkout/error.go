package checkout

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. Each one maps to exactly one HTTP status in internal/api; see
// docs/api.md and DESIGN.md section 5.
const (
	EInvalidJSON            = "invalid_json"
	EValidationFailed       = "validation_failed"
	EAmountMismatch         = "amount_mismatch"
	EAuthenticationRequired = "authentication_required"
	EInvalidAPIKey          = "invalid_api_key"
	EInvalidSignature       = "invalid_signature"
	EPermissionDenied       = "permission_denied"
	EStoreNotFound          = "store_not_found"
	ECheckoutNotFound       = "checkout_not_found"
	ENotFound               = "not_found"
	EMethodNotAllowed       = "method_not_allowed"
	EIdempotencyConflict    = "idempotency_conflict"
	EPayloadTooLarge        = "payload_too_large"
	EUnsupportedMediaType   = "unsupported_media_type"
	ERateLimited            = "rate_limited"
	EInternal               = "internal_error"
	EUnavailable            = "service_unavailable"
	// EConflict is a storage-level conflict (a unique key taken). It never
	// reaches a client as such: callers translate it into what it means for
	// them.
	EConflict = "conflict"

	// Codes of the refunds API (docs/api.md, Refunds).
	//
	// EPaymentNotFound: no payment of the store and mode has this id.
	EPaymentNotFound = "payment_not_found"
	// ERefundNotFound: no refund of the store and mode has this id.
	ERefundNotFound = "refund_not_found"
	// EPaymentNotRefundable: the payment cannot be refunded in its state
	// (disputed, not collected, refunded in full); the message says which.
	EPaymentNotRefundable = "payment_not_refundable"
	// ERefundTooLarge: the amount is more than is left to refund of the
	// payment (param amount).
	ERefundTooLarge = "refund_amount_too_large"

	// ERefundNotCancelable: only a crypto refund whose payout has not
	// been seen is canceled; the message says where the refund stands.
	ERefundNotCancelable = "refund_not_cancelable"

	// ERefundLinkClosed: a crypto refund's link takes no address now
	// (used, expired, canceled); the message says which. The refund page
	// shows it.
	ERefundLinkClosed = "refund_link_closed"

	// Codes of disputes, which the dashboard and the CLI show.
	//
	// EDisputeNotFound: no dispute of the store and mode has this id.
	EDisputeNotFound = "dispute_not_found"
	// EDisputeClosed: the dispute takes no evidence now (closed, under
	// review already, or past its deadline); the message says which.
	EDisputeClosed = "dispute_not_open"

	// Codes of the dashboard's operations (accounts and members), which the
	// CLI and the dashboard's pages show; none is an answer of the /v1 API.
	//
	// EAccountExists: an account has this email already (param email).
	EAccountExists = "account_exists"
	// EAccountNotFound: no account has this email (param email).
	EAccountNotFound = "account_not_found"
	// EInvalidCredentials: the email is unknown or the password wrong; the
	// same answer for both, so that it tells nobody which accounts exist.
	EInvalidCredentials = "invalid_credentials"
	// ESetupTokenInvalid: a setup link that is unknown, used or expired, or
	// there is an account already.
	ESetupTokenInvalid = "setup_token_invalid"
	// EMemberNotFound: the account named is not a member of the store
	// (param member).
	EMemberNotFound = "member_not_found"
	// ELastAdministrator: the change would leave the store without an
	// administrator.
	ELastAdministrator = "last_administrator"
	// EMemberExists: the email invited is a member of the store already
	// (param email).
	EMemberExists = "member_exists"
	// EInvitationInvalid: an invitation link that is unknown, used,
	// revoked or expired, or for another email than the account's.
	EInvitationInvalid = "invitation_invalid"
)

// Error is the one error type of checkoutd. Code is one of the E* constants;
// Message is safe to show to the caller; Param and Details locate the
// offending input; Err, when set, is the internal cause, logged and never
// shown. RetryAfter, when set on a rate_limited or service_unavailable
// error, is how long the caller should wait before trying again (the
// Retry-After header).
type Error struct {
	Code       string
	Message    string
	Param      string
	Details    []Violation
	Err        error
	RetryAfter time.Duration
}

// Violation is one broken rule of a request: a machine-readable code, the
// path of the offending field (items[2].quantity) and a readable message.
type Violation struct {
	Code    string `json:"code"`
	Param   string `json:"param,omitempty"`
	Message string `json:"message"`
}

// Error implements error. It includes the internal cause for logs.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected cause as an internal_error whose message
// reveals nothing of it.
func Internal(err error) *Error {
	return &Error{Code: EInternal, Message: "An internal error occurred.", Err: err}
}

// ErrorCode returns the code of err: the code of the first *Error in its
// chain, or internal_error for any other non-nil error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the message of err that is safe to show a client.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EInternal {
		return e.Message
	}
	return "An internal error occurred."
}

// IsCode reports whether err carries the code.
func IsCode(err error, code string) bool { return ErrorCode(err) == code }
