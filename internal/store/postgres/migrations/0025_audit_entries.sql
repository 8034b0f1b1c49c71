-- The audit trail (docs/dashboard.md, Security): who changed what in a
-- store, from where and when, written in the transaction of the change.
-- Never updated; deleted a year after it was made (AuditPurge). Times in
-- Unix milliseconds.
CREATE TABLE audit_entries (
	id             TEXT PRIMARY KEY,
	store_id       TEXT NOT NULL, -- '' for account-level actions (sign-in)
	-- Who: an account (id and email), an API key (id), the CLI (the
	-- operating system's user); actor_key is how the actor filter names
	-- them (checkout.Actor.Key).
	actor_kind     TEXT NOT NULL,
	actor_id       TEXT NOT NULL,
	actor_name     TEXT NOT NULL,
	actor_key      TEXT NOT NULL,
	action         TEXT NOT NULL,
	object_id      TEXT NOT NULL,
	client_address TEXT NOT NULL,
	user_agent     TEXT NOT NULL,
	created_at_ms  BIGINT NOT NULL
);
-- The Security page's list and its filters, each read off its index in
-- the list's order (TestAuditListPlans); the purge's by age.
CREATE INDEX audit_entries_list ON audit_entries (store_id, created_at_ms, id);
CREATE INDEX audit_entries_action ON audit_entries (store_id, action, created_at_ms, id);
CREATE INDEX audit_entries_actor ON audit_entries (store_id, actor_key, created_at_ms, id);
CREATE INDEX audit_entries_created ON audit_entries (created_at_ms);
