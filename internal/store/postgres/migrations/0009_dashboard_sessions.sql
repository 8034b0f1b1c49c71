-- Dashboard sign-in sessions. id is the SHA-256 (hex) of the token in the
-- browser's cookie; the token itself is never stored. Times are Unix seconds.
CREATE TABLE dashboard_sessions (
	id           TEXT PRIMARY KEY,
	account_id   TEXT NOT NULL REFERENCES accounts (id),
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL,
	expires_at   BIGINT NOT NULL
);
CREATE INDEX dashboard_sessions_account ON dashboard_sessions (account_id);

-- One-time links that create the first account. hash is the SHA-256 (hex) of
-- the token in the link; used_at is set once, when the link is used.
CREATE TABLE setup_tokens (
	hash       TEXT PRIMARY KEY,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT
);
