-- What the dashboard's Webhooks section needs (issue 10).

-- An endpoint's description, and the signing secret a roll with overlap
-- replaced: it signs beside the current one until
-- previous_secret_expires_at (Unix seconds; '' and 0 when there is none).
ALTER TABLE endpoints ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE endpoints ADD COLUMN previous_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE endpoints ADD COLUMN previous_secret_expires_at BIGINT NOT NULL DEFAULT 0;

-- The event's type on each delivery (a copy: an event never changes), so
-- that the delivery list filters by type through an index of its own
-- instead of reading events. resent_as is the id of the newest delivery a
-- resend made of this one: Retry all failed skips a delivery that has one,
-- so it never resends a delivery twice.
ALTER TABLE deliveries ADD COLUMN event_type TEXT NOT NULL DEFAULT '';
ALTER TABLE deliveries ADD COLUMN resent_as TEXT NOT NULL DEFAULT '';
UPDATE deliveries SET event_type = COALESCE((SELECT e.type FROM events e WHERE e.id = deliveries.event_id), '');

-- The endpoint of each attempt (a copy of its delivery's), so that an
-- endpoint's last success and last failure are one index probe each.
ALTER TABLE delivery_attempts ADD COLUMN endpoint_id TEXT NOT NULL DEFAULT '';
UPDATE delivery_attempts SET endpoint_id = COALESCE((SELECT d.endpoint_id FROM deliveries d WHERE d.id = delivery_attempts.delivery_id), '');

-- The delivery list, newest first (created_at_ms, id), of a store and mode
-- or of one endpoint, unfiltered or by status or by event type: each an
-- index that both filters and orders, so a page reads only its own rows, at
-- any depth. (A filter by event id reads deliveries_event: an event has a
-- delivery per endpoint.)
CREATE INDEX deliveries_scope_created ON deliveries (store_id, mode, created_at_ms, id);
CREATE INDEX deliveries_scope_status ON deliveries (store_id, mode, status, created_at_ms, id);
CREATE INDEX deliveries_scope_type ON deliveries (store_id, mode, event_type, created_at_ms, id);
CREATE INDEX deliveries_endpoint_created ON deliveries (endpoint_id, created_at_ms, id);
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, created_at_ms, id);
CREATE INDEX deliveries_endpoint_type ON deliveries (endpoint_id, event_type, created_at_ms, id);
-- An endpoint's health: deliveries finished in a window (updated_at_ms is
-- when a finished delivery finished) ...
CREATE INDEX deliveries_endpoint_finished ON deliveries (endpoint_id, status, updated_at_ms) WHERE status IN ('succeeded', 'failed');
-- ... and its newest successful and failed attempts.
CREATE INDEX delivery_attempts_endpoint_ok ON delivery_attempts (endpoint_id, started_at_ms) WHERE error = '';
CREATE INDEX delivery_attempts_endpoint_failed ON delivery_attempts (endpoint_id, started_at_ms) WHERE error <> '';
-- Retry all failed: an endpoint's failed deliveries not resent yet, oldest
-- first.
CREATE INDEX deliveries_endpoint_retryable ON deliveries (endpoint_id, created_at_ms, id) WHERE status = 'failed' AND resent_as = '';
