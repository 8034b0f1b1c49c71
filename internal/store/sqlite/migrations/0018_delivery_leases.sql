-- Leases in a table of their own (issue 13). A claim leased a delivery by
-- updating its row; the lease's columns were in an index (the count of each
-- endpoint's running leases, deliveries_pending_leases), so on PostgreSQL
-- every lease was a new version of the row with an entry in each of the
-- deliveries' indexes, which are a level deeper with 30 days of deliveries
-- kept: the claim's cost grew with the history. A lease is now a row here,
-- written when a delivery is claimed and deleted when its attempt is
-- recorded, so the table holds only the attempts in flight (and the leases
-- of crashed processes until they are claimed again or purged) and a claim
-- writes nothing into the deliveries' indexes.
--
-- A lease is running while until_ms is ahead of the claimer's clock; the
-- count of an endpoint's running leases is one range of
-- delivery_leases_endpoint. The deliveries' lease_until_ms and lease_owner
-- columns are left, unused and zero: dropping them would rewrite SQLite's
-- table, every delivery kept, at start.
CREATE TABLE delivery_leases (
	delivery_id TEXT PRIMARY KEY,
	endpoint_id TEXT NOT NULL,
	owner       TEXT NOT NULL,
	until_ms    INTEGER NOT NULL
);
CREATE INDEX delivery_leases_endpoint ON delivery_leases (endpoint_id, until_ms);
INSERT INTO delivery_leases (delivery_id, endpoint_id, owner, until_ms)
	SELECT id, endpoint_id, lease_owner, lease_until_ms FROM deliveries WHERE status = 'pending' AND lease_owner <> '';
DROP INDEX deliveries_pending_leases;
UPDATE deliveries SET lease_until_ms = 0, lease_owner = '' WHERE status = 'pending' AND lease_owner <> '';
