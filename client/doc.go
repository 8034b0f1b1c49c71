// Package client is the Go client for checkoutd's merchant API, for the
// merchant's server: create and retrieve checkout sessions, and verify the
// webhooks checkoutd sends.
//
//	c := client.New("https://api.example.com", storeID, client.WithBearer(os.Getenv("CHECKOUTD_SECRET_KEY")))
//	s, err := c.Create(ctx, client.CreateParams{
//		Items:     []client.ItemParams{{Name: "Sword", Amount: 1500}},
//		ReturnURL: "https://shop.example.com/thanks",
//	})
//	// redirect the buyer to s.CheckoutURL
//
// Fulfil an order only when a session retrieved with Get reads
// StatusComplete: the buyer's return URL alone proves nothing.
//
// # Authentication
//
// WithBearer sends an API key's secret with every request. WithHMAC signs
// every request with an HMAC key instead (HTTP Message Signatures, RFC
// 9421, hmac-sha256, with Content-Digest), so that the secret never leaves
// the merchant's server.
//
// # Retries
//
// Create and Get retry, with jittered exponential backoff, on 429 (waiting
// at least what Retry-After says), on 503 and on network errors, up to
// WithMaxAttempts attempts within WithMaxRetryTime. Every attempt of one
// Create sends the same Idempotency-Key (CreateParams.IdempotencyKey, or 128
// random bits when it is empty), so a retry after an answer lost on the way
// back returns the session the first attempt created instead of creating a
// second one. Cancelling the context stops the retries.
//
// # Errors
//
// An answer of checkoutd's other than 2xx is an *Error, with the code,
// param, details and request id of the error envelope (docs/api.md):
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Code == "amount_mismatch" { ... }
//
// A request that never got an answer fails with the transport's error
// wrapped, so errors.Is(err, context.DeadlineExceeded) and the like work.
//
// # Webhooks
//
// VerifyWebhook checks a delivery's Service-Webhook-Signature header against
// the raw body, as docs/webhooks.md says: HMAC-SHA256 of "<t>.<body>" keyed
// with the whole signing secret, compared in constant time, t within 5
// minutes, any of several v1= values (a secret rolled with overlap signs
// with both). Each failure is a distinct error (ErrMalformedHeader,
// ErrStaleTimestamp, ErrNoMatchingSignature, ErrReserialized, ErrNoSecret)
// for errors.Is.
// WebhookHandler wraps it into an http.Handler that reads the body as
// received.
//
// The package is a module of its own, github.com/checkoutd/checkoutd/client,
// apart from checkoutd's and requiring no other module:
//
//	go get github.com/checkoutd/checkoutd/client
//
// adds it alone to a merchant's go.mod, and nothing to their go.sum. It
// imports the standard library alone, and its types are its own.
package client
