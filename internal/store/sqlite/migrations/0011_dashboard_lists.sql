-- The dashboard's lists (docs/dashboard.md), newest first by keyset: each
-- index starts with store_id, mode and ends with the list's order, so a
-- page, the first or the thousandth, with or without its filter, reads its
-- rows straight off the index and stops after them, however many rows the
-- table holds and however rarely the filter matches. bench -lists measures
-- them at a million rows (bench/README.md).
--
-- Request logs: (created_at_ms, request_id) descending. request_logs_list
-- serves the unfiltered list and the date range; each filter has its own,
-- the filter's column right after the scope: the status class (the
-- expression status / 100, written the same way in the query), the method,
-- the route and the API key. request_logs_created stays for the purge.
--
-- route is the endpoint's pattern (/v1/stores/{storeId}/checkouts/{checkoutId}),
-- what the dashboard filters by instead of the path: an index of paths,
-- which hold random session ids, cost the SQLite writer of request logs
-- nearly two thirds of its speed. Logs written before are left with '' and
-- age out with the 30 days they are kept.
ALTER TABLE request_logs ADD COLUMN route TEXT NOT NULL DEFAULT '';
DROP INDEX request_logs_store;
CREATE INDEX request_logs_list ON request_logs (store_id, mode, created_at_ms, request_id);
CREATE INDEX request_logs_class ON request_logs (store_id, mode, (status / 100), created_at_ms, request_id);
CREATE INDEX request_logs_method ON request_logs (store_id, mode, method, created_at_ms, request_id);
CREATE INDEX request_logs_route ON request_logs (store_id, mode, route, created_at_ms, request_id);
CREATE INDEX request_logs_key ON request_logs (store_id, mode, api_key_id, created_at_ms, request_id);

-- Events: (created_at, seq) descending, so events of one second keep the
-- order they were stored in. events_list serves the unfiltered list and the
-- date range, events_type the type filter (with or without dates);
-- events_store, in seq order alone, served the list this one replaces.
-- events_created stays for the purge.
DROP INDEX events_store;
CREATE INDEX events_list ON events (store_id, mode, created_at, seq);
CREATE INDEX events_type ON events (store_id, mode, type, created_at, seq);

-- API keys: a name to tell them apart, and when each was last used (Unix
-- seconds; written at most once a minute per key, with the request logs:
-- "last used" is right to within a minute). NULL: never used.
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
