-- Live crypto (issue 12; docs/crypto-keys.md): each store's extended public
-- key per coin, from which every live quote takes a fresh address. A key set
-- again (the same store, coin, network and key: the same id) resumes its
-- next_index, so no address is ever handed out twice; a replaced key stays,
-- inactive. One active key per store and coin.
CREATE TABLE crypto_keys (
	id          TEXT PRIMARY KEY,
	store_id    TEXT NOT NULL REFERENCES stores (id),
	coin        TEXT NOT NULL,
	network     TEXT NOT NULL,
	xkey        TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	next_index  INTEGER NOT NULL DEFAULT 0,
	active      INTEGER NOT NULL DEFAULT 1,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX crypto_keys_active ON crypto_keys (store_id, coin) WHERE active = 1;

-- Where a live quote's address came from (the key and its index; '' and -1
-- for test mode's simulated addresses), and until when its amount holds
-- (Unix milliseconds; 0: for as long as the session, test mode). A live
-- address belongs to one quote only.
ALTER TABLE crypto_quotes ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE crypto_quotes ADD COLUMN key_index INTEGER NOT NULL DEFAULT -1;
ALTER TABLE crypto_quotes ADD COLUMN expires_at_ms INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX crypto_quotes_key_index ON crypto_quotes (key_id, key_index) WHERE key_id <> '';
CREATE INDEX crypto_quotes_address ON crypto_quotes (coin, address);
