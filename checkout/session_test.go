package checkout_test

import (
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// t0 is a fixed instant with a fraction of a second, which sessions drop.
var t0 = time.Date(2026, 11, 1, 12, 0, 0, 700_000_000, time.UTC)

func acme() *checkout.Merchant {
	return &checkout.Merchant{ID: "3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60", Name: "Acme Games", Currency: "USD",
		Website: "https://acme.example", StatementDescriptor: "ACME GAMES"}
}

func mustParse(t *testing.T, body string) *checkout.CreateParams {
	t.Helper()
	p, err := checkout.ParseCreateRequest([]byte(body))
	if err != nil {
		t.Fatalf("ParseCreateRequest(%s) = %v", body, err)
	}
	return p
}

func TestNewSessionDefaults(t *testing.T) {
	m := acme()
	p := mustParse(t, `{"items":[{"name":"Sword","amount":1500,"quantity":2},{"name":"Shield","amount":250}]}`)
	s := checkout.NewSession(p, m, checkout.ModeTest, t0)

	created := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	checks := []struct {
		name      string
		got, want any
	}{
		{"MerchantID", s.MerchantID, m.ID},
		{"Mode", s.Mode, checkout.ModeTest},
		{"Status", s.Status, checkout.StatusOpen},
		{"Title", s.Title, "Acme Games"},
		{"Description", s.Description, (*string)(nil)},
		{"Currency", s.Currency, "USD"},
		{"Amount", s.Amount, int64(3250)},
		{"DiscountAmount", s.DiscountAmount, int64(0)},
		{"TaxAmount", s.TaxAmount, int64(0)},
		{"TotalAmount", s.TotalAmount, int64(3250)},
		{"item 1 quantity", s.Items[1].Quantity, int64(1)},
		{"item 0 image", s.Items[0].Image, (*string)(nil)},
		{"Metadata is empty, not nil", s.Metadata != nil && len(s.Metadata) == 0, true},
		{"Customer", s.Customer, checkout.Customer{}},
		{"ReturnURL", s.ReturnURL, (*string)(nil)},
		{"CancelURL", s.CancelURL, (*string)(nil)},
		{"PaymentID", s.PaymentID, (*string)(nil)},
		{"CompletedAt", s.CompletedAt, (*time.Time)(nil)},
		{"PaymentInProgress", s.PaymentInProgress(), false},
		{"CreatedAt (whole seconds)", s.CreatedAt, created},
		{"ExpiresAt (one hour later)", s.ExpiresAt, created.Add(time.Hour)},
		{"valid id", checkout.ValidSessionID(s.ID) && len(s.ID) == 3+64, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("NewSession: %s = %v; want %v", c.name, c.got, c.want)
		}
	}
}

func TestNewSessionFromParams(t *testing.T) {
	p := mustParse(t, `{"items":[{"name":"Sword","amount":1500}],"title":"Order 42","description":"d","currency":"jpy","amount":1500,
		"customer":{"email":"a@b.co"},"metadata":{"k":"v"},"return_url":"https://r.example","cancel_url":"https://c.example"}`)
	s := checkout.NewSession(p, acme(), checkout.ModeLive, t0)
	if s.Title != "Order 42" || *s.Description != "d" || s.Currency != "JPY" || s.Mode != checkout.ModeLive ||
		*s.Customer.Email != "a@b.co" || s.Metadata["k"] != "v" || *s.ReturnURL != "https://r.example" || *s.CancelURL != "https://c.example" {
		t.Errorf("NewSession(%+v) = %+v; want the params' values", p, s)
	}
	if s.Amount != 1500 || s.TotalAmount != 1500 {
		t.Errorf("NewSession: amount %d, total %d; want 1500, 1500", s.Amount, s.TotalAmount)
	}
}

func TestNewSessionIDsDiffer(t *testing.T) {
	p := mustParse(t, body(""))
	seen := map[string]bool{}
	for range 100 {
		id := checkout.NewSession(p, acme(), checkout.ModeTest, t0).ID
		if seen[id] {
			t.Fatalf("NewSession gave id %s twice", id)
		}
		seen[id] = true
	}
}

// session returns an open session created at t0 (whole seconds).
func session(f func(s *checkout.Session)) *checkout.Session {
	created := t0.Truncate(time.Second)
	s := &checkout.Session{ID: checkout.NewSessionID(), Status: checkout.StatusOpen, CreatedAt: created, ExpiresAt: created.Add(time.Hour)}
	if f != nil {
		f(s)
	}
	return s
}

func TestExpiryDue(t *testing.T) {
	exp := t0.Truncate(time.Second).Add(time.Hour)
	tests := []struct {
		name string
		s    *checkout.Session
		now  time.Time
		want bool
	}{
		{"open, a second before its hour ends", session(nil), exp.Add(-time.Second), false},
		{"open, a nanosecond before", session(nil), exp.Add(-1), false},
		{"open, exactly at expires_at", session(nil), exp, true},
		{"open, long after", session(nil), exp.Add(7 * 24 * time.Hour), true},
		{"open past expires_at, payment in progress", session(func(s *checkout.Session) { p := "pay_1"; s.ActivePaymentID = &p }), exp.Add(time.Hour), false},
		{"complete past expires_at", session(func(s *checkout.Session) { s.Status = checkout.StatusComplete }), exp.Add(time.Hour), false},
		{"expired", session(func(s *checkout.Session) { s.Status = checkout.StatusExpired }), exp.Add(time.Hour), false},
	}
	for _, tt := range tests {
		if got := tt.s.ExpiryDue(tt.now); got != tt.want {
			t.Errorf("%s: ExpiryDue(%v) = %v; want %v", tt.name, tt.now, got, tt.want)
		}
	}
}

// TestTransitions walks every transition of SPEC.md's "States and
// transitions" that the domain has today, and the ones DESIGN.md 4.10
// forbids (complete and expired are final).
func TestTransitions(t *testing.T) {
	exp := t0.Truncate(time.Second).Add(time.Hour)
	paidAt := exp.Add(-10*time.Minute + 300*time.Millisecond)
	type op struct {
		expire    bool // Expire, else Complete
		paymentID string
		at        time.Time
	}
	tests := []struct {
		name   string
		s      *checkout.Session
		op     op
		status checkout.Status
		ok     bool
	}{
		{"open, paid within the hour → complete", session(nil), op{paymentID: "pay_1", at: paidAt}, checkout.StatusComplete, true},
		{"open, paid with crypto in progress past the hour → complete",
			session(func(s *checkout.Session) { p := "pay_1"; s.ActivePaymentID = &p }), op{paymentID: "pay_1", at: exp.Add(25 * time.Minute)}, checkout.StatusComplete, true},
		{"open, skins hold ends 7 days later → complete",
			session(func(s *checkout.Session) { p := "pay_1"; s.ActivePaymentID = &p }), op{paymentID: "pay_1", at: exp.Add(7 * 24 * time.Hour)}, checkout.StatusComplete, true},
		{"open, hour over → expired", session(nil), op{expire: true, at: exp}, checkout.StatusExpired, true},
		{"open, hour long over → expired", session(nil), op{expire: true, at: exp.Add(30 * 24 * time.Hour)}, checkout.StatusExpired, true},
		{"open, hour not over → stays open", session(nil), op{expire: true, at: exp.Add(-time.Second)}, checkout.StatusOpen, false},
		{"open past the hour, payment in progress → stays open",
			session(func(s *checkout.Session) { p := "pay_1"; s.ActivePaymentID = &p }), op{expire: true, at: exp.Add(time.Hour)}, checkout.StatusOpen, false},
		{"complete → no second payment",
			session(func(s *checkout.Session) { s.Status = checkout.StatusComplete; s.PaymentID = ptr("pay_first") }),
			op{paymentID: "pay_2", at: paidAt}, checkout.StatusComplete, false},
		{"complete → never expires",
			session(func(s *checkout.Session) { s.Status = checkout.StatusComplete; s.PaymentID = ptr("pay_first") }),
			op{expire: true, at: exp.Add(time.Hour)}, checkout.StatusComplete, false},
		{"expired → no payment", session(func(s *checkout.Session) { s.Status = checkout.StatusExpired }),
			op{paymentID: "pay_late", at: exp.Add(time.Hour)}, checkout.StatusExpired, false},
		{"expired → not again", session(func(s *checkout.Session) { s.Status = checkout.StatusExpired }),
			op{expire: true, at: exp.Add(time.Hour)}, checkout.StatusExpired, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := *tt.s
			var err error
			if tt.op.expire {
				err = tt.s.Expire(tt.op.at)
			} else {
				err = tt.s.Complete(tt.op.paymentID, tt.op.at)
			}
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v; want ok %v", err, tt.ok)
			}
			if err != nil && !checkout.IsCode(err, checkout.EConflict) {
				t.Errorf("err = %v; want code conflict", err)
			}
			if tt.s.Status != tt.status {
				t.Errorf("status = %s; want %s", tt.s.Status, tt.status)
			}
			switch {
			case !tt.ok:
				if !sameSession(tt.s, &before) {
					t.Errorf("a refused transition changed the session: %+v; was %+v", tt.s, before)
				}
			case tt.status == checkout.StatusComplete:
				if tt.s.PaymentID == nil || *tt.s.PaymentID != tt.op.paymentID {
					t.Errorf("PaymentID = %v; want %s", tt.s.PaymentID, tt.op.paymentID)
				}
				if tt.s.CompletedAt == nil || !tt.s.CompletedAt.Equal(tt.op.at.Truncate(time.Second)) {
					t.Errorf("CompletedAt = %v; want %v", tt.s.CompletedAt, tt.op.at.Truncate(time.Second))
				}
				if tt.s.PaymentInProgress() {
					t.Errorf("PaymentInProgress still set after completion")
				}
			case tt.status == checkout.StatusExpired:
				if tt.s.PaymentID != nil || tt.s.CompletedAt != nil {
					t.Errorf("expired session has payment %v, completed %v; want none", tt.s.PaymentID, tt.s.CompletedAt)
				}
			}
		})
	}
}

func sameSession(a, b *checkout.Session) bool {
	return a.Status == b.Status && a.PaymentID == b.PaymentID && a.CompletedAt == b.CompletedAt &&
		a.PaymentInProgress() == b.PaymentInProgress() && a.ExpiresAt.Equal(b.ExpiresAt)
}

func TestView(t *testing.T) {
	m := acme()
	p := mustParse(t, body(`"description":"d"`))
	s := checkout.NewSession(p, m, checkout.ModeLive, t0)
	v := s.View(m, "https://pay.example/")
	if v.Object != "checkout_session" || !v.Livemode || v.CheckoutURL != "https://pay.example/invoice/"+s.ID ||
		v.Merchant != (checkout.MerchantJSON{ID: m.ID, Name: m.Name, StatementDescriptor: m.StatementDescriptor, Website: m.Website}) ||
		v.CreatedAt != s.CreatedAt.Unix() || v.ExpiresAt != s.CreatedAt.Unix()+3600 || v.CompletedAt != nil || v.PaymentID != nil {
		t.Errorf("View = %+v", v)
	}
	if err := s.Complete("pay_1", t0); err != nil {
		t.Fatal(err)
	}
	v = s.View(m, "https://pay.example")
	if v.Status != checkout.StatusComplete || v.CompletedAt == nil || *v.CompletedAt != t0.Unix() || *v.PaymentID != "pay_1" {
		t.Errorf("View of a complete session = %+v", v)
	}
	empty := (&checkout.Session{}).View(m, "https://pay.example")
	if empty.Items == nil || empty.Metadata == nil {
		t.Errorf("View of a session without items or metadata = %+v; want [] and {}", empty)
	}
}
