package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/client"
)

// Create a session for an order, send the buyer to its payment page, and
// when the buyer comes back, retrieve it to see whether it was paid.
func Example_create() {
	ctx := context.Background()
	c := client.New(baseURL, storeID, client.WithBearer(secretKey))

	s, err := c.Create(ctx, client.CreateParams{
		Items: []client.ItemParams{
			{Name: "Sword", Amount: 1500, Quantity: 2},
			{Name: "Shield", Amount: 700},
		},
		Customer:  &client.CustomerParams{Email: "ann@example.com"},
		Metadata:  map[string]string{"order_id": "42"},
		ReturnURL: "https://shop.example.com/thanks",
		// The order's id as the key: creating again for the same order,
		// even from another process, returns the same session.
		IdempotencyKey: "order-42",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Status, s.Currency, s.TotalAmount)
	fmt.Println(strings.HasPrefix(s.CheckoutURL, "https://pay.example.com/invoice/cs_"))

	// Later, on the return URL (?checkout_id=...): fulfil only a complete
	// session, retrieved with the secret key.
	s, err = c.Get(ctx, s.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Status == client.StatusComplete, s.Metadata["order_id"])
	// Output:
	// open USD 3700
	// true
	// false 42
}

// A refusal is an *client.Error: its Code says what, Param and Details
// where.
func ExampleError() {
	c := client.New(baseURL, storeID, client.WithBearer(secretKey))
	_, err := c.Create(context.Background(), client.CreateParams{
		Items: []client.ItemParams{{Name: "Sword", Amount: 1500, Quantity: 101}},
	})
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.StatusCode, e.Code, e.Param)
		for _, d := range e.Details {
			fmt.Println(d.Code, d.Param)
		}
		fmt.Println(strings.HasPrefix(e.RequestID, "req_"))
	}
	// Output:
	// 400 validation_failed items[0].quantity
	// out_of_range items[0].quantity
	// true
}

// Verify a delivery from the raw body and its Service-Webhook-Signature
// header. Here the delivery is made up with WebhookSignature, as a test of a
// receiver would.
func ExampleVerifyWebhook() {
	secret := "whsec_0123456789abcdefghijklmnopqrstuv" // the endpoint's signing secret
	body := []byte(`{"id":"evt_1","object":"event","type":"checkout.completed","livemode":false,"created":1767225600,"api_version":"v1",` +
		`"data":{"object":{"id":"cs_1","object":"checkout_session","status":"complete","total_amount":3700,"metadata":{"order_id":"42"}}}}`)
	header := client.WebhookSignature(secret, time.Now(), body)

	e, err := client.VerifyWebhook(body, header, secret)
	if err != nil {
		log.Fatal(err)
	}
	s, _ := e.Session()
	fmt.Println(e.Type, s.Status, s.TotalAmount, s.Metadata["order_id"])

	// A body decoded and encoded again is not what was signed.
	_, err = client.VerifyWebhook([]byte(strings.ReplaceAll(string(body), ",", ", ")), header, secret)
	fmt.Println(errors.Is(err, client.ErrReserialized))
	fmt.Println(err)
	// Output:
	// checkout.completed complete 3700 42
	// true
	// checkoutd webhook: no signature matches the body: the body must be the raw bytes received; it looks re-serialized
}

// Receive webhooks on a route of the merchant's server.
func ExampleWebhookHandler() {
	secret := "whsec_0123456789abcdefghijklmnopqrstuv"
	mux := http.NewServeMux()
	mux.Handle("POST /checkoutd/webhooks", client.WebhookHandler([]string{secret}, func(e *client.Event) error {
		if e.Type != client.EventCheckoutCompleted {
			return nil
		}
		s, err := e.Session()
		if err != nil {
			return err
		}
		fmt.Println("fulfil order", s.Metadata["order_id"])
		return nil // an error answers 500, and checkoutd tries again later
	}))

	body := []byte(`{"id":"evt_1","object":"event","type":"checkout.completed","livemode":false,"created":1767225600,"api_version":"v1",` +
		`"data":{"object":{"id":"cs_1","object":"checkout_session","status":"complete","metadata":{"order_id":"42"}}}}`)
	req := httptest.NewRequest("POST", "/checkoutd/webhooks", strings.NewReader(string(body)))
	req.Header.Set(client.SignatureHeader, client.WebhookSignature(secret, time.Now(), body))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	fmt.Println(w.Code)
	// Output:
	// fulfil order 42
	// 200
}

// A client with its options: the secret from the environment, a shorter
// timeout per attempt, fewer retries.
func ExampleNew() {
	c := client.New("https://api.example.com", "7d1f6c8e-1c9a-4c55-9f9e-2b7a1c3d4e5f",
		client.WithBearer(os.Getenv("CHECKOUTD_SECRET_KEY")),
		client.WithTimeout(10*time.Second),
		client.WithMaxAttempts(3),
		client.WithMaxRetryTime(20*time.Second),
	)
	_ = c
}

// Sign requests with an HMAC key, whose secret never leaves the server.
func ExampleWithHMAC() {
	c := client.New("https://api.example.com", "7d1f6c8e-1c9a-4c55-9f9e-2b7a1c3d4e5f",
		client.WithHMAC(os.Getenv("CHECKOUTD_KEY_ID"), os.Getenv("CHECKOUTD_HMAC_SECRET")))
	_ = c
}
