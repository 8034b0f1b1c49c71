package checkout

import "strings"

// SessionJSON is a checkout session as the API returns it and as events
// carry it: the field table of SPEC.md, in its order.
type SessionJSON struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Livemode       bool              `json:"livemode"`
	Status         Status            `json:"status"`
	Title          string            `json:"title"`
	Description    *string           `json:"description"`
	CheckoutURL    string            `json:"checkout_url"`
	Merchant       MerchantJSON      `json:"merchant"`
	Currency       string            `json:"currency"`
	Amount         int64             `json:"amount"`
	DiscountAmount int64             `json:"discount_amount"`
	TaxAmount      int64             `json:"tax_amount"`
	TotalAmount    int64             `json:"total_amount"`
	Items          []Item            `json:"items"`
	Customer       Customer          `json:"customer"`
	Metadata       map[string]string `json:"metadata"`
	ReturnURL      *string           `json:"return_url"`
	CancelURL      *string           `json:"cancel_url"`
	PaymentID      *string           `json:"payment_id"`
	CreatedAt      int64             `json:"created_at"`
	ExpiresAt      int64             `json:"expires_at"`
	CompletedAt    *int64            `json:"completed_at"`
}

// MerchantJSON is the merchant object inside a session.
type MerchantJSON struct {
	ID                  string `json:"id"`
	Name                string `json:"name"`
	StatementDescriptor string `json:"statement_descriptor"`
	Website             string `json:"website"`
}

// CheckoutURL is the address of a session's hosted payment page.
func CheckoutURL(checkoutBaseURL, sessionID string) string {
	return strings.TrimRight(checkoutBaseURL, "/") + "/invoice/" + sessionID
}

// View returns s as the API shows it, with the merchant m it belongs to and
// its payment page under checkoutBaseURL.
func (s *Session) View(m *Merchant, checkoutBaseURL string) *SessionJSON {
	v := &SessionJSON{
		ID:          s.ID,
		Object:      "checkout_session",
		Livemode:    s.Mode.Live(),
		Status:      s.Status,
		Title:       s.Title,
		Description: s.Description,
		CheckoutURL: CheckoutURL(checkoutBaseURL, s.ID),
		Merchant: MerchantJSON{
			ID:                  m.ID,
			Name:                m.Name,
			StatementDescriptor: m.StatementDescriptor,
			Website:             m.Website,
		},
		Currency:       s.Currency,
		Amount:         s.Amount,
		DiscountAmount: s.DiscountAmount,
		TaxAmount:      s.TaxAmount,
		TotalAmount:    s.TotalAmount,
		Items:          s.Items,
		Customer:       s.Customer,
		Metadata:       s.Metadata,
		ReturnURL:      s.ReturnURL,
		CancelURL:      s.CancelURL,
		PaymentID:      s.PaymentID,
		CreatedAt:      s.CreatedAt.Unix(),
		ExpiresAt:      s.ExpiresAt.Unix(),
	}
	if v.Items == nil {
		v.Items = []Item{}
	}
	if v.Metadata == nil {
		v.Metadata = map[string]string{}
	}
	if s.CompletedAt != nil {
		t := s.CompletedAt.Unix()
		v.CompletedAt = &t
	}
	return v
}
