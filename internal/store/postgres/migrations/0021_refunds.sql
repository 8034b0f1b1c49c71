-- Refunds (docs/payments.md, Refunds): each gives back part or all of a
-- payment's money, through the payment method's processor. Kept for good,
-- as payments are: they are the merchant's financial record. Times in Unix
-- milliseconds.
--
-- A payment holds what its refunds under way (pending) are returning in
-- amount_refunding, so that refunds asked at once can never together
-- return more than it collected: each is checked, and held, under the
-- payment's lock (store.Tx.PaymentGetForUpdate).
ALTER TABLE payments ADD COLUMN amount_refunding BIGINT NOT NULL DEFAULT 0;

CREATE TABLE refunds (
	id                TEXT PRIMARY KEY,
	payment_id        TEXT NOT NULL REFERENCES payments (id),
	session_id        TEXT NOT NULL,
	store_id          TEXT NOT NULL,
	mode              TEXT NOT NULL CHECK (mode IN ('test', 'live')),
	amount            BIGINT NOT NULL CHECK (amount > 0),
	currency          TEXT NOT NULL,
	reason            TEXT NOT NULL, -- '' when none was given
	status            TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
	failure_code      TEXT,
	-- Who asked: an account (id and email), an API key (id) or the CLI
	-- (the operating system's user).
	requested_by_kind TEXT NOT NULL CHECK (requested_by_kind IN ('account', 'api_key', 'cli')),
	requested_by_id   TEXT NOT NULL,
	requested_by_name TEXT NOT NULL,
	due_at_ms         BIGINT, -- when the payments job next looks at it
	created_at_ms     BIGINT NOT NULL,
	updated_at_ms     BIGINT NOT NULL
);
CREATE INDEX refunds_payment ON refunds (payment_id, created_at_ms, id);
CREATE INDEX refunds_due ON refunds (due_at_ms) WHERE due_at_ms IS NOT NULL;
