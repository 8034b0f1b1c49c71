-- The dashboard's Payments page (docs/dashboard.md): a store's payments of
-- one mode, newest first by keyset (created_at_ms, id), all of them, of one
-- status, or only those to refund. Each index starts with the scope and ends
-- with the list's order, so a page, the first or the thousandth, is read
-- straight off it and the query stops at the limit, as for the other lists
-- (migration 0011). payments_list replaces payments_store, which lacked the
-- id that breaks ties within a millisecond and that no query read.
--
-- refund_due is 1 for a failed payment whose money was, or may yet be,
-- collected (checkout.Payment.RefundDue: late crypto, a second payment of a
-- session, an underpayment, a capture after failure). The store derives it
-- from the payment on every write, as captured, so the rule lives in Go; the
-- UPDATE below sets it on the payments written before, with the codes of
-- the rule today. Refund-due payments are few, and payments_refund_due holds
-- only them.
ALTER TABLE payments ADD COLUMN refund_due INTEGER NOT NULL DEFAULT 0 CHECK (refund_due IN (0, 1));
UPDATE payments SET refund_due = 1 WHERE status = 'failed'
	AND failure_code IN ('session_expired', 'session_completed', 'duplicate_payment', 'underpaid', 'captured_after_failure');
DROP INDEX payments_store;
CREATE INDEX payments_list ON payments (store_id, mode, created_at_ms, id);
CREATE INDEX payments_status ON payments (store_id, mode, status, created_at_ms, id);
CREATE INDEX payments_refund_due ON payments (store_id, mode, created_at_ms, id) WHERE refund_due = 1;
