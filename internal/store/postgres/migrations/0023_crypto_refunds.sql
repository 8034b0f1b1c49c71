-- Crypto refunds (docs/payments.md, Refunds): checkoutd holds no private
-- key, so the merchant pays a crypto refund, to an address the buyer gives
-- through the refund's link. details holds how (JSON of
-- checkout.CryptoRefund: the coin, network, rate, the buyer's address, the
-- amount in base units, the payout's transaction), '' for other refunds;
-- link_token the link's token, found by the refund page; payout_address
-- "<coin>:<address>" once the buyer gave one, found by the scan of a live
-- node that sees a transaction paying it.
ALTER TABLE refunds ADD COLUMN details TEXT NOT NULL DEFAULT '';
ALTER TABLE refunds ADD COLUMN link_token TEXT;
ALTER TABLE refunds ADD COLUMN payout_address TEXT;
CREATE UNIQUE INDEX refunds_link_token ON refunds (link_token) WHERE link_token IS NOT NULL;
CREATE INDEX refunds_payout_address ON refunds (payout_address) WHERE payout_address IS NOT NULL;
