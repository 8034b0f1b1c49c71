package store

import (
	"context"
	"time"
)

// SignatureNonceUse records that a signature of the key carried nonce, to
// be remembered until expires, and reports whether the nonce was fresh: false
// when it is remembered already, from this node or any other. A record whose
// time is past at now (one the purge has not reached yet) is taken over, so
// an expired nonce never refuses a request. One statement, outside any
// transaction: the database's unique key decides between two nodes at once.
func (db *DB) SignatureNonceUse(ctx context.Context, keyID, nonce string, now, expires time.Time) (bool, error) {
	res, err := db.write.ExecContext(ctx, `INSERT INTO signature_nonces (key_id, nonce, expires_at_ms) VALUES ($1, $2, $3)
		ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at_ms = excluded.expires_at_ms
		WHERE signature_nonces.expires_at_ms <= $4`, keyID, nonce, expires.UnixMilli(), now.UnixMilli())
	if err != nil {
		return false, db.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, db.translate(err)
	}
	return n == 1, nil
}

// SignatureNoncePurge deletes the nonces that expired before t, in batches.
func (db *DB) SignatureNoncePurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purgeWhere(ctx, "signature_nonces", "key_id, nonce", "expires_at_ms < $1", before.UnixMilli())
}
