-- Times are Unix seconds in columns named *_at, and Unix milliseconds in
-- columns named *_at_ms: the queue's schedules, payments' timeline and
-- request logs need sub-second order; everything else is whole seconds.
ALTER TABLE deliveries RENAME COLUMN next_attempt_at TO next_attempt_at_ms;
ALTER TABLE deliveries RENAME COLUMN lease_until TO lease_until_ms;
ALTER TABLE deliveries RENAME COLUMN created_at TO created_at_ms;
ALTER TABLE deliveries RENAME COLUMN updated_at TO updated_at_ms;
ALTER TABLE delivery_attempts RENAME COLUMN started_at TO started_at_ms;
ALTER TABLE payments RENAME COLUMN due_at TO due_at_ms;
ALTER TABLE payments RENAME COLUMN created_at TO created_at_ms;
ALTER TABLE payments RENAME COLUMN updated_at TO updated_at_ms;
ALTER TABLE crypto_quotes RENAME COLUMN created_at TO created_at_ms;
ALTER TABLE request_logs RENAME COLUMN created_at TO created_at_ms;
