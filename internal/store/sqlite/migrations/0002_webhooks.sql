-- Webhook endpoints: where a store's events of one mode are sent.
CREATE TABLE endpoints (
	id         TEXT PRIMARY KEY,
	store_id   TEXT NOT NULL REFERENCES stores (id),
	mode       TEXT NOT NULL CHECK (mode IN ('test', 'live')),
	url        TEXT NOT NULL,
	events     TEXT NOT NULL, -- comma-separated types, or * for all
	enabled    INTEGER NOT NULL,
	secret     TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX endpoints_store ON endpoints (store_id, mode);

-- Deliveries: one event on its way to one endpoint. This table is the
-- dispatcher's queue: a row is due when pending, next_attempt_at has come and
-- no lease runs (lease_until in the past). Times in Unix milliseconds.
CREATE TABLE deliveries (
	seq              INTEGER PRIMARY KEY AUTOINCREMENT,
	id               TEXT NOT NULL UNIQUE,
	event_id         TEXT NOT NULL,
	endpoint_id      TEXT NOT NULL,
	store_id         TEXT NOT NULL,
	mode             TEXT NOT NULL,
	status           TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
	attempts         INTEGER NOT NULL,
	next_attempt_at  INTEGER NOT NULL,
	lease_until      INTEGER NOT NULL DEFAULT 0,
	lease_owner      TEXT NOT NULL DEFAULT '',
	last_status_code INTEGER NOT NULL DEFAULT 0,
	last_error       TEXT NOT NULL DEFAULT '',
	created_at       INTEGER NOT NULL,
	updated_at       INTEGER NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_leased ON deliveries (lease_until) WHERE status = 'pending';
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, seq);
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_created ON deliveries (created_at);

-- Every attempt of every delivery. Times in Unix milliseconds.
CREATE TABLE delivery_attempts (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	delivery_id   TEXT NOT NULL,
	number        INTEGER NOT NULL,
	started_at    INTEGER NOT NULL,
	duration_us   INTEGER NOT NULL,
	status_code   INTEGER NOT NULL,
	error         TEXT NOT NULL,
	response_body TEXT NOT NULL
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, seq);
