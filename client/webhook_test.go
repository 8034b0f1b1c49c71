package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// delivery is a checkout.created event as checkoutd sends it, to the byte:
// its JSON encoder's key order and HTML escaping, no newline at the end.
// internal/clienttest's TestVerifyWebhookRealDelivery holds the refusals
// that depend on these bytes to a real delivery's.
const delivery = `{"id":"evt_01a224ef53f97bcbdb19ca400d405c39","object":"event","type":"checkout.created","livemode":false,"created":1795915994,"api_version":"v1",` +
	`"data":{"object":{"id":"cs_5e0deaa10e186f5f4bf19002a8bcf6e500988ea21e0fefaa6c2899aad2014069","object":"checkout_session","livemode":false,"status":"open",` +
	`"title":"\u003cSword \u0026 \"Shield\"\u003e","description":null,"checkout_url":"https://pay.example.test/invoice/cs_5e0deaa10e186f5f4bf19002a8bcf6e500988ea21e0fefaa6c2899aad2014069",` +
	`"merchant":{"id":"86d216ba-e70e-46d5-b75e-399480ab7d29","name":"Acme Games","statement_descriptor":"ACME GAMES","website":""},` +
	`"currency":"USD","amount":1500,"discount_amount":0,"tax_amount":0,"total_amount":1500,"items":[{"name":"Sword","amount":1500,"quantity":1,"image":null}],` +
	`"customer":{"email":null,"name":null},"metadata":{},"return_url":null,"cancel_url":null,"payment_id":null,"created_at":1795915994,"expires_at":1795919594,"completed_at":null}}}`

// What a receiver gets wrong is told apart.
func TestVerifyWebhookRefusals(t *testing.T) {
	const secret = "whsec_0123456789abcdefghijklmnopqrstuv"
	body := []byte(delivery)
	now := time.Now()
	header := WebhookSignature(secret, now, body)
	if e, err := VerifyWebhook(body, header, secret); err != nil || e.Type != EventCheckoutCreated {
		t.Fatalf("VerifyWebhook(the delivery) = %v, %v", e, err)
	}

	var m map[string]any
	json.Unmarshal(body, &m)
	sorted, _ := json.Marshal(m)
	indented, _ := json.MarshalIndent(json.RawMessage(body), "", "  ")
	var withNewline bytes.Buffer
	json.NewEncoder(&withNewline).Encode(json.RawMessage(body))
	unescaped := bytes.ReplaceAll(body, []byte(`\u0026`), []byte(`&`))
	tampered := bytes.Replace(body, []byte(`"amount":1500`), []byte(`"amount":15`), 1)
	ts, v1, _ := strings.Cut(strings.TrimPrefix(header, "t="), ",v1=")
	for _, tt := range []struct {
		name    string
		body    []byte
		header  string
		secrets []string
		now     time.Time
		want    []error
		notWant error
		says    string
	}{
		{"tampered", tampered, header, []string{secret}, now, []error{ErrNoMatchingSignature}, ErrReserialized, "wrong secret"},
		{"wrong secret", body, header, []string{"whsec_" + strings.Repeat("0", 32)}, now, []error{ErrNoMatchingSignature}, ErrReserialized, ""},
		{"secret without whsec_", body, header, []string{strings.TrimPrefix(secret, "whsec_")}, now, []error{ErrNoMatchingSignature}, nil, "prefix included"},
		{"keys sorted (a map encoded again)", sorted, header, []string{secret}, now, []error{ErrNoMatchingSignature, ErrReserialized}, nil, "it looks re-serialized"},
		{"indented", indented, header, []string{secret}, now, []error{ErrReserialized}, nil, "raw bytes"},
		{"encoder's newline", withNewline.Bytes(), header, []string{secret}, now, []error{ErrReserialized}, nil, ""},
		{"escaping changed", unescaped, header, []string{secret}, now, []error{ErrReserialized}, nil, ""},
		{"empty body", nil, header, []string{secret}, now, []error{ErrNoMatchingSignature}, ErrReserialized, "empty"},
		{"stale", body, header, []string{secret}, now.Add(6 * time.Minute), []error{ErrStaleTimestamp}, ErrNoMatchingSignature, ""},
		{"from the future", body, header, []string{secret}, now.Add(-6 * time.Minute), []error{ErrStaleTimestamp}, nil, ""},
		{"no header", body, "", []string{secret}, now, []error{ErrMalformedHeader}, nil, "missing"},
		{"no t", body, "v1=" + v1, []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
		{"t not a number", body, "t=soon,v1=" + v1, []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
		{"two t", body, "t=" + ts + ",t=" + ts + ",v1=" + v1, []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
		{"no v1", body, "t=" + ts + ",v0=" + v1, []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
		{"v1 not hex", body, "t=" + ts + ",v1=xyz", []string{secret}, now, []error{ErrMalformedHeader}, nil, ""},
		{"t changed", body, "t=" + ts + "1,v1=" + v1, []string{secret}, now, []error{ErrNoMatchingSignature}, nil, ""},
	} {
		v := &Verifier{Secrets: tt.secrets, Now: func() time.Time { return tt.now }}
		e, err := v.Verify(tt.body, tt.header)
		for _, want := range tt.want {
			if e != nil || !errors.Is(err, want) {
				t.Errorf("%s: Verify = %v, %v; want %v", tt.name, e, err, want)
			}
		}
		if tt.notWant != nil && errors.Is(err, tt.notWant) {
			t.Errorf("%s: Verify = %v; want not %v", tt.name, err, tt.notWant)
		}
		if err != nil && !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: Verify = %q; want it to say %q", tt.name, err, tt.says)
		}
	}
	// Within the tolerance either way, and with a tolerance of one's own.
	for _, d := range []time.Duration{4 * time.Minute, -4 * time.Minute} {
		if _, err := (&Verifier{Secrets: []string{secret}, Now: func() time.Time { return now.Add(d) }}).Verify(body, header); err != nil {
			t.Errorf("%v from the signature: %v", d, err)
		}
	}
	if _, err := (&Verifier{Secrets: []string{secret}, Tolerance: time.Minute, Now: func() time.Time { return now.Add(2 * time.Minute) }}).Verify(body, header); !errors.Is(err, ErrStaleTimestamp) {
		t.Errorf("Tolerance 1m, 2m late: %v", err)
	}
}

// The handler's answers to what is not a good delivery.
func TestWebhookHandlerAnswers(t *testing.T) {
	const secret = "whsec_test"
	body := []byte(`{"id":"evt_1","object":"event","type":"webhook.test","livemode":false,"created":1,"api_version":"v1","data":{"object":{"object":"webhook_test"}}}`)
	good := WebhookSignature(secret, time.Now(), body)
	called := 0
	hd := WebhookHandler([]string{secret}, func(*Event) error { called++; return nil })
	for _, tt := range []struct {
		name, method, header string
		body                 []byte
		want                 int
	}{
		{"good", "POST", good, body, 200},
		{"GET", "GET", good, nil, 405},
		{"too large", "POST", good, bytes.Repeat([]byte("x"), MaxWebhookBody+1), 413},
		{"malformed header", "POST", "nope", body, 400},
		{"stale", "POST", WebhookSignature(secret, time.Now().Add(-time.Hour), body), body, 401},
		{"bad signature", "POST", WebhookSignature("whsec_other", time.Now(), body), body, 401},
	} {
		req := httptest.NewRequest(tt.method, "/hook", bytes.NewReader(tt.body))
		req.Header.Set(SignatureHeader, tt.header)
		w := httptest.NewRecorder()
		hd.ServeHTTP(w, req)
		if w.Code != tt.want {
			t.Errorf("%s: %d %s; want %d", tt.name, w.Code, w.Body, tt.want)
		}
	}
	if called != 1 {
		t.Errorf("fn called %d times; want 1", called)
	}
}

// WebhookSignature is the worked example of docs/webhooks.md.
func TestWebhookSignatureDocsExample(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	const want = "t=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925"
	if got := WebhookSignature("whsec_test", time.Unix(1700000000, 0), body); got != want {
		t.Errorf("WebhookSignature = %s; want %s", got, want)
	}
	v := &Verifier{Secrets: []string{"whsec_test"}, Now: func() time.Time { return time.Unix(1700000100, 0) }}
	if _, err := v.Verify(body, want); err != nil {
		t.Errorf("Verify(the docs' example) = %v", err)
	}
}

// An empty secret would let anyone sign: it is refused, whatever the
// header, and the handler answers 500 (the receiver's configuration is
// wrong, and checkoutd should try again once it is fixed).
func TestVerifyWebhookRefusesEmptySecret(t *testing.T) {
	body := []byte(`{"id":"evt_1","object":"event","type":"webhook.test"}`)
	forged := WebhookSignature("", time.Now(), body)
	for _, secrets := range [][]string{nil, {""}, {"whsec_test", ""}} {
		if _, err := VerifyWebhook(body, forged, secrets...); !errors.Is(err, ErrNoSecret) {
			t.Errorf("VerifyWebhook with secrets %q = %v; want ErrNoSecret", secrets, err)
		}
	}
	req := httptest.NewRequest("POST", "/hook", bytes.NewReader(body))
	req.Header.Set(SignatureHeader, forged)
	w := httptest.NewRecorder()
	WebhookHandler([]string{""}, func(*Event) error { t.Error("fn called"); return nil }).ServeHTTP(w, req)
	if w.Code != http.StatusInternalServerError {
		t.Errorf("handler with an empty secret = %d; want 500", w.Code)
	}
}
