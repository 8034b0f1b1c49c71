-- Disputes (docs/payments.md, Disputes): a buyer's bank challenges a
-- payment; the merchant answers with evidence; the card network decides.
-- Kept for good, as payments are. A payment is disputed once at most.
-- Times in Unix milliseconds, but evidence_due_by (whole seconds).
--
-- While a dispute is open, the payment holds what it takes back
-- (amount_disputed: what was left of the payment) and the card network's
-- fee (dispute_fee) out of its net; won, both come back; lost, both are
-- gone.
ALTER TABLE payments ADD COLUMN amount_disputed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE payments ADD COLUMN dispute_fee INTEGER NOT NULL DEFAULT 0;

CREATE TABLE disputes (
	id              TEXT PRIMARY KEY,
	payment_id      TEXT NOT NULL UNIQUE REFERENCES payments (id),
	session_id      TEXT NOT NULL,
	store_id        TEXT NOT NULL,
	mode            TEXT NOT NULL CHECK (mode IN ('test', 'live')),
	amount          INTEGER NOT NULL,
	currency        TEXT NOT NULL,
	reason          TEXT NOT NULL,
	status          TEXT NOT NULL CHECK (status IN ('needs_response', 'under_review', 'won', 'lost')),
	fee             INTEGER NOT NULL,
	evidence_due_by INTEGER NOT NULL,
	evidence        TEXT NOT NULL, -- JSON of checkout.DisputeEvidence
	submitted_at_ms INTEGER,
	submitted_by    TEXT NOT NULL, -- JSON of the checkout.Actor, '' before
	closed_at_ms    INTEGER,
	due_at_ms       INTEGER,          -- when the payments job next looks at it
	created_at_ms   INTEGER NOT NULL,
	updated_at_ms   INTEGER NOT NULL
);
CREATE INDEX disputes_due ON disputes (due_at_ms) WHERE due_at_ms IS NOT NULL;
-- The store's open disputes, the nearest deadline first: its home's "needs
-- attention".
CREATE INDEX disputes_open ON disputes (store_id, mode, evidence_due_by, id) WHERE status IN ('needs_response', 'under_review');

-- The payments disputed before disputes were kept (the test card 4000 0000
-- 0000 0259) get their dispute, answerable for the next 7 days, without a
-- fee (what the fee would have been was not known then).
UPDATE payments SET amount_disputed = amount - amount_refunded WHERE status = 'disputed';
INSERT INTO disputes (id, payment_id, session_id, store_id, mode, amount, currency, reason, status, fee, evidence_due_by,
	evidence, submitted_at_ms, submitted_by, closed_at_ms, due_at_ms, created_at_ms, updated_at_ms)
SELECT 'dp_' || lower(hex(randomblob(16))), id, session_id, store_id, mode, amount - amount_refunded, currency, 'fraudulent', 'needs_response', 0,
	updated_at_ms / 1000 + 604800, '{}', NULL, '', NULL, updated_at_ms + 604800000, updated_at_ms, updated_at_ms
FROM payments WHERE status = 'disputed';
