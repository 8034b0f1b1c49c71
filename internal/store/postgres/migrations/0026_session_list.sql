-- The dashboard's Sessions page (docs/dashboard.md): a store's checkout
-- sessions of one mode, newest first by keyset (created_at, id), all of
-- them or of one status, in a date range, or found by a customer's email or
-- a metadata key's value. As for the other lists (migrations 0011, 0016),
-- each index starts with the scope and ends with the list's order, so a
-- page, the first or the thousandth, is read straight off it and the query
-- stops at the limit. A session's id is its primary key, and a payment's
-- session is found through the payment's.
-- sessions_list (store_id, mode, created_at, id), the list's own order, came
-- with the store's home (migration 0024).
CREATE INDEX sessions_status ON sessions (store_id, mode, status, created_at, id);
-- Emails are matched whatever the case of their ASCII letters, as on
-- SQLite, whose lower() changes those alone (so does PostgreSQL's under the
-- C collation): the query writes the expression as the index does.
CREATE INDEX sessions_email ON sessions (store_id, mode, lower(customer_email COLLATE "C"), created_at, id);

-- A session's metadata, one row per key, written with the session in the
-- same transaction (it never changes): the sessions whose key has a value
-- are read off the primary key's index (session_metadata_pkey) in the
-- list's order, as SQLite reads its table WITHOUT ROWID. metadata stays the
-- session's JSON, as sent; this table only finds sessions. No foreign key,
-- whose check (a trigger per row) would cost a read of the session per key:
-- the rows are written with their session and never without it.
CREATE TABLE session_metadata (
	store_id   TEXT NOT NULL,
	mode       TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	session_id TEXT NOT NULL,
	PRIMARY KEY (store_id, mode, key, value, created_at, session_id)
);
INSERT INTO session_metadata (store_id, mode, key, value, created_at, session_id)
	SELECT s.store_id, s.mode, kv.key, kv.value, s.created_at, s.id
	FROM sessions s CROSS JOIN LATERAL jsonb_each_text(CASE WHEN jsonb_typeof(s.metadata::jsonb) = 'object'
		THEN s.metadata::jsonb ELSE '{}'::jsonb END) kv;

-- A session's page lists the events about it and its payments: object_id
-- is the id of the event's data.object (a session's or a payment's id; ''
-- for webhook.test), written with the event.
ALTER TABLE events ADD COLUMN object_id TEXT NOT NULL DEFAULT '';
UPDATE events SET object_id = COALESCE(data::jsonb ->> 'id', '') WHERE jsonb_typeof(data::jsonb) = 'object';
CREATE INDEX events_object ON events (object_id, created_at, seq);
