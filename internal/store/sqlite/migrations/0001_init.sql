-- Stores: the merchants sessions collect for.
CREATE TABLE stores (
	id                   TEXT PRIMARY KEY,
	name                 TEXT NOT NULL,
	currency             TEXT NOT NULL,
	website              TEXT NOT NULL,
	statement_descriptor TEXT NOT NULL,
	created_at           INTEGER NOT NULL
);

-- API keys: only the SHA-256 of the secret is kept.
CREATE TABLE api_keys (
	id          TEXT PRIMARY KEY,
	store_id    TEXT NOT NULL REFERENCES stores (id),
	mode        TEXT NOT NULL CHECK (mode IN ('test', 'live')),
	type        TEXT NOT NULL CHECK (type IN ('bearer', 'hmac')),
	permissions TEXT NOT NULL,
	secret_hash TEXT NOT NULL UNIQUE,
	secret_hint TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	revoked_at  INTEGER
);
CREATE INDEX api_keys_store ON api_keys (store_id);

-- Checkout sessions. items and metadata are JSON text; times are Unix seconds.
CREATE TABLE sessions (
	id                  TEXT PRIMARY KEY,
	store_id            TEXT NOT NULL REFERENCES stores (id),
	mode                TEXT NOT NULL CHECK (mode IN ('test', 'live')),
	status              TEXT NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
	title               TEXT NOT NULL,
	description         TEXT,
	currency            TEXT NOT NULL,
	amount              INTEGER NOT NULL,
	discount_amount     INTEGER NOT NULL,
	tax_amount          INTEGER NOT NULL,
	total_amount        INTEGER NOT NULL,
	items               TEXT NOT NULL,
	customer_email      TEXT,
	customer_name       TEXT,
	metadata            TEXT NOT NULL,
	return_url          TEXT,
	cancel_url          TEXT,
	payment_id          TEXT,
	payment_in_progress INTEGER NOT NULL DEFAULT 0,
	created_at          INTEGER NOT NULL,
	expires_at          INTEGER NOT NULL,
	completed_at        INTEGER
);
CREATE INDEX sessions_open_expiry ON sessions (expires_at) WHERE status = 'open';

-- Events: the transactional outbox. seq orders them.
CREATE TABLE events (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	id         TEXT NOT NULL UNIQUE,
	store_id   TEXT NOT NULL,
	mode       TEXT NOT NULL,
	type       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	data       TEXT NOT NULL
);
CREATE INDEX events_store ON events (store_id, mode, seq);
CREATE INDEX events_created ON events (created_at);

-- Saved outcomes of create requests sent with an Idempotency-Key.
CREATE TABLE idempotency_keys (
	store_id     TEXT NOT NULL,
	mode         TEXT NOT NULL,
	key          TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	status_code  INTEGER NOT NULL,
	body         TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (store_id, mode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Request logs of authenticated API requests; created_at in Unix milliseconds.
CREATE TABLE request_logs (
	request_id    TEXT PRIMARY KEY,
	store_id      TEXT NOT NULL,
	mode          TEXT NOT NULL,
	api_key_id    TEXT NOT NULL,
	method        TEXT NOT NULL,
	path          TEXT NOT NULL,
	status        INTEGER NOT NULL,
	duration_us   INTEGER NOT NULL,
	request_body  TEXT NOT NULL,
	response_body TEXT NOT NULL,
	created_at    INTEGER NOT NULL
);
CREATE INDEX request_logs_store ON request_logs (store_id, mode, created_at);
CREATE INDEX request_logs_created ON request_logs (created_at);
