-- Dashboard accounts. email is normalised (trimmed, lower-cased) by the
-- service before it is stored or looked up; password_hash is an argon2id PHC
-- string. Times are Unix seconds.
CREATE TABLE accounts (
	id            TEXT PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	password_hash TEXT NOT NULL,
	created_at    BIGINT NOT NULL
);

-- Which accounts may open which stores in the dashboard.
CREATE TABLE memberships (
	account_id TEXT NOT NULL REFERENCES accounts (id),
	store_id   TEXT NOT NULL REFERENCES stores (id),
	created_at BIGINT NOT NULL,
	PRIMARY KEY (account_id, store_id)
);
CREATE INDEX memberships_store ON memberships (store_id);
