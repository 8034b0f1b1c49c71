// Package stripepay is checkoutd's connector to Stripe, the first card
// acquirer (pay.AcquirerConnector "stripe"): a store's live card payments
// are PaymentIntents, card only, in the store's own Stripe account, made
// and looked up with stripe-go and never with hand-written HTTP.
//
// Nothing outside this package names Stripe. Its answers are mapped here
// onto pay's closed set of statuses and checkout's failure codes, dispute
// reasons and dispute statuses (docs/payments.md, Card acquirers: Stripe).
package stripepay

import (
	_ "embed"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v85"

	"github.com/checkoutd/checkoutd/internal/pay"
)

// Name is the connector's name in stores' settings, the webhook's route
// (/webhooks/stripe/{storeId}) and the CLI.
const Name = "stripe"

// DefaultTimeout bounds each call to Stripe when Config.HTTPClient is nil.
// A call that takes longer has an unknown outcome and is asked again.
const DefaultTimeout = 30 * time.Second

// DefaultWebhookTolerance is how old a webhook's signature may be: Stripe's
// own default, which stripe-go's webhook package uses.
const DefaultWebhookTolerance = 300 * time.Second

// Config configures the connector.
type Config struct {
	// URL is Stripe's API's base URL; Stripe's own when "". Tests point
	// it at stripe-mock or at the fake (package stripefake).
	URL string
	// HTTPClient makes the calls; one with DefaultTimeout when nil.
	HTTPClient *http.Client
	// WebhookTolerance is how old a webhook's signature may be;
	// DefaultWebhookTolerance when zero.
	WebhookTolerance time.Duration
	// AllowTestKeys accepts Stripe test-mode keys (sk_test_, pk_test_) in
	// Check, for a merchant's own run of the manual checklist against
	// Stripe's test mode; live mode takes only live keys otherwise.
	AllowTestKeys bool
}

// Connector is the Stripe pay.AcquirerConnector.
type Connector struct {
	backend   stripe.Backend
	tolerance time.Duration
	testKeys  bool
}

var _ pay.AcquirerConnector = (*Connector)(nil)

// New returns the connector. Its calls are not retried by stripe-go: an
// unanswered call is an unknown outcome, which checkoutd asks again with
// the same idempotency key (the payments job), and a retry inside a
// request would only hold the buyer's page longer.
func New(c Config) *Connector {
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: DefaultTimeout}
	}
	if c.WebhookTolerance == 0 {
		c.WebhookTolerance = DefaultWebhookTolerance
	}
	cfg := &stripe.BackendConfig{
		HTTPClient:        c.HTTPClient,
		MaxNetworkRetries: stripe.Int64(0),
		// stripe-go logs failed requests by default; checkoutd logs its
		// own errors, which never carry a key.
		LeveledLogger:   &stripe.LeveledLogger{Level: stripe.LevelNull},
		EnableTelemetry: stripe.Bool(false),
	}
	if c.URL != "" {
		cfg.URL = stripe.String(c.URL)
	}
	return &Connector{
		backend:   stripe.GetBackendWithConfig(stripe.APIBackend, cfg),
		tolerance: c.WebhookTolerance,
		testKeys:  c.AllowTestKeys,
	}
}

// Name implements pay.AcquirerConnector.
func (*Connector) Name() string { return Name }

// Connect implements pay.AcquirerConnector.
func (c *Connector) Connect(cr pay.AcquirerCredentials) pay.Acquirer {
	return &Acquirer{
		client:        c.client(cr.SecretKey),
		webhookSecret: cr.WebhookSecret,
		account:       cr.AccountID,
		tolerance:     c.tolerance,
	}
}

// client returns a stripe-go client making calls with key.
func (c *Connector) client(key string) *stripe.Client {
	return stripe.NewClient(key, stripe.WithBackends(&stripe.Backends{
		API: c.backend, Connect: c.backend, Uploads: c.backend, MeterEvents: c.backend,
	}))
}

// String and GoString keep the connector's state out of logs.
func (*Connector) String() string   { return "stripepay.Connector" }
func (*Connector) GoString() string { return "stripepay.Connector{}" }

// Origins are what Stripe.js needs in the page's Content-Security-Policy,
// as Stripe documents them (docs.stripe.com/security/guide, Content
// Security Policy): its script, its frames (the Payment Element and the
// 3-D Secure challenge, which comes through hooks.stripe.com), and the API
// it calls.
var Origins = pay.AcquirerOrigins{
	Script:  []string{"https://js.stripe.com"},
	Frame:   []string{"https://js.stripe.com", "https://hooks.stripe.com"},
	Connect: []string{"https://api.stripe.com"},
}

// Script is Stripe.js, which the page always loads from Stripe: it must
// never be bundled or served by checkoutd.
const Script = "https://js.stripe.com/v3"

//go:embed adapter.js
var adapter []byte

// Page implements pay.AcquirerConnector.
func (*Connector) Page() pay.AcquirerPage {
	return pay.AcquirerPage{Script: Script, Adapter: adapter, Origins: Origins}
}
