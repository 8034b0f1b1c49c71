-- The store's home counts the day under way in hours (docs/dashboard.md,
-- Home): home_hours keeps each ended hour's figures, as home_days keeps each
-- ended day's, so that a view counts at most the hours not settled yet off
-- the indexes (a couple of hours' payments, however busy the store) and
-- reads the rest as kept rows. An ended day is kept from its hours. The
-- home job keeps the hours and days as they end, and a view keeps what the
-- job has not yet.
CREATE TABLE home_hours (
	store_id         TEXT NOT NULL,
	mode             TEXT NOT NULL,
	currency         TEXT NOT NULL,
	hour             INTEGER NOT NULL, -- Unix time / 3600: the UTC hour
	gross            INTEGER NOT NULL,
	payments         INTEGER NOT NULL,
	refunded         INTEGER NOT NULL,
	disputes_lost    INTEGER NOT NULL,
	sessions_created INTEGER NOT NULL,
	sessions_paid    INTEGER NOT NULL,
	PRIMARY KEY (store_id, mode, currency, hour)
);
