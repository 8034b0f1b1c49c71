-- The file of the request logs (sqlite.Open keeps them apart from the
-- sessions; store.DB.SetRequestLogs says why). The table and its indexes
-- are those the main file had at its migration 0011, created_at in Unix
-- milliseconds; the indexes are explained in store.RequestLogList.
CREATE TABLE request_logs (
	request_id    TEXT PRIMARY KEY,
	store_id      TEXT NOT NULL,
	mode          TEXT NOT NULL,
	api_key_id    TEXT NOT NULL,
	method        TEXT NOT NULL,
	path          TEXT NOT NULL,
	status        INTEGER NOT NULL,
	duration_us   INTEGER NOT NULL,
	request_body  TEXT NOT NULL,
	response_body TEXT NOT NULL,
	created_at_ms INTEGER NOT NULL,
	route         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX request_logs_created ON request_logs (created_at_ms);
CREATE INDEX request_logs_list ON request_logs (store_id, mode, created_at_ms, request_id);
CREATE INDEX request_logs_class ON request_logs (store_id, mode, (status / 100), created_at_ms, request_id);
CREATE INDEX request_logs_method ON request_logs (store_id, mode, method, created_at_ms, request_id);
CREATE INDEX request_logs_route ON request_logs (store_id, mode, route, created_at_ms, request_id);
CREATE INDEX request_logs_key ON request_logs (store_id, mode, api_key_id, created_at_ms, request_id);
