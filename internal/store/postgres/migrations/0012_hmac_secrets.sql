-- HMAC keys (docs/api.md, Signed requests): the server must keep an HMAC
-- key's secret to verify signatures with it, so unlike a bearer key's, which
-- is only hashed, it is kept, sealed with the operator's secrets key
-- (AES-256-GCM, bound to the key's id; package seal): "v1.<secrets key
-- id>.<base64url>". '' for bearer keys. secret_hash stays for every key.
ALTER TABLE api_keys ADD COLUMN secret_sealed TEXT NOT NULL DEFAULT '';
