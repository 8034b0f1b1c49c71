package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// disputed pays a new $30.00 session with a dispute test card and runs the
// payments job once its dispute is due; it returns the payment and the
// dispute.
func (e *refundEnv) disputed(number string) (*checkout.Payment, *checkout.Dispute) {
	e.t.Helper()
	p := e.paidByCard(number)
	e.clock.Advance(checkout.DisputeDelay)
	e.runPaymentsJob()
	return e.reload(p), e.dispute(p)
}

// runPaymentsJob runs the payments job as its loop would now.
func (e *refundEnv) runPaymentsJob() {
	e.t.Helper()
	if _, err := e.svc.ProcessAllDuePayments(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// dispute returns a payment's dispute as it is stored now.
func (e *refundEnv) dispute(p *checkout.Payment) *checkout.Dispute {
	e.t.Helper()
	d, err := e.svc.DisputeOfPayment(context.Background(), p.ID)
	if err != nil || d == nil {
		e.t.Fatalf("the dispute of %s = %v, %v", p.ID, d, err)
	}
	return d
}

// evidence is the evidence form as typed, with the signed-in session's
// form token.
func (e *refundEnv) evidence(p *checkout.Payment, values map[string]string) url.Values {
	e.t.Helper()
	form := url.Values{"form_token": {e.get(e.path(p), e.ann).formToken(e.t)}}
	for k, v := range values {
		form.Set(k, v)
	}
	return form
}

// reviewEvidence sends the evidence form: its confirmation, or the page
// refusing it.
func (e *refundEnv) reviewEvidence(p *checkout.Payment, form url.Values) *page {
	e.t.Helper()
	return e.post(e.path(p)+"/dispute/review", form, e.ann)
}

// evidenceConfirmation reviews evidence and returns the form its Confirm
// posts.
func (e *refundEnv) evidenceConfirmation(p *checkout.Payment, values map[string]string) url.Values {
	e.t.Helper()
	pg := e.reviewEvidence(p, e.evidence(p, values))
	if pg.status != http.StatusOK || !strings.Contains(pg.body, "<h1>Send this evidence?</h1>") {
		e.t.Fatalf("review evidence = %d: %s", pg.status, pg.body)
	}
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(pg.body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	return form
}

// sendEvidence posts a confirmation's form.
func (e *refundEnv) sendEvidence(p *checkout.Payment, form url.Values) *page {
	e.t.Helper()
	return e.post(e.path(p)+"/dispute/evidence", form, e.ann)
}

// evidenceSent follows a confirmation's redirect to the payment's page.
func (e *refundEnv) evidenceSent(p *checkout.Payment, res *page) *page {
	e.t.Helper()
	if want := e.path(p) + "?evidence=sent#dispute"; res.status != http.StatusSeeOther || res.header.Get("Location") != want {
		e.t.Fatalf("send evidence = %d, Location %q; want 303 to %s: %s", res.status, res.header.Get("Location"), want, res.body)
	}
	return e.get(strings.TrimSuffix(res.header.Get("Location"), "#dispute"), e.ann)
}

// annActor is ann's account as an actor.
func (e *refundEnv) annActor() checkout.Actor {
	e.t.Helper()
	a, err := e.db.AccountGetByEmail(context.Background(), "ann@example.com")
	if err != nil {
		e.t.Fatal(err)
	}
	return checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: "ann@example.com"}
}

var evidenceFieldNames = []string{"product_description", "customer_communication", "shipping_documentation", "refund_policy", "uncategorized_text", "note"}

func utc(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// A disputed payment's page shows its dispute (reason, status in words,
// amount and fee held, the deadline and the time left) and the evidence
// form: five labelled texts with hints, the note marked as the merchant's
// own, and in test mode how the test card network decides. Review sends
// nothing: its confirmation shows the evidence as it will be sent, and
// Back returns to the form as filled in. Confirm sends it as the signed-in
// account (line breaks as typed, surrounding spaces trimmed); the page then
// shows it sent, escaped, by whom and when, under review with no form; a
// minute later the job decides it won, and the payment is succeeded again.
func TestDisputeForm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p, d := e.disputed("4000000000000259")
		if p.Status != checkout.PaymentDisputed || d.Status != checkout.DisputeNeedsResponse || d.Amount != 3000 || d.Fee != 1500 {
			t.Fatalf("the payment %s, its dispute %+v; want disputed, needs_response, 3000 and a fee of 1500", p.Status, d)
		}
		pg := e.get(e.path(p), e.ann)
		if pg.status != http.StatusOK || pg.header.Get("Content-Security-Policy") != wantCSP {
			t.Fatalf("the disputed payment's page = %d, CSP %q", pg.status, pg.header.Get("Content-Security-Policy"))
		}
		due := utc(d.EvidenceDueBy)
		wantIn(t, "the disputed payment's page", pg.body,
			`<strong>Disputed.</strong> Answer with evidence by <time datetime="`, "(7 days left), or the dispute is lost", `<a href="#evidence">`,
			"A dispute is open: its amount and fee are held until the card network decides.",
			"<dt>Held by the dispute</dt><dd>$30.00 and the $15.00 fee</dd>",
			`<section class="card" id="dispute" aria-labelledby="dispute-title">`,
			"Needs your response: the buyer&#39;s bank disputes this payment. Send evidence before the deadline, or the dispute is lost.",
			"<dt>Dispute id</dt><dd><code>"+d.ID+"</code></dd>", `<span class="badge bad">needs_response</span>`,
			"<dt>Reason</dt><dd>Fraudulent<br><span class=\"hint\">The cardholder says they did not make or allow this payment.</span>",
			"<dt>Disputed amount</dt><dd>$30.00, held</dd>", "<dt>Dispute fee</dt><dd>$15.00, held</dd>",
			due+`</time> <span class="badge warn time-left">7 days left</span>`,
			"given back if it is won, taken if it is lost",
			`<h3 id="evidence">Answer with evidence</h3>`, "Evidence is sent once, and cannot be changed or added to afterwards.",
			`<form class="evidence" method="post" action="`+e.path(p)+`/dispute/review" novalidate>`,
			"<legend>Evidence for the card network</legend>", "Plain text, up to 20,000 characters each; line breaks are kept.",
			`<label for="evidence-product_description">Product or service</label>`,
			`<label for="evidence-customer_communication">Communication with the buyer</label>`,
			`<label for="evidence-shipping_documentation">Shipping or delivery</label>`,
			`<label for="evidence-refund_policy">Refund policy</label>`,
			`<label for="evidence-uncategorized_text">Other evidence</label>`,
			`<label for="evidence-note">Your note <span class="optional">(yours alone, never sent)</span></label>`,
			"never sent to the card network.", "The carrier, tracking number, delivery date and address",
			`<div class="warning" role="note" id="test-network"><p><strong>Test mode</strong>`,
			"Evidence with <code>winning_evidence</code> in one of its texts wins; any other evidence loses",
			"Unanswered, the dispute is lost at the deadline. The note never counts.",
			"Review evidence", "Nothing is sent until you confirm.", `<p id="refund-block">Payment `+p.ID+` is disputed`)
		for _, name := range evidenceFieldNames {
			wantIn(t, "the evidence form", pg.body, `<textarea id="evidence-`+name+`" name="`+name+`"`, `aria-describedby="evidence-`+name+`-hint"`)
		}
		if strings.Contains(pg.body, "aria-invalid") || inlineScript.MatchString(pg.body) || strings.Contains(pg.body, "style=") {
			t.Error("the form is marked invalid before anything is sent, or the page has inline script or style")
		}
		if list := e.get("/dashboard/stores/"+e.m.ID+"/test/payments", e.ann); !strings.Contains(list.body, "A dispute is open: its amount and fee are held") {
			t.Error("the payments list does not say what disputed means")
		}

		// Review: the confirmation, as it will be sent, nothing sent yet.
		values := map[string]string{
			"product_description":    "  A <b>sword</b>, made to order.\r\nShipped on 2 November.  ",
			"shipping_documentation": "Tracking 1Z999 & signed for.",
			"uncategorized_text":     "winning_evidence",
			"note":                   "Called the buyer: \"they forgot\".",
		}
		pg = e.reviewEvidence(p, e.evidence(p, values))
		if pg.status != http.StatusOK {
			t.Fatalf("review = %d: %s", pg.status, pg.body)
		}
		wantIn(t, "the confirmation", pg.body, "<h1>Send this evidence?</h1>",
			`for the dispute of payment <code class="wrap">`+p.ID+`</code> ($30.00, Fraudulent)? Evidence is sent once: it cannot be changed or added to afterwards.`,
			"<dt>Product or service</dt><dd>A &lt;b&gt;sword&lt;/b&gt;, made to order.\nShipped on 2 November.</dd>",
			"<dt>Shipping or delivery</dt><dd>Tracking 1Z999 &amp; signed for.</dd>", "<dt>Other evidence</dt><dd>winning_evidence</dd>",
			`<dt>Your note <span class="optional">(yours alone, not sent)</span></dt><dd class="note">Called the buyer: &#34;they forgot&#34;.</dd>`,
			"this evidence contains <code>winning_evidence</code>, so the test card network decides the dispute won, a minute after it is sent.",
			`<form method="post" action="`+e.path(p)+`/dispute/evidence">`, "Send evidence",
			`formaction="`+e.path(p)+`/dispute/review" name="back" value="1">Back</button>`)
		if strings.Contains(pg.body, "Communication with the buyer") || strings.Contains(pg.body, "<b>sword") {
			t.Error("the confirmation lists an empty text, or repeats one unescaped")
		}
		if got := e.dispute(p); got.SubmittedAt != nil || got.Status != checkout.DisputeNeedsResponse {
			t.Fatalf("the review sent evidence: %+v", got)
		}
		form := e.evidenceConfirmation(p, values)
		if form.Get("form_token") == "" || form.Get("product_description") != "  A <b>sword</b>, made to order.\nShipped on 2 November.  " {
			t.Fatalf("the confirmation carries %q; want the form token and the texts as typed", form)
		}

		// Back: the form as it was filled in.
		back := url.Values{"back": {"1"}}
		for k, v := range form {
			back[k] = v
		}
		pg = e.reviewEvidence(p, back)
		wantIn(t, "the form after Back", pg.body, "A &lt;b&gt;sword&lt;/b&gt;, made to order.\nShipped on 2 November.",
			">\nwinning_evidence</textarea>", ">\nCalled the buyer: &#34;they forgot&#34;.</textarea>", "Review evidence")
		if pg.status != http.StatusOK || strings.Contains(pg.body, "aria-invalid") || e.dispute(p).SubmittedAt != nil {
			t.Errorf("Back = %d, or marks the form invalid, or sent the evidence", pg.status)
		}

		// Confirm: sent, as ann, and shown as sent.
		pg = e.evidenceSent(p, e.sendEvidence(p, form))
		got := e.dispute(p)
		want := checkout.DisputeEvidence{ProductDescription: "A <b>sword</b>, made to order.\nShipped on 2 November.",
			ShippingDocumentation: "Tracking 1Z999 & signed for.", UncategorizedText: "winning_evidence", Note: `Called the buyer: "they forgot".`}
		if got.Status != checkout.DisputeUnderReview || got.Evidence != want || got.SubmittedBy == nil || *got.SubmittedBy != e.annActor() {
			t.Fatalf("the dispute after Confirm = %s, %+v by %v; want under_review, %+v by ann", got.Status, got.Evidence, got.SubmittedBy, want)
		}
		wantIn(t, "the page after the evidence", pg.body,
			`<p class="notice" role="status">Evidence sent. The card network decides a moment later (test mode: a minute after it was sent), and this page then shows the outcome.</p>`,
			"Under review: the card network has your evidence, and it is decided a moment later.", `<span class="badge warn">under_review</span>`,
			"<h3>Evidence sent</h3>", "<dt>Product or service</dt><dd>A &lt;b&gt;sword&lt;/b&gt;, made to order.\nShipped on 2 November.</dd>",
			"<dt>Evidence sent</dt><dd>", utc(*got.SubmittedAt)+"</time> by ann@example.com</dd>",
			`<span class="hint">Evidence sent: decided a moment later</span>`, `<dd class="note">Called the buyer: &#34;they forgot&#34;.</dd>`)
		if strings.Contains(pg.body, `<form class="evidence"`) || strings.Contains(pg.body, "<strong>Disputed.</strong>") || strings.Contains(pg.body, "<b>sword") {
			t.Error("the page with the evidence sent still offers the form, or asks for an answer, or shows the evidence unescaped")
		}
		if pg := e.get(e.path(p), e.ann); strings.Contains(pg.body, "Evidence sent. The card network") {
			t.Error("the page says the evidence was just sent on a later visit")
		}

		// A minute later: won.
		e.clock.Advance(checkout.DisputeDecisionDelay)
		e.runPaymentsJob()
		pg = e.get(e.path(p), e.ann)
		wantIn(t, "the page of the dispute won", pg.body, `<span class="badge good">won</span>`,
			"Won: the card network decided for you. The disputed amount and the fee held are given back.",
			"<dt>Disputed amount</dt><dd>$30.00, given back</dd>", "<dt>Dispute fee</dt><dd>$15.00, given back</dd>",
			"<dt>Closed</dt><dd>", ">succeeded<", "<dt>Net</dt><dd>$28.83</dd>", "<h3>Evidence sent</h3>", `id="refund-amount"`)
		if strings.Contains(pg.body, `<form class="evidence"`) || strings.Contains(pg.body, "Held by the dispute") || strings.Contains(pg.body, "decided a moment later") {
			t.Error("the page of the dispute won offers the form, or holds the amount, or is still waiting")
		}
	})
}

// Evidence the service refuses comes back beside its field, every value
// kept as typed (escaped), at the review and at a confirmation edited to
// carry it: a text too long, a control character, nothing but the note. A
// text of exactly the limit is taken, and a post beyond what the form can
// hold is refused whole. Nothing is sent.
func TestDisputeFormRefusals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p, _ := e.disputed("4000000000000259")
		long := strings.Repeat("é", checkout.MaxEvidenceLen)
		for _, tt := range []struct {
			what   string
			values map[string]string
			field  string // the field in error; "" for the texts as a whole
			want   string
		}{
			{"a text too long", map[string]string{"customer_communication": long + "x", "product_description": `"><script>alert(1)</script>`},
				"customer_communication", "Must be at most 20000 characters; it has 20001."},
			{"a control character", map[string]string{"refund_policy": "No refunds\x07 after 30 days.", "note": "mine"},
				"refund_policy", "Remove the control characters (invisible ones other than line breaks and tabs, often pasted from another program)."},
			{"a note too long", map[string]string{"uncategorized_text": "winning_evidence", "note": long + "x"},
				"note", "Must be at most 20000 characters; it has 20001."},
			{"nothing but the note", map[string]string{"note": "Only for us.", "product_description": "  \r\n "},
				"", "Give the card network some evidence: fill in one of these texts at least. The note alone is not evidence: it is never sent."},
			{"nothing", map[string]string{}, "", "Give the card network some evidence"},
		} {
			form := e.evidence(p, tt.values)
			confirm := e.evidenceConfirmation(p, map[string]string{"uncategorized_text": "fine"})
			for k := range confirm {
				if k != "form_token" {
					confirm.Set(k, tt.values[k])
				}
			}
			for _, pg := range []*page{e.reviewEvidence(p, form), e.sendEvidence(p, confirm)} {
				if pg.status != http.StatusBadRequest {
					t.Errorf("%s = %d; want 400", tt.what, pg.status)
				}
				id := "evidence-error"
				if tt.field != "" {
					id = "evidence-" + tt.field + "-error"
					wantIn(t, tt.what, pg.body, `aria-describedby="evidence-`+tt.field+`-hint evidence-`+tt.field+`-error" aria-invalid="true">`)
				} else {
					wantIn(t, tt.what, pg.body, `<fieldset aria-describedby="evidence-hint evidence-error">`,
						`aria-describedby="evidence-product_description-hint evidence-error" aria-invalid="true">`)
				}
				wantIn(t, tt.what, pg.body, `<p class="field-error" id="`+id+`">`+html.EscapeString(tt.want))
				for name, v := range tt.values {
					if v := strings.ReplaceAll(v, "\r\n", "\n"); !strings.Contains(pg.body, ">\n"+html.EscapeString(v)+"</textarea>") {
						t.Errorf("%s: the form does not keep %s as typed", tt.what, name)
					}
				}
				if strings.Contains(pg.body, "<script>alert") {
					t.Errorf("%s: a value is repeated unescaped", tt.what)
				}
			}
		}
		if pg := e.reviewEvidence(p, e.evidence(p, map[string]string{"product_description": long})); pg.status != http.StatusOK {
			t.Errorf("a text of %d characters = %d; want the confirmation", checkout.MaxEvidenceLen, pg.status)
		}
		huge := e.evidence(p, map[string]string{"product_description": strings.Repeat("x", 2<<20)})
		if pg := e.reviewEvidence(p, huge); pg.status != http.StatusBadRequest || !strings.Contains(pg.body, "The form could not be read.") {
			t.Errorf("a post beyond the form's bound = %d; want 400: %s", pg.status, pg.body)
		}
		if got := e.dispute(p); got.SubmittedAt != nil || got.Status != checkout.DisputeNeedsResponse {
			t.Errorf("refused evidence was sent: %+v", got)
		}
	})
}

// One confirmation posted twice, one after the other or at once, sends the
// evidence once, and every post is answered with the page showing it sent.
// Another confirmation, made before the evidence went, sends nothing and
// says the evidence was sent already and cannot change.
func TestDisputeConfirmedTwice(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p, _ := e.disputed("4000000000000259")
		form := e.evidenceConfirmation(p, map[string]string{"product_description": "A sword.\r\n", "note": "first"})
		other := e.evidenceConfirmation(p, map[string]string{"product_description": "Another story."})
		e.evidenceSent(p, e.sendEvidence(p, form))
		sentAt := *e.dispute(p).SubmittedAt
		e.clock.Advance(time.Second)
		pg := e.evidenceSent(p, e.sendEvidence(p, form))
		wantIn(t, "the page after the second post", pg.body, "Evidence sent. The card network decides", "<dd>A sword.</dd>")
		if got := e.dispute(p); !got.SubmittedAt.Equal(sentAt) || got.Evidence.ProductDescription != "A sword." || got.Evidence.Note != "first" {
			t.Errorf("the second post changed the evidence: %+v at %v", got.Evidence, got.SubmittedAt)
		}
		pg = e.sendEvidence(p, other)
		if pg.status != http.StatusConflict {
			t.Errorf("another confirmation after the evidence went = %d; want 409", pg.status)
		}
		wantIn(t, "another confirmation after the evidence went", pg.body,
			`<p class="error" role="alert">Nothing was sent: this dispute&#39;s evidence was sent already (below), and evidence cannot be changed or added to.</p>`,
			"<dd>A sword.</dd>", "by ann@example.com")
		if strings.Contains(pg.body, "Another story") || strings.Contains(pg.body, `<form class="evidence"`) {
			t.Error("the refusal shows the evidence refused, or the form")
		}
		if got := e.dispute(p); got.Evidence.ProductDescription != "A sword." {
			t.Errorf("another confirmation changed the evidence to %+v", got.Evidence)
		}
		if pg := e.reviewEvidence(p, e.evidence(p, map[string]string{"product_description": "Later."})); pg.status != http.StatusConflict ||
			!strings.Contains(pg.body, "Nothing was sent: this dispute&#39;s evidence was sent already") {
			t.Errorf("a review after the evidence went = %d: %s", pg.status, pg.body)
		}

		// At once.
		q, _ := e.disputed("4000000000002685")
		form = e.evidenceConfirmation(q, map[string]string{"shipping_documentation": "Delivered."})
		var wg sync.WaitGroup
		res := make([]*page, 4)
		for i := range res {
			wg.Go(func() { res[i] = e.sendEvidence(q, form) })
		}
		wg.Wait()
		for _, r := range res {
			if r.status != http.StatusSeeOther || r.header.Get("Location") != e.path(q)+"?evidence=sent#dispute" {
				t.Errorf("a post at once = %d, Location %q; want each to the page with the evidence sent", r.status, r.header.Get("Location"))
			}
		}
		if got := e.dispute(q); got.Status != checkout.DisputeUnderReview || got.Evidence.ShippingDocumentation != "Delivered." {
			t.Errorf("after the posts at once: %s, %+v", got.Status, got.Evidence)
		}
	})
}

// A dispute takes evidence while it is open, has none, and its deadline has
// not passed: the card 1976's, opened under review, does; past the deadline
// the page shows no form and says the dispute is lost (a confirmation made
// before sends nothing), and once the job closes it, lost, the page says
// what was taken. A closed dispute refuses a review.
func TestDisputeNoLongerTakesEvidence(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		review, _ := e.disputed("4000000000001976")
		pg := e.get(e.path(review), e.ann)
		wantIn(t, "a dispute opened under review", pg.body, `<span class="badge warn">under_review</span>`, "<dt>Reason</dt><dd>General",
			"Under review: the card network is looking at the buyer&#39;s claim. You may still send evidence before the deadline; without it, the dispute is lost at the deadline.",
			`<form class="evidence"`)

		p, d := e.disputed("4000000000002685")
		wantIn(t, "a dispute of a product not received", e.get(e.path(p), e.ann).body, "<dt>Reason</dt><dd>Product not received",
			"The buyer says they did not receive what they paid for.")
		form := e.evidenceConfirmation(p, map[string]string{"shipping_documentation": "Delivered."})

		// The time left, to the minute; under two days, urgent.
		for _, tt := range []struct {
			at   time.Time
			want string
		}{
			{d.EvidenceDueBy.Add(-(5*24*time.Hour + 30*time.Minute)), `<span class="badge bad time-left">5 days left</span>`},
			{d.EvidenceDueBy.Add(-(2*24*time.Hour + 90*time.Minute)), `<span class="badge warn time-left">2 days 1 hour left</span>`},
			{d.EvidenceDueBy.Add(-(47*time.Hour + 59*time.Minute + 30*time.Second)), `<span class="badge bad time-left">1 day 23 hours left</span>`},
			{d.EvidenceDueBy.Add(-(3*time.Hour + 5*time.Minute)), `<span class="badge bad time-left">3 hours 5 minutes left</span>`},
			{d.EvidenceDueBy.Add(-61 * time.Second), `<span class="badge bad time-left">1 minute left</span>`},
			{d.EvidenceDueBy.Add(-time.Second), `<span class="badge bad time-left">less than a minute left</span>`},
		} {
			e.clock.Set(tt.at)
			e.ann = e.signIn("ann@example.com") // days later
			want := tt.want
			if tt.at.Before(d.EvidenceDueBy.Add(-48 * time.Hour)) {
				want = strings.Replace(want, "badge bad", "badge warn", 1)
			}
			if pg := e.get(e.path(p), e.ann); !strings.Contains(pg.body, want) || !strings.Contains(pg.body, `<form class="evidence"`) {
				t.Errorf("%v before the deadline, the page has no %q, or no form", d.EvidenceDueBy.Sub(tt.at), want)
			}
		}

		// At the deadline, the job not yet run.
		e.clock.Set(d.EvidenceDueBy)
		pg = e.get(e.path(p), e.ann)
		wantIn(t, "the page at the deadline", pg.body, `<span class="badge bad time-left">Deadline passed</span>`,
			"The deadline passed without evidence: the dispute is lost, and is closed as lost in a moment.")
		if strings.Contains(pg.body, `<form class="evidence"`) || strings.Contains(pg.body, "<strong>Disputed.</strong>") {
			t.Error("past the deadline the page still offers the form")
		}
		form.Set("form_token", pg.formToken(t)) // signed in again since
		pg = e.sendEvidence(p, form)
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, `<p class="error" role="alert">Nothing was sent: the deadline for evidence has passed.</p>`) {
			t.Errorf("a confirmation after the deadline = %d: %s", pg.status, pg.body)
		}
		if got := e.dispute(p); got.SubmittedAt != nil {
			t.Fatalf("evidence was sent after the deadline: %+v", got)
		}

		// Lost.
		e.runPaymentsJob()
		pg = e.get(e.path(p), e.ann)
		wantIn(t, "the page of the dispute lost", pg.body, `<span class="badge bad">lost</span>`, ">dispute_lost<",
			"Lost: no evidence was sent by the deadline. The disputed amount and the fee are taken.",
			"<dt>Disputed amount</dt><dd>$30.00, taken</dd>", "<dt>Dispute fee</dt><dd>$15.00, taken</dd>",
			"<dt>Taken by the dispute</dt><dd>$30.00 and the $15.00 fee</dd>", "<dt>Net</dt><dd>-$16.17</dd>",
			"The dispute was lost: its amount and fee were taken from the net.")
		if strings.Contains(pg.body, `<form class="evidence"`) || strings.Contains(pg.body, "time-left") || strings.Contains(pg.body, "held from the payment") {
			t.Error("the page of the dispute lost offers the form, a time left, or says the amount is held")
		}
		pg = e.reviewEvidence(p, e.evidence(p, map[string]string{"product_description": "Too late."}))
		if pg.status != http.StatusConflict || !strings.Contains(pg.body, "Nothing was sent: the dispute is closed, lost.") {
			t.Errorf("a review of a lost dispute = %d: %s", pg.status, pg.body)
		}
		if list := e.get("/dashboard/stores/"+e.m.ID+"/test/payments", e.ann); !strings.Contains(list.body, "The dispute was lost: its amount and fee were taken from the net.") {
			t.Error("the payments list does not say what dispute_lost means")
		}
	})
}

// A payment of another store or of the other mode is the 404 page, at its
// review and its confirmation, as is a payment without a dispute; nothing
// is sent.
func TestDisputeOtherStoreOrMode(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p, _ := e.disputed("4000000000000259")
		plain := e.paidByCard("4242424242424242")
		form := e.evidenceConfirmation(p, map[string]string{"uncategorized_text": "winning_evidence"})
		bobStore, bob := e.signedInStore("bob@example.com")
		bobForm := url.Values{"form_token": {e.get("/dashboard/", bob).formToken(t)}, "uncategorized_text": {"winning_evidence"}}
		for _, tt := range []struct {
			who  *http.Cookie
			path string
			form url.Values
		}{
			{bob, e.path(p), bobForm}, // ann's store, as bob
			{bob, "/dashboard/stores/" + bobStore.ID + "/test/payments/" + p.ID, bobForm}, // bob's store
			{e.ann, "/dashboard/stores/" + e.m.ID + "/live/payments/" + p.ID, form},       // the other mode
			{e.ann, e.path(plain), form}, // no dispute
			{e.ann, "/dashboard/stores/" + e.m.ID + "/test/payments/pay_nope", form},
		} {
			for _, pg := range []*page{e.post(tt.path+"/dispute/review", tt.form, tt.who), e.post(tt.path+"/dispute/evidence", tt.form, tt.who)} {
				if pg.status != http.StatusNotFound || strings.Contains(pg.body, p.ID) {
					t.Errorf("POST %s = %d; want the 404 page", tt.path, pg.status)
				}
			}
		}
		if pg := e.get(e.path(plain), e.ann); strings.Contains(pg.body, `id="dispute"`) {
			t.Error("a payment without a dispute shows a Dispute part")
		}
		if got := e.dispute(p); got.SubmittedAt != nil {
			t.Errorf("evidence from another store or mode was sent: %+v", got)
		}
	})
}

// Evidence posted without the form token, with another session's, from
// another site (Sec-Fetch-Site, or an Origin of another site), or signed
// out, is refused and sends nothing; the review too.
func TestDisputeCrossSiteAndFormToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		p, _ := e.disputed("4000000000000259")
		form := e.evidenceConfirmation(p, map[string]string{"uncategorized_text": "winning_evidence"})
		_, bob := e.signedInStore("bob@example.com")
		with := func(change func(url.Values)) url.Values {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			change(f)
			return f
		}
		for _, path := range []string{e.path(p) + "/dispute/review", e.path(p) + "/dispute/evidence"} {
			for _, tt := range []struct {
				what   string
				form   url.Values
				header http.Header
			}{
				{"no form token", with(func(f url.Values) { f.Del("form_token") }), http.Header{"Sec-Fetch-Site": {"same-origin"}}},
				{"another session's token", with(func(f url.Values) { f.Set("form_token", e.get("/dashboard/", bob).formToken(t)) }), http.Header{"Sec-Fetch-Site": {"same-origin"}}},
				{"cross-site", form, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
				{"another site's Origin", form, http.Header{"Origin": {"https://evil.example"}}},
			} {
				if pg := e.do(http.MethodPost, path, tt.form, tt.header, e.ann); pg.status != http.StatusForbidden || strings.Contains(pg.body, "winning_evidence") {
					t.Errorf("POST %s with %s = %d; want 403", path, tt.what, pg.status)
				}
			}
			wantRedirectToSignIn(t, "POST "+path+" signed out", e.post(path, form))
		}
		if got := e.dispute(p); got.SubmittedAt != nil {
			t.Fatalf("a refused post sent evidence: %+v", got)
		}
		// The same confirmation, sent properly, sends it.
		e.evidenceSent(p, e.sendEvidence(p, form))
	})
}

// The store's home lists the mode's open disputes under Needs attention,
// the nearest deadline first, each with its amount, reason, status,
// deadline and time left, and a link to its payment; one answered stays
// until it is decided; closed ones, another mode's and another store's do
// not show. With none, it says nothing needs attention.
func TestStoreHomeNeedsAttention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		home := "/dashboard/stores/" + e.m.ID + "/test/"
		if pg := e.get(home, e.ann); pg.status != http.StatusOK || !strings.Contains(pg.body, "Nothing needs your attention in test mode: no dispute is open") ||
			!strings.Contains(pg.body, `<h2 id="needs-attention-title">Needs attention</h2>`) {
			t.Fatalf("the home without disputes = %d: %s", pg.status, pg.body)
		}
		bob := &refundEnv{env: e.env}
		bob.m, bob.secret, bob.ann = e.storeWithKey("bob@example.com")
		bobs, _ := bob.disputed("4000000000000259")

		first, d1 := e.disputed("4000000000000259")
		e.clock.Advance(time.Hour)
		_, d2 := e.disputed("4000000000002685")
		e.clock.Advance(time.Hour)
		third, d3 := e.disputed("4000000000001976")
		e.clock.Advance(time.Hour)
		won, _ := e.disputed("4000000000000259")
		e.ann = e.signIn("ann@example.com") // hours later
		e.evidenceSent(won, e.sendEvidence(won, e.evidenceConfirmation(won, map[string]string{"uncategorized_text": "winning_evidence"})))
		e.clock.Advance(checkout.DisputeDecisionDelay)
		e.runPaymentsJob()
		if got := e.dispute(won); got.Status != checkout.DisputeWon {
			t.Fatalf("the dispute answered with winning evidence = %s; want won", got.Status)
		}
		e.evidenceSent(third, e.sendEvidence(third, e.evidenceConfirmation(third, map[string]string{"uncategorized_text": "losing_evidence"})))

		e.clock.Set(d1.EvidenceDueBy.Add(-(6*24*time.Hour + 20*time.Hour + 30*time.Minute)))
		pg := e.get(home, e.ann)
		if pg.status != http.StatusOK {
			t.Fatalf("the home = %d: %s", pg.status, pg.body)
		}
		wantIn(t, "the home", pg.body, "Open disputes of test mode, the nearest deadline first",
			`<tr id="dispute-`+d1.ID+`">`, `<tr id="dispute-`+d2.ID+`">`, `<tr id="dispute-`+d3.ID+`">`,
			`<a href="/dashboard/stores/`+e.m.ID+`/test/payments/`+first.ID+`#dispute"><code class="wrap">`+first.ID+`</code></a>`,
			utc(d1.EvidenceDueBy)+`</time><br><span class="badge warn time-left">6 days 20 hours left</span>`,
			`<td class="num">$30.00</td>`, "<td>Fraudulent</td>", "<td>Product not received</td>", "<td>General</td>",
			`<span class="badge bad">needs_response</span>`, `<span class="badge warn">under_review</span>`,
			`<span class="hint">Evidence sent: decided a moment later</span>`)
		for _, id := range []string{won.ID, bobs.ID, "Nothing needs your attention"} {
			if strings.Contains(pg.body, id) {
				t.Errorf("the home shows %s: closed, or another store's", id)
			}
		}
		i1, i2, i3 := strings.Index(pg.body, d1.ID), strings.Index(pg.body, d2.ID), strings.Index(pg.body, d3.ID)
		if !(i1 < i2 && i2 < i3) {
			t.Errorf("the home lists the disputes at %d, %d, %d; want the nearest deadline first", i1, i2, i3)
		}
		if pg := e.get("/dashboard/stores/"+e.m.ID+"/live/", e.ann); !strings.Contains(pg.body, "Nothing needs your attention in live mode") || strings.Contains(pg.body, d1.ID) {
			t.Error("the live home lists test disputes")
		}
		if pg := e.get("/dashboard/stores/"+bob.m.ID+"/test/", e.signIn("bob@example.com")); !strings.Contains(pg.body, `<tr id="dispute-`) || strings.Contains(pg.body, d1.ID) {
			t.Error("bob's home does not list his dispute alone")
		}

		// All closed: nothing needs attention.
		e.clock.Set(d2.EvidenceDueBy)
		e.runPaymentsJob()
		e.ann = e.signIn("ann@example.com") // days later
		if pg := e.get(home, e.ann); !strings.Contains(pg.body, "Nothing needs your attention") || strings.Contains(pg.body, `<tr id="dispute-`) {
			t.Errorf("the home with every dispute closed: %s", pg.body)
		}
	})
}

// Needs attention shows the 20 nearest deadlines (service.MaxOpenDisputes)
// and, when there may be more, links to every disputed payment.
func TestStoreHomeNeedsAttentionMore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newRefundEnv(t, db)
		for range service.MaxOpenDisputes + 1 {
			e.paidByCard("4000000000000259")
		}
		e.clock.Advance(checkout.DisputeDelay)
		e.runPaymentsJob()
		pg := e.get("/dashboard/stores/"+e.m.ID+"/test/", e.ann)
		if n := strings.Count(pg.body, `<tr id="dispute-`); n != service.MaxOpenDisputes {
			t.Errorf("Needs attention lists %d disputes; want %d", n, service.MaxOpenDisputes)
		}
		wantIn(t, "the home with more open disputes than it lists", pg.body, "The 20 nearest deadlines are shown;",
			`<a href="/dashboard/stores/`+e.m.ID+`/test/payments?show=disputed">every disputed payment</a>`)
		if list := e.get("/dashboard/stores/"+e.m.ID+"/test/payments?show=disputed", e.ann); strings.Count(list.body, ">disputed<") != service.MaxOpenDisputes+1 {
			t.Errorf("Payments filtered on disputed lists %d; want all %d", strings.Count(list.body, ">disputed<"), service.MaxOpenDisputes+1)
		}
	})
}
