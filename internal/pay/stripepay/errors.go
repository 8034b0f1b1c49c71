package stripepay

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/stripe/stripe-go/v85"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// keyShape matches anything shaped like a Stripe key or signing secret,
// masked or not, so that no error carries one (Stripe's own messages show
// a masked key; a masked key is still not checkoutd's to repeat).
var keyShape = regexp.MustCompile(`\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9*]*|\bwhsec_[A-Za-z0-9+/=*]*`)

// scrub removes keys from a message.
func scrub(s string) string { return keyShape.ReplaceAllString(s, "[key]") }

// callError maps an error of a call to Stripe. With no answer from Stripe
// (the network, a time-out, a body that is not Stripe's), a 5xx, a 429 (a
// rate limit or a lock time-out) or a 409 (the same idempotency key in
// flight), the outcome is unknown: it wraps pay.ErrAcquirerUnavailable.
// Any other answer is a definite refusal: a validation_failed
// *checkout.Error saying what Stripe said, with no key in it.
func callError(what string, err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("stripe: cannot %s: %w: %s", what, pay.ErrAcquirerUnavailable, scrub(err.Error()))
	}
	cause := fmt.Errorf("stripe: HTTP %d, type %s, code %s, request %s: %s", se.HTTPStatusCode, se.Type, se.Code, se.RequestID, scrub(se.Msg))
	switch s := se.HTTPStatusCode; {
	case s >= 500, s == http.StatusTooManyRequests, s == http.StatusConflict, s == 0:
		return fmt.Errorf("stripe: cannot %s: %w: %w", what, pay.ErrAcquirerUnavailable, cause)
	case s == http.StatusUnauthorized:
		return &checkout.Error{Code: checkout.EValidationFailed, Param: "secret_key",
			Message: "Stripe refused the secret key: it is wrong, or was rolled or deleted in Stripe's dashboard.", Err: cause}
	case s == http.StatusForbidden:
		return &checkout.Error{Code: checkout.EValidationFailed, Param: "secret_key",
			Message: "Stripe refused to " + what + " with this key: a restricted key needs write access to PaymentIntents and Refunds and read access to Disputes, the account and webhook endpoints.", Err: cause}
	}
	msg := scrub(se.Msg)
	if msg == "" {
		msg = "no reason given"
	}
	if se.Param != "" {
		msg += " (Stripe's parameter " + se.Param + ")"
	}
	return &checkout.Error{Code: checkout.EValidationFailed,
		Message: fmt.Sprintf("Stripe refused to %s: %s", what, msg), Err: cause}
}
