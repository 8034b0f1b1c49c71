package pay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Live card payments go through a card acquirer with the store's own
// account there: checkoutd is not an acquirer, and never sees a card
// number. The page mounts the acquirer's own element (its script, in its
// iframe), the acquirer runs 3-D Secure, and checkoutd learns the outcome
// by looking the payment up at the acquirer: on the buyer's return, on
// the acquirer's webhook (a hint, never a result) and from the payments
// job while the outcome is unknown. The first acquirer is Stripe (package
// stripepay); nothing outside an acquirer's package names it.

// AcquirerStatus is where an acquirer's payment or refund stands, mapped
// onto a closed set.
type AcquirerStatus string

const (
	// AcquirerPending: created or processing at the acquirer, the buyer
	// has not confirmed yet or the card network has not answered.
	AcquirerPending AcquirerStatus = "pending"
	// AcquirerRequiresAction: the buyer has a step to take (3-D Secure).
	AcquirerRequiresAction AcquirerStatus = "requires_action"
	// AcquirerSucceeded: the money is captured (a refund: it is given back).
	AcquirerSucceeded AcquirerStatus = "succeeded"
	// AcquirerFailed: the last attempt was declined (FailureCode says why);
	// a payment may still be confirmed again with another card, so the
	// service cancels it before it lets the session take another payment.
	AcquirerFailed AcquirerStatus = "failed"
	// AcquirerCanceled: canceled; nothing was or will be captured.
	AcquirerCanceled AcquirerStatus = "canceled"
	// AcquirerUnknown: the acquirer did not answer (a time-out, a 5xx, the
	// network). Never a failure: the payment is looked up until it is
	// known.
	AcquirerUnknown AcquirerStatus = "unknown"
)

// Final reports whether s can no longer change (a failed payment can: it
// may be confirmed again until it is canceled).
func (s AcquirerStatus) Final() bool { return s == AcquirerSucceeded || s == AcquirerCanceled }

// ErrAcquirerUnavailable wraps every error of an Acquirer after which the
// outcome of the call is unknown: the request may or may not have reached
// the acquirer. The caller asks again with the same idempotency key, or
// looks the object up. Any other error is a definite refusal (a
// *checkout.Error): nothing was made.
var ErrAcquirerUnavailable = errors.New("acquirer unavailable")

// Unavailable reports whether err leaves an acquirer call's outcome
// unknown.
func Unavailable(err error) bool { return errors.Is(err, ErrAcquirerUnavailable) }

// AcquirerCredentials are a store's credentials at an acquirer, as entered
// by an Administrator: sealed at rest, never shown again.
type AcquirerCredentials struct {
	SecretKey      string
	PublishableKey string
	WebhookSecret  string
	// AccountID is the account acted for when the secret key is a
	// platform's (Stripe Connect, later); "" for the key's own account.
	AccountID string
}

// String, GoString and LogValue show which credentials are set and never
// a secret, should credentials reach a log line or an error by mistake.
func (c AcquirerCredentials) String() string {
	return fmt.Sprintf("pay.AcquirerCredentials{SecretKey:%s PublishableKey:%q WebhookSecret:%s AccountID:%q}",
		redacted(c.SecretKey), c.PublishableKey, redacted(c.WebhookSecret), c.AccountID)
}

func (c AcquirerCredentials) GoString() string { return c.String() }

func (c AcquirerCredentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// redacted says whether a secret is set, and nothing of it.
func redacted(secret string) string {
	if secret == "" {
		return `""`
	}
	return "[redacted]"
}

// AcquirerAccount is what a check of credentials learned.
type AcquirerAccount struct {
	// ID is the acquirer's id of the account (acct_...).
	ID string
	// Live says the keys are live keys (not the acquirer's test mode).
	Live bool
	// Warnings are problems that do not stop the keys from working, in
	// words for the Administrator (a webhook endpoint of another API
	// version, and how to fix it).
	Warnings []string
}

// AcquirerPaymentRequest asks an acquirer to create a payment for a
// session. checkoutd's ids travel in the payment's metadata, which is how a
// webhook is told to be checkoutd's.
type AcquirerPaymentRequest struct {
	PaymentID string // checkoutd's payment (pay_...)
	SessionID string
	StoreID   string
	Amount    int64 // minor units of Currency
	Currency  string
	// StatementDescriptor is the store's, "" for the account's default.
	StatementDescriptor string
	// IdempotencyKey is derived from PaymentID: a create whose answer was
	// lost is asked again with it and returns the same payment.
	IdempotencyKey string
}

// AcquirerPayment is an acquirer's payment, as the acquirer says.
type AcquirerPayment struct {
	// ID is the acquirer's id (pi_...).
	ID     string
	Status AcquirerStatus
	// ClientSecret is what the page's element confirms the payment with.
	// It lets a browser confirm this one payment and read its status; it
	// is never logged or stored.
	ClientSecret string
	Amount       int64
	Currency     string
	// CheckoutPaymentID, CheckoutSessionID and CheckoutStoreID are
	// checkoutd's ids from the metadata; "" on a payment checkoutd did not
	// make.
	CheckoutPaymentID string
	CheckoutSessionID string
	CheckoutStoreID   string
	// FailureCode says why the last attempt was declined: one of the
	// checkout.Fail* card codes; "" unless Status is AcquirerFailed.
	FailureCode string
	// ChargeID is the acquirer's id of the capture (ch_...), once there is
	// one; Brand, Last4 and Country describe its card.
	ChargeID string
	Brand    string
	Last4    string
	Country  string
}

// AcquirerRefundRequest asks an acquirer to give back part or all of a
// payment.
type AcquirerRefundRequest struct {
	RefundID        string // checkoutd's refund (re_...), sent as metadata
	AcquirerPayment string // the acquirer's payment id
	Amount          int64
	IdempotencyKey  string // derived from RefundID
	CheckoutPayment string // checkoutd's payment id, sent as metadata
	CheckoutStoreID string
}

// AcquirerRefund is an acquirer's refund, as the acquirer says: pending,
// succeeded, failed (FailureCode one of checkout.RefundFail*), canceled
// or unknown.
type AcquirerRefund struct {
	ID               string
	Status           AcquirerStatus
	Amount           int64
	FailureCode      string
	CheckoutRefundID string
}

// AcquirerDispute is a dispute opened at the acquirer on a payment.
type AcquirerDispute struct {
	ID string
	// AcquirerPayment is the disputed payment's acquirer id;
	// CheckoutPaymentID checkoutd's, from that payment's metadata ("" when
	// it is not checkoutd's). A dispute event may not name checkoutd's
	// payment (Stripe's disputes carry no metadata): the dispute's lookup
	// does.
	AcquirerPayment   string
	CheckoutPaymentID string
	Amount            int64
	Currency          string
	// Reason is one of checkout's dispute reasons (mapped; general when
	// the acquirer's has no counterpart).
	Reason string
	// Status is one of checkout's dispute statuses: needs_response,
	// under_review, won or lost.
	Status        string
	EvidenceDueBy time.Time
	// Fee is what the acquirer charged for the dispute, in Currency; 0
	// when it does not say.
	Fee int64
}

// AcquirerEventKind is what an acquirer's webhook is about.
type AcquirerEventKind string

const (
	AcquirerEventPayment       AcquirerEventKind = "payment"        // succeeded, failed, canceled...
	AcquirerEventRefund        AcquirerEventKind = "refund"         // a refund changed
	AcquirerEventDisputeOpened AcquirerEventKind = "dispute_opened" // a dispute opened
	AcquirerEventDisputeClosed AcquirerEventKind = "dispute_closed" // a dispute closed, won or lost
	AcquirerEventOther         AcquirerEventKind = "other"          // nothing checkoutd acts on
)

// AcquirerEvent is an acquirer's webhook, parsed. It is only ever a hint:
// the service looks up what it names before it changes anything.
type AcquirerEvent struct {
	ID   string
	Kind AcquirerEventKind
	// Verified says the signature checked out with the store's webhook
	// secret (and the timestamp is within the tolerance). An event that
	// did not verify still names what to look up.
	Verified bool
	// AcquirerPayment is the acquirer's payment the event is about;
	// CheckoutPaymentID checkoutd's, from the metadata ("" when the event
	// is not checkoutd's: it is ignored). A dispute event may have only
	// AcquirerDispute: LookupDispute says whose payment it is.
	AcquirerPayment   string
	CheckoutPaymentID string
	// AcquirerRefunds are the refunds a refund event names; AcquirerDispute
	// the dispute a dispute event names.
	AcquirerRefunds []string
	AcquirerDispute string
}

// AcquirerCapabilities says what an acquirer's connector really does.
type AcquirerCapabilities struct {
	Refunds  bool // Refund and LookupRefund
	Disputes bool // LookupDispute and dispute events
	// DisputeEvidence says whether evidence can be submitted through
	// checkoutd; false: the merchant answers at the acquirer.
	DisputeEvidence bool
}

// Acquirer is one store's account at a card acquirer. Every call that
// creates or changes something carries an idempotency key derived from
// checkoutd's own ids.
type Acquirer interface {
	Capabilities() AcquirerCapabilities
	// CreatePayment creates a payment for the card only, confirmed on the
	// page by the acquirer's element.
	CreatePayment(ctx context.Context, r AcquirerPaymentRequest) (AcquirerPayment, error)
	// LookupPayment returns the payment with the acquirer's id: the source
	// of truth.
	LookupPayment(ctx context.Context, id string) (AcquirerPayment, error)
	// CancelPayment cancels a payment that has not succeeded; canceling a
	// canceled one returns it as it is. A payment that succeeded meanwhile
	// is returned succeeded, with no error.
	CancelPayment(ctx context.Context, id, idempotencyKey string) (AcquirerPayment, error)
	Refund(ctx context.Context, r AcquirerRefundRequest) (AcquirerRefund, error)
	LookupRefund(ctx context.Context, id string) (AcquirerRefund, error)
	LookupDispute(ctx context.Context, id string) (AcquirerDispute, error)
	// ParseWebhook parses a webhook's raw body and checks its signature
	// (header) with the store's webhook secret at now. A body that cannot
	// be parsed is an error; one whose signature fails is returned with
	// Verified false.
	ParseWebhook(body []byte, header http.Header, now time.Time) (AcquirerEvent, error)
}

// AcquirerConnector makes stores' Acquirers from their credentials.
type AcquirerConnector interface {
	// Name names the acquirer in the store's settings, the webhook's route
	// and the CLI ("stripe").
	Name() string
	// Check proves that credentials work with a call to the acquirer, and
	// says what it learned; an error says clearly what is wrong (a
	// validation_failed *checkout.Error naming the field), or that the
	// acquirer could not be reached (ErrAcquirerUnavailable).
	Check(ctx context.Context, c AcquirerCredentials) (AcquirerAccount, error)
	// Connect returns the Acquirer of a store with credentials c.
	Connect(c AcquirerCredentials) Acquirer
	// Page is how the payment page takes a card through this acquirer.
	Page() AcquirerPage
}

// AcquirerPage is how the payment page takes a card through an acquirer's
// element.
type AcquirerPage struct {
	// Script is the acquirer's own script (https), which the page loads
	// from the acquirer in every build: it is never bundled or served by
	// checkoutd, so that card numbers never touch checkoutd (PCI SAQ A).
	Script string
	// Adapter is checkoutd's script for this acquirer, which the page
	// serves (/assets/acquirer/{name}.js) after Script: it mounts the
	// element in the page's form marked data-acquirer-form, and on submit
	// posts the form to start the payment and confirms it with the client
	// secret the answer carries (docs/payments.md, The page).
	Adapter []byte
	// Origins are what the page's Content-Security-Policy admits on a
	// session paid through this acquirer, and nothing more.
	Origins AcquirerOrigins
}

// AcquirerOrigins are the origins an acquirer's element needs, by CSP
// directive.
type AcquirerOrigins struct {
	Script, Frame, Connect []string
}
