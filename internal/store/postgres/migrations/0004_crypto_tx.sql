-- The transaction that paid a crypto payment, in a column of its own so
-- that the database holds one payment per transaction and session: a network
-- that reports one transaction many times, at once or on several nodes,
-- records it once. (One transaction may pay several sessions' addresses, so
-- the hash alone is not unique.)
ALTER TABLE payments ADD COLUMN tx_hash TEXT;
-- Payments recorded before: the first of each transaction takes its hash;
-- a later record of the same transaction (which concurrent reports could
-- make) keeps none, and stays as recorded, failed, for the operator to see.
UPDATE payments SET tx_hash = details::jsonb -> 'crypto' ->> 'tx_hash'
WHERE method = 'crypto' AND NOT EXISTS (
	SELECT 1 FROM payments AS earlier
	WHERE earlier.method = 'crypto' AND earlier.session_id = payments.session_id
	  AND earlier.details::jsonb -> 'crypto' ->> 'tx_hash' = payments.details::jsonb -> 'crypto' ->> 'tx_hash'
	  AND (earlier.created_at < payments.created_at OR (earlier.created_at = payments.created_at AND earlier.id < payments.id)));
CREATE UNIQUE INDEX payments_session_tx ON payments (session_id, tx_hash) WHERE tx_hash IS NOT NULL;
