package stripepay

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stripe/stripe-go/v85"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/stripemock"
)

// The shapes level: every request the connector makes goes to stripe-mock,
// Stripe's own mock, which checks it against Stripe's OpenAPI document
// (parameters, types, paths, the expansions it allows) and answers a
// fixture. It keeps no state, so it proves the requests are well-formed
// and their answers parse, not the flows (the fake's tests do).

var (
	mockOnce sync.Once
	mockURL  string
	mockErr  error
)

// stripeMock returns the URL of a stripe-mock shared by the package's
// tests, started once on free ports and built once into the user's cache
// directory. It skips the test when stripe-mock cannot be built or
// started, unless CHECKOUTD_TEST_REQUIRE_STRIPE_MOCK=1 (the CI sets it).
func stripeMock(t *testing.T) string {
	t.Helper()
	mockOnce.Do(func() {
		ctx := context.Background()
		var bin string
		if bin, mockErr = stripemock.Build(ctx, testLog{t}); mockErr != nil {
			return
		}
		// It serves every test of the package; TestMain stops it.
		if stripeMockServer, mockErr = stripemock.Start(ctx, bin); mockErr == nil {
			mockURL = stripeMockServer.URL
		}
	})
	if mockErr != nil {
		msg := "stripe-mock " + stripemock.Version + " cannot be built or started (go install " + stripemock.Module + "@" + stripemock.Version +
			" needs the Go module proxy): " + mockErr.Error()
		if os.Getenv("CHECKOUTD_TEST_REQUIRE_STRIPE_MOCK") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set CHECKOUTD_TEST_REQUIRE_STRIPE_MOCK=1 to fail instead")
	}
	return mockURL
}

// stripeMockServer is stopped by TestMain once the package's tests ran.
var stripeMockServer *stripemock.Server

func TestMain(m *testing.M) {
	code := m.Run()
	if stripeMockServer != nil {
		stripeMockServer.Close()
	}
	os.Exit(code)
}

// testLog writes the build's one line to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// mockCreds are test-mode credentials: stripe-mock takes sk_test_ keys.
var mockCreds = pay.AcquirerCredentials{SecretKey: stripemock.Key, PublishableKey: "pk_test_123", WebhookSecret: testWebhookSecret}

func TestShapes(t *testing.T) {
	url := stripeMock(t)
	ctx := context.Background()
	conn := New(Config{URL: url, AllowTestKeys: true})
	for _, account := range []string{"", "acct_123"} {
		cr := mockCreds
		cr.AccountID = account
		acq := conn.Connect(cr)
		calls := map[string]func() error{
			"CreatePayment": func() error {
				_, err := acq.CreatePayment(ctx, pay.AcquirerPaymentRequest{PaymentID: "pay_1", SessionID: "cs_1", StoreID: "st_1",
					Amount: 1999, Currency: "EUR", StatementDescriptor: "SHOP 1042", IdempotencyKey: "checkoutd_pay_1_create"})
				return err
			},
			"LookupPayment": func() error { _, err := acq.LookupPayment(ctx, "pi_123"); return err },
			"CancelPayment": func() error { _, err := acq.CancelPayment(ctx, "pi_123", "checkoutd_pay_1_cancel"); return err },
			"Refund": func() error {
				_, err := acq.Refund(ctx, pay.AcquirerRefundRequest{RefundID: "re_1", AcquirerPayment: "pi_123", Amount: 500,
					IdempotencyKey: "checkoutd_re_1_refund", CheckoutPayment: "pay_1", CheckoutStoreID: "st_1"})
				return err
			},
			"LookupRefund":  func() error { _, err := acq.LookupRefund(ctx, "re_123"); return err },
			"LookupDispute": func() error { _, err := acq.LookupDispute(ctx, "dp_123"); return err },
			"Check":         func() error { _, err := conn.Check(ctx, cr); return err },
		}
		for name, call := range calls {
			if err := call(); err != nil {
				t.Errorf("%s (account %q): stripe-mock refused it: %v", name, account, err)
			}
		}
	}
}

// TestShapesRefused proves stripe-mock checks what it is sent: a request
// Stripe would refuse, it refuses, and the connector says so.
func TestShapesRefused(t *testing.T) {
	url := stripeMock(t)
	client := New(Config{URL: url}).client(stripemock.Key)
	p := &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(100), Currency: stripe.String("eur")}
	p.AddExtra("payment_method_typez[0]", "card")
	_, err := client.V1PaymentIntents.Create(context.Background(), p)
	if err = callError("create the payment", err); !checkout.IsCode(err, checkout.EValidationFailed) {
		t.Fatalf("an unknown parameter: %v", err)
	}
	t.Log(err)
}
