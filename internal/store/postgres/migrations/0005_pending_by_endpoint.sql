-- The pending deliveries of each endpoint in the order they are due: the
-- claim ranks them per endpoint and counts each endpoint's leases. Without
-- it the count read every delivery ever made (30 days of them), at every
-- claim.
CREATE INDEX deliveries_pending_endpoint ON deliveries (endpoint_id, next_attempt_at, seq) WHERE status = 'pending';
