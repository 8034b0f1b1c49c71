-- Where the scan of each live coin's node resumes (issue 12;
-- internal/livecrypto): the cursor the node's adapter returned with the last
-- scan whose transactions were all recorded. A process that starts again,
-- or another node, resumes from it, so a node or a checkoutd that was down
-- loses no payment. A cursor a little behind only makes the next scan report
-- again what is already recorded.
CREATE TABLE chain_cursors (
	coin          TEXT PRIMARY KEY,
	cursor        TEXT NOT NULL,
	updated_at_ms BIGINT NOT NULL
);
