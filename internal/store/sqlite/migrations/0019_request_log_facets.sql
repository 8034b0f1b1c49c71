-- The status class, method and route filters of the request logs' list
-- share one index, on a log's facet: its method, status class and route in
-- one text (store.RequestLogList says how the list uses it). An index
-- costs every log written; three fewer entries a log made a log about 30%
-- cheaper to write on PostgreSQL. The expression is the one the store's
-- queries write (store.requestLogFacet).
DROP INDEX request_logs_class;
DROP INDEX request_logs_method;
DROP INDEX request_logs_route;
CREATE INDEX request_logs_facet ON request_logs (store_id, mode, (method || ' ' || CAST(status / 100 AS TEXT) || ' ' || route), created_at_ms, request_id);
