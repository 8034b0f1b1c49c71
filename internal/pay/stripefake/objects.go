package stripefake

import "time"

// intent is a PaymentIntent.
type intent struct {
	id, clientSecret string
	amount           int64
	currency         string
	status           string
	metadata         map[string]string
	descriptorSuffix string
	created          time.Time
	// card is the test payment method of the last confirmation; charge
	// its charge, when the card network was asked.
	card      string
	charge    *charge
	lastError *apiError
	// canceledReason is the cancellation_reason, once canceled.
	canceledReason string
}

// charge is a PaymentIntent's charge.
type charge struct {
	id, intent string
	amount     int64
	currency   string
	status     string // succeeded or failed
	card       card
	metadata   map[string]string
	refunded   int64
	disputed   bool
	// disputeAt is when CardDispute's dispute opens; zero when none is due.
	disputeAt time.Time
	created   time.Time
}

// refund is a refund of a charge.
type refund struct {
	id, charge, intent string
	amount             int64
	currency           string
	status             string
	failureReason      string
	metadata           map[string]string
	created            time.Time
	// failAt is when a refund of CardRefundFail fails; zero when none is
	// due.
	failAt time.Time
}

// dispute is a dispute of a charge.
type dispute struct {
	id, charge, intent string
	amount             int64
	currency           string
	reason, status     string
	dueBy              time.Time
	fee                int64
	created            time.Time
}

func (c *charge) json() map[string]any {
	m := map[string]any{
		"id": c.id, "object": "charge", "amount": c.amount, "currency": c.currency,
		"status": c.status, "payment_intent": c.intent, "metadata": c.metadata,
		"amount_refunded": c.refunded, "refunded": c.refunded == c.amount, "disputed": c.disputed,
		"captured": c.status == "succeeded", "paid": c.status == "succeeded",
		"created": c.created.Unix(), "livemode": false,
		"payment_method_details": map[string]any{
			"type": "card",
			"card": map[string]any{"brand": c.card.brand, "last4": c.card.last4, "country": c.card.country},
		},
	}
	if c.card.declineCode != "" {
		m["failure_code"] = c.card.code
	}
	return m
}

// json renders the PaymentIntent; its latest charge is the charge object
// when expand, its id otherwise.
func (pi *intent) json(expand bool) map[string]any {
	m := map[string]any{
		"id": pi.id, "object": "payment_intent", "amount": pi.amount, "currency": pi.currency,
		"status": pi.status, "client_secret": pi.clientSecret, "metadata": pi.metadata,
		"payment_method_types": []string{"card"}, "created": pi.created.Unix(), "livemode": false,
		"capture_method": "automatic", "confirmation_method": "automatic",
		"latest_charge": nil, "last_payment_error": nil,
	}
	if pi.descriptorSuffix != "" {
		m["statement_descriptor_suffix"] = pi.descriptorSuffix
	}
	if pi.charge != nil {
		m["latest_charge"] = pi.charge.id
		if expand {
			m["latest_charge"] = pi.charge.json()
		}
	}
	if pi.lastError != nil {
		m["last_payment_error"] = pi.lastError
	}
	if pi.status == "requires_action" {
		m["next_action"] = map[string]any{"type": "use_stripe_sdk", "use_stripe_sdk": map[string]any{}}
	}
	if pi.canceledReason != "" {
		m["cancellation_reason"] = pi.canceledReason
	}
	return m
}

func (r *refund) json() map[string]any {
	m := map[string]any{
		"id": r.id, "object": "refund", "amount": r.amount, "currency": r.currency,
		"charge": r.charge, "payment_intent": r.intent, "status": r.status,
		"metadata": r.metadata, "created": r.created.Unix(),
	}
	if r.failureReason != "" {
		m["failure_reason"] = r.failureReason
	}
	return m
}

func (d *dispute) json() map[string]any {
	return map[string]any{
		"id": d.id, "object": "dispute", "amount": d.amount, "currency": d.currency,
		"charge": d.charge, "payment_intent": d.intent, "reason": d.reason, "status": d.status,
		"created": d.created.Unix(), "livemode": false, "is_charge_refundable": false,
		"metadata":         map[string]string{},
		"evidence_details": map[string]any{"due_by": d.dueBy.Unix(), "has_evidence": false, "past_due": false, "submission_count": 0},
		"balance_transactions": []map[string]any{{
			"id": "txn_" + d.id[3:], "object": "balance_transaction", "amount": -d.amount - d.fee,
			"fee": d.fee, "currency": d.currency, "type": "adjustment",
		}},
	}
}
