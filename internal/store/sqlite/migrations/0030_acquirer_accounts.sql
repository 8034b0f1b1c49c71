-- A store's account at a card acquirer (Stripe first; docs/payments.md),
-- as an Administrator entered it, one per store, mode and acquirer. Live
-- mode only for now: test mode's cards are the simulator's, but the mode is
-- in the key so that an acquirer's own test mode (Stripe's sk_test_ keys)
-- can come later beside the live keys.
--
-- The secret key and the webhook signing secret are sealed with the
-- operator's secrets key (package seal, as HMAC keys' secrets are), bound to
-- the row and the column, so a sealed value moved onto another row does not
-- open; checkoutd secrets rotate seals them again. They are never stored in
-- the clear nor shown again: the hints (their last four characters) are how
-- an Administrator recognises them. The publishable key is not a secret (the
-- buyer's browser gets it). set_by_* is who entered the account, as the
-- audit trail names actors; warnings are what the check on entry found wrong
-- without refusing the keys (a webhook endpoint of another API version), one
-- a line.
--
-- Stripe Connect (one platform's key acting for many merchants' accounts)
-- fits without a new table: the platform's secret key and its Connect
-- webhook secret are the operator's (configuration, sealed like these), and
-- a connected store's row keeps account_id (the connected account the calls
-- act for: pay.AcquirerCredentials.AccountID, Stripe's Stripe-Account
-- header) with its sealed columns and hints empty. A row with a sealed
-- secret key is a store's own account (account_id is then the key's own,
-- learned by the check); a row without one is a connected account.
CREATE TABLE acquirer_accounts (
	store_id              TEXT NOT NULL REFERENCES stores (id),
	mode                  TEXT NOT NULL,
	acquirer              TEXT NOT NULL, -- the connector's name: stripe
	account_id            TEXT NOT NULL, -- the acquirer's id of the account: acct_...
	publishable_key       TEXT NOT NULL,
	secret_key_sealed     TEXT NOT NULL,
	secret_key_hint       TEXT NOT NULL,
	webhook_secret_sealed TEXT NOT NULL,
	webhook_secret_hint   TEXT NOT NULL,
	warnings              TEXT NOT NULL DEFAULT '',
	set_by_kind           TEXT NOT NULL,
	set_by_id             TEXT NOT NULL,
	set_by_name           TEXT NOT NULL,
	set_at_ms             INTEGER NOT NULL,
	PRIMARY KEY (store_id, mode, acquirer)
);
