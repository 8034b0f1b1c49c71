-- A session's payment hold is active_payment_id alone: payment_in_progress
-- repeated it and could disagree with it.
ALTER TABLE sessions DROP COLUMN payment_in_progress;
-- Only created sessions are saved for replay, and the API answers a replay
-- as it answered the first request (201): the HTTP status is the API's
-- business, not a stored fact.
ALTER TABLE idempotency_keys DROP COLUMN status_code;
