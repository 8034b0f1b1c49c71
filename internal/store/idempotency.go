package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// IdempotencyGet returns the saved outcome of a create request.
func (db *DB) IdempotencyGet(ctx context.Context, merchantID string, mode checkout.Mode, key string) (*checkout.IdempotencyRecord, error) {
	r := checkout.IdempotencyRecord{MerchantID: merchantID, Mode: mode, Key: key}
	var body string
	var created int64
	err := db.readRow(ctx, `SELECT request_hash, body, created_at FROM idempotency_keys
		WHERE store_id = $1 AND mode = $2 AND key = $3`, merchantID, string(mode), key).
		Scan(&r.RequestHash, &body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such idempotency key.")
	}
	if err != nil {
		return nil, db.translate(err)
	}
	r.Body = []byte(body)
	r.CreatedAt = time.Unix(created, 0)
	return &r, nil
}

// IdempotencyInsert saves the outcome of a create request. A record of the
// key whose window has ended (one the purge has not reached yet) is
// replaced; a live one is a conflict.
func (tx *Tx) IdempotencyInsert(ctx context.Context, r *checkout.IdempotencyRecord) error {
	res, err := tx.exec(ctx, `INSERT INTO idempotency_keys (store_id, mode, key, request_hash, body, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (store_id, mode, key) DO UPDATE SET request_hash = excluded.request_hash,
			body = excluded.body, created_at = excluded.created_at
		WHERE idempotency_keys.created_at <= $7`,
		r.MerchantID, string(r.Mode), r.Key, r.RequestHash, string(r.Body), r.CreatedAt.Unix(),
		r.CreatedAt.Add(-checkout.IdempotencyWindow).Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return tx.db.translate(err)
	}
	if n == 0 {
		return &checkout.Error{Code: checkout.EConflict, Message: "The idempotency key is taken."}
	}
	return nil
}
