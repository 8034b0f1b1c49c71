-- The claim reads each endpoint's earliest due deliveries through
-- deliveries_pending_endpoint (endpoint_id, next_attempt_at_ms, seq) and
-- counts each endpoint's running leases through this index, one range each:
-- no read grows with the backlog due (issue 13). It holds only the leased
-- deliveries (a claim sets lease_owner, a record clears it): so few that the
-- count reads almost nothing, and PostgreSQL's planner cannot take it for the
-- read of the earliest due, which it does not order. The claim ranked every
-- due delivery through deliveries_due and counted leases through
-- deliveries_leased; nothing else reads them, and every delivery written
-- paid for both.
CREATE INDEX deliveries_pending_leases ON deliveries (endpoint_id, lease_until_ms) WHERE status = 'pending' AND lease_owner <> '';
DROP INDEX deliveries_due;
DROP INDEX deliveries_leased;
