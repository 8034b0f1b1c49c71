-- Per-store pricing: JSON of checkout.Pricing, '' for the defaults.
ALTER TABLE stores ADD COLUMN pricing TEXT NOT NULL DEFAULT '';

-- The payment that holds a session while it is on its way (a card charge in
-- flight, crypto awaiting confirmations, a skins trade in its hold).
ALTER TABLE sessions ADD COLUMN active_payment_id TEXT;

-- Payments: every attempt to pay a session, failed ones included. Kept for
-- good: they are the merchant's financial record. Times in Unix milliseconds.
CREATE TABLE payments (
	id                 TEXT PRIMARY KEY,
	session_id         TEXT NOT NULL REFERENCES sessions (id),
	store_id           TEXT NOT NULL,
	mode               TEXT NOT NULL CHECK (mode IN ('test', 'live')),
	method             TEXT NOT NULL CHECK (method IN ('card', 'crypto', 'skins')),
	status             TEXT NOT NULL CHECK (status IN ('processing', 'succeeded', 'failed',
	                       'partially_refunded', 'refunded', 'disputed', 'dispute_lost')),
	-- 1 once the payment has succeeded, whatever followed: the unique index
	-- below lets one payment, and only one, capture a session.
	captured           BIGINT NOT NULL CHECK (captured IN (0, 1)),
	amount             BIGINT NOT NULL,
	amount_refunded    BIGINT NOT NULL,
	fee                BIGINT NOT NULL,
	currency           TEXT NOT NULL,
	card_brand         TEXT,
	card_last4         TEXT,
	buyer_country      TEXT,
	customer_name      TEXT,
	receipt_email      TEXT,
	failure_code       TEXT,
	failure_message    TEXT,
	details            TEXT NOT NULL, -- JSON: the crypto or skins details
	dispute_on_success BIGINT NOT NULL,
	due_at             BIGINT,          -- when a job next looks at it
	created_at         BIGINT NOT NULL,
	updated_at         BIGINT NOT NULL,
	succeeded_at       BIGINT
);
CREATE INDEX payments_session ON payments (session_id, created_at);
CREATE INDEX payments_store ON payments (store_id, mode, created_at);
CREATE INDEX payments_due ON payments (due_at) WHERE due_at IS NOT NULL;
CREATE UNIQUE INDEX payments_one_captured ON payments (session_id) WHERE captured = 1;

-- The address and amount a session was quoted for each coin, so that every
-- view of the page and every node shows the same ones.
CREATE TABLE crypto_quotes (
	session_id  TEXT NOT NULL REFERENCES sessions (id),
	coin        TEXT NOT NULL,
	address     TEXT NOT NULL,
	amount_base TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	PRIMARY KEY (session_id, coin)
);
