package dashboard

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// Disputes (issue 28): a disputed payment's page shows its dispute (why,
// where it stands, what it holds, the deadline for evidence and how long is
// left) and, while it takes evidence, a form: the five texts the card
// network reads, and a note of the merchant's own that it never sees. The
// form posts to a confirmation that sends nothing (evidence is sent once
// and never changed, so it is read again first); its Back returns to the
// form as it was filled in, and its Confirm sends the evidence through
// service.SubmitDisputeEvidence (the one call for evidence, whatever the
// door), as the signed-in account.
// The form and the confirmation are posts, not a GET like the refund's:
// six texts of up to checkout.MaxEvidenceLen characters do not belong in a
// URL (its length, the logs and history that keep URLs).
//
// Evidence is sent once, so a second post of one confirmation (a double
// click, a form sent again) finds it sent: when what was sent is what it
// carries, by the same account, it is answered as the first post was;
// anything else is told the evidence was sent already and cannot change.
// The store's home lists the open disputes, the nearest deadline first,
// under Needs attention. Every member of the store may answer for now;
// roles come later in issue 28.

// maxEvidenceFormBytes bounds the evidence form's post and its
// confirmation's: six texts of checkout.MaxEvidenceLen characters of up to
// 4 bytes, each byte sent as %XX, and the rest of the form.
const maxEvidenceFormBytes = 6*checkout.MaxEvidenceLen*4*3 + maxFormBytes

// urgentDispute is how long before its deadline a dispute's time left is
// shown as urgent.
const urgentDispute = 48 * time.Hour

// evidenceField is a text of the evidence form.
type evidenceField struct {
	// Name is the form's and checkout.DisputeEvidence's JSON name.
	Name        string
	Label, Hint string
}

// evidenceFields are the texts the card network reads, in the form's
// order; noteField is the merchant's own.
var (
	evidenceFields = []evidenceField{
		{"product_description", "Product or service",
			"What the buyer paid for, and when and how it was delivered or made available to them."},
		{"customer_communication", "Communication with the buyer",
			"Emails or messages with the buyer that show they received it or agreed to the payment, pasted as text with their dates."},
		{"shipping_documentation", "Shipping or delivery",
			"The carrier, tracking number, delivery date and address; for something digital, when and from where the buyer used it."},
		{"refund_policy", "Refund policy",
			"Your refund or cancellation policy as the buyer saw it, and where they saw it (on your site, at checkout)."},
		{"uncategorized_text", "Other evidence",
			"Anything else that shows the payment is genuine: the buyer's earlier payments, an account they used, what they said."},
	}
	noteField = evidenceField{"note", "Your note",
		"Yours alone: kept with the dispute for you and the store's members, never sent to the card network."}
	allEvidenceFields = append(evidenceFields[:len(evidenceFields):len(evidenceFields)], noteField)
)

// disputeForm is the evidence form's values as typed (line breaks as \n),
// by field name, and its errors: by field, and under "" for the texts as a
// whole.
type disputeForm struct {
	Values map[string]string
	Errors map[string]string
}

// readDisputeForm reads the evidence form of a post. A browser sends a
// textarea's line breaks as \r\n; they are kept as \n, which is what a
// person typed and what the length counts (a line break is one character).
func readDisputeForm(r *http.Request) disputeForm {
	f := disputeForm{Values: map[string]string{}}
	for _, fd := range allEvidenceFields {
		v := strings.ReplaceAll(r.PostFormValue(fd.Name), "\r\n", "\n")
		f.Values[fd.Name] = strings.ReplaceAll(v, "\r", "\n")
	}
	return f
}

// evidence is the form's evidence as the service keeps it, each text
// trimmed (as SubmitEvidence trims it).
func (f disputeForm) evidence() checkout.DisputeEvidence {
	v := func(name string) string { return strings.TrimSpace(f.Values[name]) }
	return checkout.DisputeEvidence{ProductDescription: v("product_description"), CustomerCommunication: v("customer_communication"),
		ShippingDocumentation: v("shipping_documentation"), RefundPolicy: v("refund_policy"), UncategorizedText: v("uncategorized_text"),
		Note: v("note")}
}

// evidenceText is a text of evidence sent, with its field's label.
type evidenceText struct{ Label, Text string }

// evidenceTexts returns e's texts for the card network that are not
// empty, in the form's order, and its note.
func evidenceTexts(e checkout.DisputeEvidence) (texts []evidenceText, note string) {
	for i, t := range []string{e.ProductDescription, e.CustomerCommunication, e.ShippingDocumentation, e.RefundPolicy, e.UncategorizedText} {
		if t != "" {
			texts = append(texts, evidenceText{evidenceFields[i].Label, t})
		}
	}
	return texts, e.Note
}

// disputeReason names a dispute's reason for people, and says what the
// buyer's bank claims.
func disputeReason(r checkout.DisputeReason) (label, claim string) {
	switch r {
	case checkout.DisputeFraudulent:
		return "Fraudulent", "The cardholder says they did not make or allow this payment."
	case checkout.DisputeProductNotReceived:
		return "Product not received", "The buyer says they did not receive what they paid for."
	case checkout.DisputeDuplicate:
		return "Duplicate", "The buyer says they were charged more than once for one purchase."
	case checkout.DisputeGeneral:
		return "General", "The buyer's bank gave no more specific reason."
	}
	return string(r), ""
}

// disputeClass is the badge of a dispute's status.
func disputeClass(s checkout.DisputeStatus) string {
	switch s {
	case checkout.DisputeWon:
		return "good"
	case checkout.DisputeLost, checkout.DisputeNeedsResponse:
		return "bad"
	case checkout.DisputeUnderReview:
		return "warn"
	}
	return ""
}

// timeLeft says how long d is, to the minute, for a deadline: "6 days 23
// hours", "3 hours 5 minutes", "less than a minute"; "" when it is not
// positive.
func timeLeft(d time.Duration) string {
	n := func(k int64, unit string) string {
		s := strconv.FormatInt(k, 10) + " " + unit
		if k != 1 {
			s += "s"
		}
		return s
	}
	both := func(a int64, aUnit string, b int64, bUnit string) string {
		if b == 0 {
			return n(a, aUnit)
		}
		return n(a, aUnit) + " " + n(b, bUnit)
	}
	const day = 24 * time.Hour
	switch {
	case d <= 0:
		return ""
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return n(int64(d/time.Minute), "minute")
	case d < day:
		return both(int64(d/time.Hour), "hour", int64(d%time.Hour/time.Minute), "minute")
	}
	return both(int64(d/day), "day", int64(d%day/time.Hour), "hour")
}

// disputeRow is a dispute as the pages show it.
type disputeRow struct {
	*checkout.Dispute
	Amount, Fee string
	// ReasonLabel names the reason; Claim says what the buyer's bank
	// claims.
	ReasonLabel, Claim string
	// TimeLeft is how long is left to send evidence, "" once the deadline
	// has passed; Urgent whether it is under urgentDispute.
	TimeLeft string
	Urgent   bool
	// TakesEvidence is whether evidence can be sent now: the dispute is
	// open, has none yet, and its deadline has not passed. Overdue is
	// whether its deadline passed without evidence while it is not yet
	// closed (the payments job closes it, lost).
	TakesEvidence, Overdue bool
}

func newDisputeRow(d *checkout.Dispute, now time.Time) disputeRow {
	row := disputeRow{Dispute: d, Amount: checkout.FormatAmount(d.Amount, d.Currency), Fee: checkout.FormatAmount(d.Fee, d.Currency)}
	row.ReasonLabel, row.Claim = disputeReason(d.Reason)
	if !d.Status.Closed() && d.SubmittedAt == nil {
		left := d.EvidenceDueBy.Sub(now)
		row.TimeLeft, row.Urgent = timeLeft(left), left < urgentDispute
		row.TakesEvidence, row.Overdue = left > 0, left <= 0
	}
	return row
}

// Explain says where the dispute stands, in words.
func (d disputeRow) Explain() string {
	switch {
	case d.Status == checkout.DisputeWon:
		return "Won: the card network decided for you. The disputed amount and the fee held are given back."
	case d.Status == checkout.DisputeLost && d.SubmittedAt == nil:
		return "Lost: no evidence was sent by the deadline. The disputed amount and the fee are taken."
	case d.Status == checkout.DisputeLost:
		return "Lost: the card network decided against your evidence. The disputed amount and the fee are taken."
	case d.SubmittedAt != nil:
		return "Under review: the card network has your evidence, and it is decided a moment later."
	case d.Overdue:
		return "The deadline passed without evidence: the dispute is lost, and is closed as lost in a moment."
	case d.Status == checkout.DisputeUnderReview:
		return "Under review: the card network is looking at the buyer's claim. You may still send evidence before the deadline; without it, the dispute is lost at the deadline."
	}
	return "Needs your response: the buyer's bank disputes this payment. Send evidence before the deadline, or the dispute is lost."
}

// HeldWord says what became of the amount and the fee: held while the
// dispute is open, given back when won, taken when lost.
func (d disputeRow) HeldWord() string {
	switch d.Status {
	case checkout.DisputeWon:
		return "given back"
	case checkout.DisputeLost:
		return "taken"
	}
	return "held"
}

// disputeView is the Dispute part of a payment's page.
type disputeView struct {
	disputeRow
	// Texts and Note are the evidence sent, once it is.
	Texts []evidenceText
	Note  string
	// Form is the evidence form as typed, shown while the dispute takes
	// evidence; Refusal says why what was just confirmed was not sent.
	Form    disputeForm
	Refusal string
	// Sent is whether the page answers the evidence just sent, and it is
	// not yet decided.
	Sent bool
	// Acquirer names the card acquirer that decides the dispute of a live
	// card payment it took, where the merchant answers it; "" when
	// checkoutd takes the evidence.
	Acquirer string
}

func newDisputeView(d *checkout.Dispute, now time.Time, f disputeForm, refusal string, sent bool) *disputeView {
	v := &disputeView{disputeRow: newDisputeRow(d, now), Form: f, Refusal: refusal, Sent: sent && d.SubmittedAt != nil && !d.Status.Closed()}
	if d.SubmittedAt != nil {
		v.Texts, v.Note = evidenceTexts(d.Evidence)
	}
	return v
}

// Fields are the form's texts for the card network.
func (v *disputeView) Fields() []evidenceField { return evidenceFields }

// NoteField is the form's note.
func (v *disputeView) NoteField() evidenceField { return noteField }

type disputeConfirmView struct {
	Layout
	Row     paymentRow
	Dispute disputeRow
	// Texts and Note are the evidence as it will be sent; Form the form as
	// typed, sent again with Confirm or Back.
	Texts  []evidenceText
	Note   string
	Form   disputeForm
	Fields []evidenceField
	// Outcome is what test mode's card network will decide, "" in live
	// mode; Losing whether the evidence has checkout.LosingEvidence.
	Outcome checkout.DisputeStatus
	Losing  bool
}

// paymentDispute returns the payment of the request's path in the scope,
// and its dispute; a payment that is not the scope's, or has no dispute,
// is the 404 page.
func (d *Dashboard) paymentDispute(w http.ResponseWriter, r *http.Request, s *scope) (*checkout.Payment, *checkout.Dispute, bool) {
	p, err := d.svc.PaymentIn(r.Context(), s.checkoutScope(), r.PathValue("id"))
	if err != nil {
		d.failOrNotFound(w, r, s, err)
		return nil, nil, false
	}
	dp, err := d.svc.DisputeOfPayment(r.Context(), p.ID)
	if err != nil {
		d.fail(w, r, err)
		return nil, nil, false
	}
	if dp == nil {
		d.notFound(w, r, s.user)
		return nil, nil, false
	}
	return p, dp, true
}

// HandleDisputeReview serves POST .../payments/{id}/dispute/review: the
// evidence form's answer. Evidence SubmitEvidence would refuse (nothing but
// the note, a text too long or with control characters; a dispute that
// takes no evidence now) comes back as the payment's page with the form as
// typed and the reason beside its field; any other is the confirmation.
// Nothing is sent here. The confirmation's Back posts here too (back=1),
// and is answered with the form as it was filled in.
func (d *Dashboard) HandleDisputeReview() http.Handler {
	return d.storeActionUpTo(checkout.ActionAnswerDispute, maxEvidenceFormBytes, func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, dp, ok := d.paymentDispute(w, r, s)
		if !ok {
			return
		}
		f := readDisputeForm(r)
		if r.PostFormValue("back") != "" {
			d.renderPayment(w, r, s, http.StatusOK, p, paymentState{dispute: f})
			return
		}
		dry := *dp
		if err := dry.SubmitEvidence(f.evidence(), checkout.Actor{}, d.svc.Now()); err != nil {
			d.evidenceRefused(w, r, s, p, f, err)
			return
		}
		v := disputeConfirmView{Layout: s.layout("Send evidence for payment "+p.ID, sectionPayments), Row: newPaymentRow(p),
			Dispute: newDisputeRow(dp, d.svc.Now()), Form: f, Fields: allEvidenceFields}
		v.Texts, v.Note = evidenceTexts(dry.Evidence)
		if s.mode == checkout.ModeTest {
			v.Outcome = dry.Decision(dry.SubmittedAt.Add(checkout.DisputeDecisionDelay))
			for _, t := range v.Texts {
				v.Losing = v.Losing || strings.Contains(t.Text, checkout.LosingEvidence)
			}
		}
		d.render(w, r, http.StatusOK, "dispute-confirm", v)
	})
}

// HandleDisputeEvidence serves POST .../payments/{id}/dispute/evidence: the
// confirmation's Confirm. It sends the evidence through
// service.SubmitDisputeEvidence as the signed-in account and goes to the
// payment's page, which shows it sent. A second post of the same
// confirmation finds the evidence sent by the first: when it is the very
// evidence, sent by the same account, it goes to the same page; otherwise,
// as any refusal, it is the payment's page saying why nothing was sent.
func (d *Dashboard) HandleDisputeEvidence() http.Handler {
	return d.storeActionUpTo(checkout.ActionAnswerDispute, maxEvidenceFormBytes, func(w http.ResponseWriter, r *http.Request, s *scope) {
		p, dp, ok := d.paymentDispute(w, r, s)
		if !ok {
			return
		}
		f := readDisputeForm(r)
		by := checkout.Actor{Kind: checkout.ActorAccount, ID: s.account.ID, Name: s.account.Email}
		_, err := d.svc.SubmitDisputeEvidence(r.Context(), service.DisputeEvidenceRequest{
			Scope: s.checkoutScope(), DisputeID: dp.ID, Evidence: f.evidence(), By: by})
		if checkout.IsCode(err, checkout.EDisputeClosed) {
			if cur, gerr := d.svc.DisputeIn(r.Context(), s.checkoutScope(), dp.ID); gerr == nil && sentAlready(cur, f.evidence(), by) {
				err = nil // this confirmation, posted before: its evidence is sent
			}
		}
		if err != nil {
			d.evidenceRefused(w, r, s, p, f, err)
			return
		}
		http.Redirect(w, r, s.path("payments/"+p.ID)+"?evidence=sent#dispute", http.StatusSeeOther)
	})
}

// sentAlready reports whether d's evidence is e, sent by by.
func sentAlready(d *checkout.Dispute, e checkout.DisputeEvidence, by checkout.Actor) bool {
	return d.SubmittedAt != nil && d.SubmittedBy != nil && d.SubmittedBy.ID == by.ID && d.Evidence == e
}

// evidenceRefused answers evidence the service refuses with the payment's
// page: bad texts beside their fields (400), with the form as typed; a
// dispute that takes no evidence now (409) says why above it. Any other
// error is a failure.
func (d *Dashboard) evidenceRefused(w http.ResponseWriter, r *http.Request, s *scope, p *checkout.Payment, f disputeForm, err error) {
	ce, ok := err.(*checkout.Error)
	switch {
	case ok && ce.Code == checkout.EValidationFailed:
		f.Errors = evidenceErrors(ce)
		d.renderPayment(w, r, s, http.StatusBadRequest, p, paymentState{dispute: f})
	case ok && ce.Code == checkout.EDisputeClosed:
		// The service's status table is the API's, which has no disputes
		// yet: the dashboard says 409 Conflict itself.
		d.renderPayment(w, r, s, http.StatusConflict, p, paymentState{dispute: f, disputeRefusal: d.notOpenMessage(r, p, ce)})
	case ok && ce.Code == checkout.EDisputeNotFound:
		d.notFound(w, r, s.user)
	default:
		d.fail(w, r, err)
	}
}

// notOpenMessage says why evidence was not sent to a dispute that takes
// none now, from what the dispute is now.
func (d *Dashboard) notOpenMessage(r *http.Request, p *checkout.Payment, ce *checkout.Error) string {
	const nothing = "Nothing was sent: "
	dp, err := d.svc.DisputeOfPayment(r.Context(), p.ID)
	switch {
	case err != nil || dp == nil:
		return nothing + ce.Message
	case dp.SubmittedAt != nil:
		return nothing + "this dispute's evidence was sent already (below), and evidence cannot be changed or added to."
	case dp.Status.Closed():
		return nothing + "the dispute is closed, " + string(dp.Status) + "."
	}
	return nothing + "the deadline for evidence has passed."
}

// evidenceErrors places a refusal of evidence beside the fields, in the
// form's words; the rule that the card network needs one text at least
// goes under "", for the texts as a whole.
func evidenceErrors(ce *checkout.Error) map[string]string {
	errs := map[string]string{}
	vs := ce.Details
	if len(vs) == 0 {
		vs = []checkout.Violation{{Code: "", Param: ce.Param, Message: ce.Message}}
	}
	for _, v := range vs {
		if _, dup := errs[v.Param]; dup {
			continue
		}
		switch v.Code {
		case "required":
			errs[""] = "Give the card network some evidence: fill in one of these texts at least. The note alone is not evidence: it is never sent."
		case "invalid_characters":
			errs[v.Param] = "Remove the control characters (invisible ones other than line breaks and tabs, often pasted from another program)."
		default:
			errs[v.Param] = sentence(besideField(v.Param, v.Message))
		}
	}
	return errs
}

// groupThousands writes n with a comma between thousands: 20,000.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
