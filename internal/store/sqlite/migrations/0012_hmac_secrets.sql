-- HMAC keys (docs/api.md, HMAC keys): the server must keep an HMAC
-- key's secret to verify signatures with it, so unlike a bearer key's, which
-- is only hashed, it is kept, sealed with the operator's secrets key
-- (AES-256-GCM, bound to the key's id; package seal): "v1.<secrets key
-- id>.<base64url>". '' for bearer keys. secret_hash stays for every key.
ALTER TABLE api_keys ADD COLUMN secret_sealed TEXT NOT NULL DEFAULT '';

-- The nonces of signed requests (RFC 9421) seen within their window, so that
-- a signature is accepted once on any node: a nonce is kept until its
-- signature's created time plus the window (expires_at_ms, Unix
-- milliseconds), then purged. Scoped by key: one key's nonces cannot block
-- another's. No reference to api_keys: a signed request's nonce is written
-- before its key is trusted, and must cost one cheap insert.
CREATE TABLE signature_nonces (
	key_id        TEXT NOT NULL,
	nonce         TEXT NOT NULL,
	expires_at_ms INTEGER NOT NULL,
	PRIMARY KEY (key_id, nonce)
);
CREATE INDEX signature_nonces_expires ON signature_nonces (expires_at_ms);
