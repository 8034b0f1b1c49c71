-- Invitations to join a store's team (docs/dashboard.md, Team). token_hash
-- is the SHA-256 (hex) of the token in the link, which is never stored;
-- invited_by an account's id, or 'cli'. A link works once: accepted_at (and
-- accepted_by) is set when it is used, revoked_at when it is taken back.
-- Times are Unix seconds.
CREATE TABLE invitations (
	id          TEXT PRIMARY KEY,
	store_id    TEXT NOT NULL REFERENCES stores (id),
	email       TEXT NOT NULL,
	role        TEXT NOT NULL CHECK (role IN ('administrator', 'developer', 'support', 'viewer')),
	token_hash  TEXT NOT NULL UNIQUE,
	invited_by  TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL,
	accepted_at BIGINT,
	accepted_by TEXT,
	revoked_at  BIGINT
);
CREATE INDEX invitations_store ON invitations (store_id, created_at);
