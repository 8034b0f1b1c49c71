package client

import (
	"fmt"
	"strings"
)

// Error is checkoutd's answer to a request it refused or failed: the error
// object of the envelope (docs/api.md, Errors) and the HTTP status. Read it
// with errors.As.
type Error struct {
	StatusCode int
	// Code is the machine-readable reason (validation_failed,
	// checkout_not_found, rate_limited...); empty when the answer was not
	// checkoutd's envelope (a proxy's page, or one of the few answers Go's
	// HTTP server gives itself).
	Code    string
	Message string
	// Param is the first offending field as a path (items[2].quantity),
	// Details every violation found; both empty when no field is at fault.
	Param     string
	Details   []ErrorDetail
	RequestID string
	// RetryAfter is the Retry-After header in seconds, 0 when absent.
	RetryAfter int
}

// ErrorDetail is one violation of a request's field rules.
type ErrorDetail struct {
	Code    string `json:"code"`
	Param   string `json:"param"`
	Message string `json:"message"`
}

// Error reads "checkoutd: <status> <code>: <message> (<param>) [<request id>]".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkoutd: %d", e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Param != "" {
		b.WriteString(" (" + e.Param + ")")
	}
	if e.RequestID != "" {
		b.WriteString(" [" + e.RequestID + "]")
	}
	return b.String()
}

// Temporary reports whether the same request may succeed later: a 429 or
// a 503, which the client retries.
func (e *Error) Temporary() bool { return retryableStatus(e.StatusCode) }
