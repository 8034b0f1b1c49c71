-- Each write transaction's mark (store/failover.go): a random token the
-- transaction inserts beside its COMMIT. When the connection to a
-- PostgreSQL primary is lost during COMMIT (a failover), the store inserts
-- the same token itself on a new connection: a conflict says the
-- transaction committed, an insert that it did not (and now never can).
-- Kept an hour (CommitMarksKept), purged by the purge job. SQLite, on the
-- machine itself, never loses a COMMIT this way and writes none.
CREATE TABLE commit_marks (
	token         TEXT PRIMARY KEY,
	created_at_ms BIGINT NOT NULL
);
CREATE INDEX commit_marks_created ON commit_marks (created_at_ms);
