package client

// Status is a checkout session's status.
type Status string

// The statuses of a checkout session. StatusComplete and StatusExpired are
// final.
const (
	StatusOpen     Status = "open"
	StatusComplete Status = "complete"
	StatusExpired  Status = "expired"
)

// Session is a checkout session as the API returns it. Amounts are integers
// in minor units (cents); times are Unix seconds, as on the wire (time.Unix
// turns them into a time.Time). A pointer field is nil where the API says
// null.
type Session struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"` // "checkout_session"
	Livemode       bool              `json:"livemode"`
	Status         Status            `json:"status"`
	Title          string            `json:"title"`
	Description    *string           `json:"description"`
	CheckoutURL    string            `json:"checkout_url"`
	Merchant       Merchant          `json:"merchant"`
	Currency       string            `json:"currency"` // ISO 4217, upper case
	Amount         int64             `json:"amount"`   // the items total
	DiscountAmount int64             `json:"discount_amount"`
	TaxAmount      int64             `json:"tax_amount"`
	TotalAmount    int64             `json:"total_amount"`
	Items          []Item            `json:"items"`
	Customer       Customer          `json:"customer"`
	Metadata       map[string]string `json:"metadata"`
	ReturnURL      *string           `json:"return_url"`
	CancelURL      *string           `json:"cancel_url"`
	PaymentID      *string           `json:"payment_id"` // set once complete
	CreatedAt      int64             `json:"created_at"`
	ExpiresAt      int64             `json:"expires_at"`
	CompletedAt    *int64            `json:"completed_at"` // set once complete
}

// Merchant is the store a session belongs to.
type Merchant struct {
	ID                  string `json:"id"`
	Name                string `json:"name"`
	StatementDescriptor string `json:"statement_descriptor"`
	Website             string `json:"website"`
}

// Item is a line of a session: Amount is the unit amount.
type Item struct {
	Name     string  `json:"name"`
	Amount   int64   `json:"amount"`
	Quantity int64   `json:"quantity"`
	Image    *string `json:"image"`
}

// Customer is the buyer a session was created for; either field may be nil.
type Customer struct {
	Email *string `json:"email"`
	Name  *string `json:"name"`
}

// CreateParams is what Create sends. Only Items is required; an empty field
// is not sent, and checkoutd's default applies (docs/api.md).
type CreateParams struct {
	Items       []ItemParams `json:"items"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	Currency    string       `json:"currency,omitempty"`
	// Amount is the total the merchant expects; when set, checkoutd refuses
	// the request with amount_mismatch unless the items add up to it.
	Amount    int64             `json:"amount,omitempty"`
	Customer  *CustomerParams   `json:"customer,omitempty"`
	Metadata  map[string]string `json:"metadata,omitempty"`
	ReturnURL string            `json:"return_url,omitempty"`
	CancelURL string            `json:"cancel_url,omitempty"`

	// IdempotencyKey is sent as the Idempotency-Key header of every attempt;
	// when empty, Create generates one (128 random bits) per call. Set it to
	// something of the order (its id) to make a create safe to repeat across
	// calls and processes, not only across retries of one call.
	IdempotencyKey string `json:"-"`
}

// ItemParams is a line of CreateParams. Quantity 0 is sent as not set (1).
type ItemParams struct {
	Name     string `json:"name"`
	Amount   int64  `json:"amount"`
	Quantity int64  `json:"quantity,omitempty"`
	Image    string `json:"image,omitempty"`
}

// CustomerParams prefills the payment page; at least one field is needed.
type CustomerParams struct {
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
}
