-- The status class, method and route filters share one index, as in the
-- main file's migration 0019 (which says why).
DROP INDEX request_logs_class;
DROP INDEX request_logs_method;
DROP INDEX request_logs_route;
CREATE INDEX request_logs_facet ON request_logs (store_id, mode, (method || ' ' || CAST(status / 100 AS TEXT) || ' ' || route), created_at_ms, request_id);
