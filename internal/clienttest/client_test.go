package clienttest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/client"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

func TestCreateAndGet(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		c := h.client()
		ctx := context.Background()
		p := client.CreateParams{
			Items:       []client.ItemParams{{Name: "Sword", Amount: 1500, Quantity: 2, Image: "https://cdn.example.com/sword.png"}, {Name: "Shield", Amount: 700}},
			Title:       "Order 42",
			Description: "Two swords and a shield",
			Currency:    "eur",
			Amount:      3700,
			Customer:    &client.CustomerParams{Email: "ann@example.com", Name: "Ann"},
			Metadata:    map[string]string{"order_id": "42"},
			ReturnURL:   "https://shop.example.com/thanks",
			CancelURL:   "https://shop.example.com/cart",
		}
		s, err := c.Create(ctx, p)
		if err != nil {
			t.Fatalf("Create = %v", err)
		}
		if s.Object != "checkout_session" || !strings.HasPrefix(s.ID, "cs_") || s.Livemode || s.Status != client.StatusOpen || s.Title != "Order 42" || deref(s.Description) != "Two swords and a shield" ||
			s.CheckoutURL != "https://pay.example.test/invoice/"+s.ID || s.Merchant.ID != h.merchant.ID || s.Merchant.Name != "Acme Games" ||
			s.Currency != "EUR" || s.Amount != 3700 || s.DiscountAmount != 0 || s.TaxAmount != 0 || s.TotalAmount != 3700 ||
			len(s.Items) != 2 || s.Items[0] != (client.Item{Name: "Sword", Amount: 1500, Quantity: 2, Image: s.Items[0].Image}) || deref(s.Items[0].Image) != "https://cdn.example.com/sword.png" ||
			s.Items[1].Quantity != 1 || s.Items[1].Image != nil ||
			deref(s.Customer.Email) != "ann@example.com" || deref(s.Customer.Name) != "Ann" || s.Metadata["order_id"] != "42" ||
			deref(s.ReturnURL) != "https://shop.example.com/thanks" || deref(s.CancelURL) != "https://shop.example.com/cart" ||
			s.PaymentID != nil || s.CompletedAt != nil || s.CreatedAt == 0 || s.ExpiresAt != s.CreatedAt+3600 {
			t.Errorf("Create = %+v", s)
		}
		g, err := client.New(h.url+"/v1/", h.merchant.ID, client.WithBearer(h.read)).Get(ctx, s.ID)
		if err != nil || g.ID != s.ID || g.TotalAmount != 3700 || g.Status != client.StatusOpen || g.Metadata["order_id"] != "42" {
			t.Errorf("Get(%s) = %+v, %v", s.ID, g, err)
		}
		if n := h.created(); n != 1 {
			t.Errorf("%d sessions created; want 1", n)
		}
	})
}

func TestErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		ctx := context.Background()
		c := h.client()
		unknown := "cs_" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		for _, tt := range []struct {
			name    string
			call    func() error
			status  int
			code    string
			param   string
			details []client.ErrorDetail // codes and params; nil: not checked
		}{
			{"validation", func() error {
				_, err := c.Create(ctx, client.CreateParams{Items: []client.ItemParams{{Name: "Sword", Amount: 1500, Quantity: 101}, {Name: "", Amount: 10}}})
				return err
			}, 400, "validation_failed", "items[0].quantity", []client.ErrorDetail{{Code: "out_of_range", Param: "items[0].quantity"}, {Code: "too_short", Param: "items[1].name"}}},
			{"amount_mismatch", func() error {
				p := sword()
				p.Amount = 1499
				_, err := c.Create(ctx, p)
				return err
			}, 400, "amount_mismatch", "amount", nil},
			{"unknown session", func() error { _, err := c.Get(ctx, unknown); return err }, 404, "checkout_not_found", "", nil},
			{"unknown store", func() error {
				_, err := client.New(h.url, "7d1f6c8e-1c9a-4c55-9f9e-2b7a1c3d4e5f", client.WithBearer(h.write)).Get(ctx, unknown)
				return err
			}, 404, "store_not_found", "", nil},
			{"bad key", func() error {
				_, err := client.New(h.url, h.merchant.ID, client.WithBearer("ck_test_sk_nope")).Get(ctx, unknown)
				return err
			}, 401, "invalid_api_key", "", nil},
			{"no key", func() error { _, err := client.New(h.url, h.merchant.ID).Get(ctx, unknown); return err }, 401, "authentication_required", "", nil},
			{"read key creates", func() error {
				_, err := client.New(h.url, h.merchant.ID, client.WithBearer(h.read)).Create(ctx, sword())
				return err
			}, 403, "permission_denied", "", nil},
		} {
			err := tt.call()
			var e *client.Error
			if !errors.As(err, &e) {
				t.Errorf("%s: err = %v (%T); want *client.Error", tt.name, err, err)
				continue
			}
			if e.StatusCode != tt.status || e.Code != tt.code || e.Param != tt.param || e.Message == "" ||
				!strings.HasPrefix(e.RequestID, "req_") || len(e.RequestID) != len("req_")+32 {
				t.Errorf("%s: err = %+v; want %d %s %q", tt.name, e, tt.status, tt.code, tt.param)
			}
			if tt.details == nil {
				continue
			}
			if len(e.Details) != len(tt.details) {
				t.Errorf("%s: details = %+v; want %+v", tt.name, e.Details, tt.details)
				continue
			}
			for i, d := range e.Details {
				if d.Code != tt.details[i].Code || d.Param != tt.details[i].Param || d.Message == "" {
					t.Errorf("%s: details[%d] = %+v; want %+v", tt.name, i, d, tt.details[i])
				}
			}
		}
		if n := h.created(); n != 0 {
			t.Errorf("%d sessions created by refused requests", n)
		}
	})
}
