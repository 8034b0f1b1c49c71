-- The store's home (docs/dashboard.md, Home): a range of days' gross
-- volume, refunds, lost disputes, payments and sessions. Each figure is
-- dated by when its money moved (a payment when it succeeded, a refund when
-- it succeeded, a dispute when it was lost, a session when it was created
-- or paid), so a day that has ended never changes again: home_days keeps
-- each ended day's figures once the home has counted them (a row per store,
-- mode, currency and UTC day, zeros included), and a range of a month reads
-- thirty rows however many payments it holds. The days not yet kept, and
-- the day under way, are counted off the indexes below, each of which holds
-- the figure's scope and time first and what it sums after, so the count
-- reads the day's entries and nothing else. Nothing is written on the
-- paths that take payments: the figures are kept from the first read.
CREATE TABLE home_days (
	store_id         TEXT NOT NULL,
	mode             TEXT NOT NULL,
	currency         TEXT NOT NULL,
	day              BIGINT NOT NULL, -- Unix time / 86400: the UTC day
	gross            BIGINT NOT NULL,
	payments         BIGINT NOT NULL,
	refunded         BIGINT NOT NULL,
	disputes_lost    BIGINT NOT NULL,
	sessions_created BIGINT NOT NULL,
	sessions_paid    BIGINT NOT NULL,
	PRIMARY KEY (store_id, mode, currency, day)
);
CREATE INDEX payments_succeeded ON payments (store_id, mode, succeeded_at, currency, amount) WHERE captured = 1;
CREATE INDEX refunds_succeeded ON refunds (store_id, mode, updated_at_ms, currency, amount, payment_id) WHERE status = 'succeeded';
CREATE INDEX disputes_lost ON disputes (store_id, mode, closed_at_ms, currency, amount, fee) WHERE status = 'lost';
CREATE INDEX sessions_completed ON sessions (store_id, mode, completed_at) WHERE completed_at IS NOT NULL;
-- The sessions list's index (the Sessions page, migration 0026, reads it
-- too).
CREATE INDEX sessions_list ON sessions (store_id, mode, created_at, id);
-- What needs attention on the home: the crypto refunds with the buyer's
-- address, waiting for the merchant's payout or confirming it (few: they
-- are paid within days).
CREATE INDEX refunds_payout_pending ON refunds (store_id, mode, created_at_ms, id) WHERE status = 'pending' AND payout_address IS NOT NULL;
