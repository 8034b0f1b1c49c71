package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/listen"
)

// trigger makes a test-mode event happen for real, as a merchant's server
// and a buyer would: it creates a checkout session through the API and,
// for payment events, pays it on the payment page with one of the test cards
// (DESIGN.md 7). Nothing is inserted behind the service's back, so the event
// goes out to the store's endpoints, signed, like any other.

// triggerPlan says how an event type is caused: the test card to pay with
// ("" to only create the session), whether to refund the payment then
// (through the API: the key needs refunds:write), or why it cannot be
// caused on demand.
type triggerPlan struct {
	card   string
	refund bool
	// answer waits for the dispute to open, then answers it with winning
	// evidence (the key needs disputes:write).
	answer bool
	why    string
}

var triggerPlans = map[string]triggerPlan{
	checkout.EventCheckoutCreated:   {},
	checkout.EventCheckoutCompleted: {card: "4242424242424242"},
	checkout.EventPaymentSucceeded:  {card: "4242424242424242"},
	checkout.EventPaymentFailed:     {card: "4000000000000002"},
	checkout.EventPaymentDisputed:   {card: "4000000000000259"},
	checkout.EventCheckoutExpired: {why: "a session expires one hour after it is created (SPEC.md) and nothing shortens that; " +
		"run checkoutd trigger checkout.created and the session's checkout.expired follows within the hour"},
	checkout.EventPaymentRefunded:      {card: "4242424242424242", refund: true},
	checkout.EventPaymentDisputeClosed: {card: "4000000000000259", answer: true},
	checkout.EventWebhookTest: {why: "a webhook.test goes to one endpoint: press Send test event on the endpoint's page in the dashboard, " +
		"or run checkoutd webhooks send-test ENDPOINT_ID"},
}

// triggerResult is what trigger prints with --json.
type triggerResult struct {
	Event     string `json:"event"`
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	// PaymentID is the payment that collected the session, when one did.
	PaymentID string `json:"payment_id,omitempty"`
	// RefundID is the refund of it, for payment.refunded.
	RefundID string `json:"refund_id,omitempty"`
	// DisputeID is its dispute, answered, for payment.dispute_closed.
	DisputeID string `json:"dispute_id,omitempty"`
}

func triggerCmd(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "trigger", "trigger EVENT_TYPE --store ID [--base-url URL] [--json]  (the test key's secret in CHECKOUTD_SECRET)")
	var baseURL, store, secret string
	var asJSON bool
	fs.StringVar(&baseURL, "base-url", "http://127.0.0.1:8080", "address of the running service's API")
	fs.StringVar(&store, "store", "", "the store the session is for (required)")
	fs.StringVar(&secret, "secret", "", "a test-mode key's secret with checkouts:write (and refunds:write for payment.refunded, disputes:write for payment.dispute_closed); better given as CHECKOUTD_SECRET, which other users cannot see")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object")
	rest, err := parseFlags(fs, e, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"trigger takes one event type: checkoutd trigger checkout.completed --store ID; types: " + strings.Join(checkout.EventTypes, ", ")}
	}
	typ := rest[0]
	plan, ok := triggerPlans[typ]
	switch {
	case !ok:
		return usageError{fmt.Sprintf("unknown event type %q; types: %s", typ, strings.Join(checkout.EventTypes, ", "))}
	case plan.why != "":
		return fmt.Errorf("checkoutd trigger cannot cause %s: %s", typ, plan.why)
	case store == "":
		return usageError{"trigger needs --store (the store id)"}
	case secret == "":
		return usageError{"trigger needs a test-mode key's secret in CHECKOUTD_SECRET (or --secret)"}
	case !strings.HasPrefix(secret, "ck_test_sk_"):
		return usageError{"trigger works in test mode only, with a test-mode bearer key (ck_test_sk_...): it pays with test cards"}
	}
	t, err := newTriggerer(baseURL, store, secret)
	if err != nil {
		return err
	}
	res, err := t.trigger(ctx, typ, plan)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(res)
	}
	fmt.Fprintf(e.stdout, "created checkout session %s\n", res.SessionID)
	if plan.card != "" {
		fmt.Fprintf(e.stdout, "paid it on the payment page with the test card %s: the session is %s\n", plan.card, res.Status)
	}
	if res.RefundID != "" {
		fmt.Fprintf(e.stdout, "refunded the payment in full through the API: refund %s\n", res.RefundID)
	}
	if res.DisputeID != "" {
		fmt.Fprintf(e.stdout, "answered its dispute %s with winning evidence through the API: test mode's card network decides it a minute later, when the payments job next runs, and it closes won\n", res.DisputeID)
	}
	if typ == checkout.EventPaymentDisputed {
		fmt.Fprintln(e.stdout, "the dispute opens a moment later, when the service's payments job next runs")
	}
	fmt.Fprintf(e.stdout, "%s is on its way to the store's test-mode endpoints that subscribe to it\n", typ)
	return nil
}

// triggerer talks to a running service as a merchant's server (the API)
// and a buyer's browser (the payment page, cookies kept) would.
type triggerer struct {
	base   *url.URL
	store  string
	secret string
	client *http.Client
}

func newTriggerer(baseURL, store, secret string) (*triggerer, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Sprintf("--base-url %q is not an http(s) URL", baseURL)}
	}
	jar, _ := cookiejar.New(nil)
	return &triggerer{base: u, store: store, secret: secret, client: &http.Client{Jar: jar, Timeout: 30 * time.Second}}, nil
}

// session is what trigger reads of a checkout session.
type triggerSession struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	CheckoutURL string  `json:"checkout_url"`
	PaymentID   *string `json:"payment_id"`
}

func (t *triggerer) trigger(ctx context.Context, typ string, plan triggerPlan) (*triggerResult, error) {
	body := `{"title":"checkoutd trigger ` + typ + `","items":[{"name":"Test item","amount":1500,"quantity":1}],"metadata":{"triggered_by":"checkoutd trigger"}}`
	var s triggerSession
	if err := t.api(ctx, http.MethodPost, "/checkouts", body, &s); err != nil {
		return nil, fmt.Errorf("create a checkout session: %w", err)
	}
	res := &triggerResult{Event: typ, SessionID: s.ID, Status: s.Status}
	if plan.card == "" {
		return res, nil
	}
	if plan.answer {
		// The key's permission first, so that a key without it fails
		// now rather than after the wait for the dispute: a dispute that
		// does not exist answers 404 to a key that may answer disputes,
		// and 403 to one that may not.
		err := t.api(ctx, http.MethodPost, "/disputes/dp_"+strings.Repeat("0", 32)+"/evidence", `{"uncategorized_text":"x"}`, nil)
		var ae *listen.APIError
		if errors.As(err, &ae) && ae.Code == checkout.EPermissionDenied {
			return nil, errors.New("the key needs disputes:write as well as checkouts:write to answer the dispute (checkoutd keys create --permissions checkouts:write,disputes:write)")
		}
	}
	if err := t.payByCard(ctx, s.CheckoutURL, plan.card); err != nil {
		return nil, fmt.Errorf("pay session %s: %w", s.ID, err)
	}
	if err := t.api(ctx, http.MethodGet, "/checkouts/"+s.ID, "", &s); err != nil {
		return nil, fmt.Errorf("read session %s: %w", s.ID, err)
	}
	res.Status = s.Status
	if s.PaymentID != nil {
		res.PaymentID = *s.PaymentID
	}
	if plan.answer && res.PaymentID != "" {
		id, err := t.answerDispute(ctx, res.PaymentID)
		if err != nil {
			return nil, err
		}
		res.DisputeID = id
		return res, nil
	}
	if !plan.refund || res.PaymentID == "" {
		return res, nil
	}
	var r struct{ ID, Status string }
	if err := t.api(ctx, http.MethodPost, "/payments/"+res.PaymentID+"/refunds", `{"reason":"requested_by_customer"}`, &r); err != nil {
		var ae *listen.APIError
		if errors.As(err, &ae) && ae.Code == checkout.EPermissionDenied {
			return nil, fmt.Errorf("refund payment %s: the key needs refunds:write as well as checkouts:write (checkoutd keys create --permissions checkouts:write,refunds:write)", res.PaymentID)
		}
		return nil, fmt.Errorf("refund payment %s: %w", res.PaymentID, err)
	}
	res.RefundID = r.ID
	return res, nil
}

// disputeWait bounds how long trigger waits for a payment's dispute to
// open: the test card's delay, and a round of the service's payments job.
const disputeWait = checkout.DisputeDelay + time.Minute

// answerDispute waits for the payment's dispute to open (the service's
// payments job opens it checkout.DisputeDelay after the payment), then
// answers it with winning evidence, and returns its id.
func (t *triggerer) answerDispute(ctx context.Context, paymentID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, disputeWait)
	defer cancel()
	for {
		var p struct {
			Dispute *struct{ ID string } `json:"dispute"`
		}
		if err := t.api(ctx, http.MethodGet, "/payments/"+paymentID, "", &p); err != nil {
			return "", fmt.Errorf("read payment %s: %w", paymentID, err)
		}
		if p.Dispute != nil {
			err := t.api(ctx, http.MethodPost, "/disputes/"+p.Dispute.ID+"/evidence",
				`{"uncategorized_text":"checkoutd trigger: winning_evidence","note":"sent by checkoutd trigger"}`, nil)
			var ae *listen.APIError
			if errors.As(err, &ae) && ae.Code == checkout.EPermissionDenied {
				return "", fmt.Errorf("answer dispute %s: the key needs disputes:write as well as checkouts:write (checkoutd keys create --permissions checkouts:write,disputes:write)", p.Dispute.ID)
			}
			if err != nil {
				return "", fmt.Errorf("answer dispute %s: %w", p.Dispute.ID, err)
			}
			return p.Dispute.ID, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("payment %s's dispute did not open within %v: is the service's payments job running?", paymentID, disputeWait)
		case <-time.After(triggerPoll):
		}
	}
}

// triggerPoll is how often trigger looks whether a dispute opened.
var triggerPoll = time.Second

// api calls the merchant API at path under the store, and decodes data.
func (t *triggerer) api(ctx context.Context, method, path, body string, data any) error {
	req, err := http.NewRequestWithContext(ctx, method, t.base.String()+"/v1/stores/"+t.store+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+t.secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := listen.DecodeEnvelope(resp, data); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// csrfInput finds the payment page's form token.
var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// payByCard opens the payment page as a buyer's browser and sends its card
// form.
func (t *triggerer) payByCard(ctx context.Context, checkoutURL, number string) error {
	page, err := url.Parse(checkoutURL)
	if err != nil || page.Host == "" {
		return fmt.Errorf("the session's checkout_url %q is not a URL", checkoutURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page.String(), nil)
	if err != nil {
		return err
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("open the payment page: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return err
	}
	m := csrfInput.FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		return fmt.Errorf("the payment page %s answered %d without its card form", page, resp.StatusCode)
	}
	form := url.Values{"csrf_token": {html.UnescapeString(string(m[1]))}, "number": {number}, "expiry": {"12/" + time.Now().AddDate(2, 0, 0).Format("06")},
		"cvc": {"123"}, "name": {"Test Buyer"}, "email": {"buyer@example.com"}}
	post := page.JoinPath("card")
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, post.String(), bytes.NewBufferString(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", page.Scheme+"://"+page.Host)
	resp, err = t.client.Do(req)
	if err != nil {
		return fmt.Errorf("send the card form: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return errors.New("the payment page failed: " + resp.Status)
	}
	return nil
}
