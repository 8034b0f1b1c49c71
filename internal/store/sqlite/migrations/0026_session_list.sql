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
-- Emails are matched whatever the case of their ASCII letters, which alone
-- SQLite's lower() changes (PostgreSQL's under the C collation): the query
-- writes the expression as the index does.
CREATE INDEX sessions_email ON sessions (store_id, mode, lower(customer_email), created_at, id);

-- A session's metadata, one row per key, written with the session in the
-- same transaction (it never changes): the sessions whose key has a value
-- are read off the table's primary key in the list's order. metadata stays the
-- session's JSON, as sent; this table only finds sessions. WITHOUT ROWID,
-- the table is its one B-tree, a create's one insert per key (with a rowid
-- it would be two, the table's and an index's); no foreign key either, whose
-- check would cost a read of the session per key: the rows are written with
-- their session and never without it.
CREATE TABLE session_metadata (
	store_id   TEXT NOT NULL,
	mode       TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	session_id TEXT NOT NULL,
	PRIMARY KEY (store_id, mode, key, value, created_at, session_id)
) WITHOUT ROWID;
INSERT INTO session_metadata (store_id, mode, key, value, created_at, session_id)
	SELECT s.store_id, s.mode, kv.key, kv.value, s.created_at, s.id
	FROM sessions s, json_each(CASE WHEN json_type(s.metadata) = 'object' THEN s.metadata ELSE '{}' END) kv
	WHERE kv.type = 'text';

-- A session's page lists the events about it and its payments: object_id
-- is the id of the event's data.object (a session's or a payment's id; ''
-- for webhook.test), written with the event.
ALTER TABLE events ADD COLUMN object_id TEXT NOT NULL DEFAULT '';
UPDATE events SET object_id = COALESCE(json_extract(data, '$.id'), '') WHERE json_valid(data) AND json_type(data) = 'object';
CREATE INDEX events_object ON events (object_id, created_at, seq);
