-- Listeners (issue 11; docs/webhooks.md, Local development): `checkoutd
-- listen` receives a store's test-mode events through an endpoint of kind
-- 'listener', so its deliveries sit in the deliveries table like any
-- other's and wait there while it is away. listener_name tells a store's
-- listeners apart (unique per store); connection is the id of the stream
-- now holding it ('' when none: a newer stream replaces an older one);
-- seen_at_ms is when it was last connected (Unix milliseconds), which
-- decides whether new events still reach it (24 hours).
ALTER TABLE endpoints ADD COLUMN kind TEXT NOT NULL DEFAULT 'https';
ALTER TABLE endpoints ADD COLUMN listener_name TEXT NOT NULL DEFAULT '';
ALTER TABLE endpoints ADD COLUMN connection TEXT NOT NULL DEFAULT '';
ALTER TABLE endpoints ADD COLUMN seen_at_ms INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX endpoints_listener ON endpoints (store_id, listener_name) WHERE kind = 'listener';
