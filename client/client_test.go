package client

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

func sword() CreateParams {
	return CreateParams{Items: []ItemParams{{Name: "Sword", Amount: 1500}}}
}

func TestCreateAndGet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		c := h.client(nil)
		ctx := context.Background()
		p := CreateParams{
			Items:       []ItemParams{{Name: "Sword", Amount: 1500, Quantity: 2, Image: "https://cdn.example.com/sword.png"}, {Name: "Shield", Amount: 700}},
			Title:       "Order 42",
			Description: "Two swords and a shield",
			Currency:    "eur",
			Amount:      3700,
			Customer:    &CustomerParams{Email: "ann@example.com", Name: "Ann"},
			Metadata:    map[string]string{"order_id": "42"},
			ReturnURL:   "https://shop.example.com/thanks",
			CancelURL:   "https://shop.example.com/cart",
		}
		s, err := c.Create(ctx, p)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		if s.Object != "checkout_session" || s.Livemode || s.Status != StatusOpen || s.Title != "Order 42" || deref(s.Description) != "Two swords and a shield" ||
			s.CheckoutURL != "https://pay.example.test/invoice/"+s.ID || s.Merchant.ID != h.merchant.ID || s.Merchant.Name != "Acme Games" ||
			s.Currency != "EUR" || s.Amount != 3700 || s.DiscountAmount != 0 || s.TaxAmount != 0 || s.TotalAmount != 3700 ||
			len(s.Items) != 2 || s.Items[0] != (Item{Name: "Sword", Amount: 1500, Quantity: 2, Image: s.Items[0].Image}) || deref(s.Items[0].Image) != "https://cdn.example.com/sword.png" ||
			s.Items[1].Quantity != 1 || s.Items[1].Image != nil ||
			deref(s.Customer.Email) != "ann@example.com" || deref(s.Customer.Name) != "Ann" || s.Metadata["order_id"] != "42" ||
			deref(s.ReturnURL) != "https://shop.example.com/thanks" || deref(s.CancelURL) != "https://shop.example.com/cart" ||
			s.PaymentID != nil || s.CompletedAt != nil || s.CreatedAt == 0 || s.ExpiresAt != s.CreatedAt+3600 {
			t.Errorf("Create = %+v", s)
		}
		g, err := New(h.url+"/v1/", h.merchant.ID, WithBearer(h.read)).Get(ctx, s.ID)
		if err != nil || g.ID != s.ID || g.TotalAmount != 3700 || g.Status != StatusOpen {
			t.Errorf("Get(%s) = %+v, %v", s.ID, g, err)
		}
		if n := h.created(); n != 1 {
			t.Errorf("%d sessions created; want 1", n)
		}
	})
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func TestErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		ctx := context.Background()
		c := h.client(nil)
		unknown := "cs_" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		for _, tt := range []struct {
			name   string
			call   func() error
			status int
			code   string
			param  string
		}{
			{"validation", func() error {
				_, err := c.Create(ctx, CreateParams{Items: []ItemParams{{Name: "Sword", Amount: 1500, Quantity: 101}, {Name: "", Amount: 10}}})
				return err
			}, 400, "validation_failed", "items[0].quantity"},
			{"amount_mismatch", func() error {
				p := sword()
				p.Amount = 1499
				_, err := c.Create(ctx, p)
				return err
			}, 400, "amount_mismatch", "amount"},
			{"unknown session", func() error { _, err := c.Get(ctx, unknown); return err }, 404, "checkout_not_found", ""},
			{"unknown store", func() error {
				_, err := New(h.url, "7d1f6c8e-1c9a-4c55-9f9e-2b7a1c3d4e5f", WithBearer(h.write)).Get(ctx, unknown)
				return err
			}, 404, "store_not_found", ""},
			{"bad key", func() error {
				_, err := New(h.url, h.merchant.ID, WithBearer("ck_test_sk_nope")).Get(ctx, unknown)
				return err
			}, 401, "invalid_api_key", ""},
			{"no key", func() error { _, err := New(h.url, h.merchant.ID).Get(ctx, unknown); return err }, 401, "authentication_required", ""},
			{"read key creates", func() error {
				_, err := New(h.url, h.merchant.ID, WithBearer(h.read)).Create(ctx, sword())
				return err
			}, 403, "permission_denied", ""},
		} {
			err := tt.call()
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%s: err = %v (%T); want *Error", tt.name, err, err)
				continue
			}
			if e.StatusCode != tt.status || e.Code != tt.code || e.Param != tt.param || e.Message == "" || len(e.RequestID) != len("req_")+32 {
				t.Errorf("%s: err = %+v; want %d %s %q", tt.name, e, tt.status, tt.code, tt.param)
			}
			if tt.code == "validation_failed" && len(e.Details) != 2 {
				t.Errorf("%s: details = %+v; want both violations", tt.name, e.Details)
			}
		}
		if n := h.created(); n != 0 {
			t.Errorf("%d sessions created by refused requests", n)
		}
	})
}

// A network error is wrapped: errors.Is finds the transport's error.
func TestNetworkErrorWrapped(t *testing.T) {
	refused := errors.New("connection refused (injected)")
	c := New("http://api.example.test", "s", WithMaxAttempts(1), WithHTTPClient(&http.Client{Transport: transport(func(*http.Request) (*http.Response, error) { return nil, refused })}))
	_, err := c.Get(context.Background(), "cs_x")
	var e *Error
	if !errors.Is(err, refused) || errors.As(err, &e) {
		t.Errorf("Get = %v; want the transport's error wrapped", err)
	}
}
