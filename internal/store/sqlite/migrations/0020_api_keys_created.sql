-- Each node keeps an index of the keys that exist, to answer a client over
-- its limit of failed authentications without a read per made-up key
-- (service.keyIndex); it learns of new keys by reading those created since
-- its last read, through this index.
CREATE INDEX api_keys_created ON api_keys (created_at);
