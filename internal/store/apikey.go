package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const apiKeyColumns = `id, store_id, mode, type, permissions, secret_hash, secret_hint, created_at, revoked_at, name`

func scanAPIKey(row scanner) (*checkout.APIKey, error) {
	var k checkout.APIKey
	var perms string
	var created int64
	var revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.MerchantID, &k.Mode, &k.Type, &perms, &k.SecretHash, &k.SecretHint, &created, &revoked, &k.Name); err != nil {
		return nil, err
	}
	k.Permissions = checkout.ParsePermissions(perms)
	k.CreatedAt = time.Unix(created, 0)
	k.RevokedAt = timePtr(revoked)
	return &k, nil
}

func (db *DB) apiKeyWhere(ctx context.Context, where string, arg any) (*checkout.APIKey, error) {
	k, err := scanAPIKey(db.readRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such API key.")
	}
	return k, db.translate(err)
}

// APIKeyGetByHash finds a key by the hash of its secret.
func (db *DB) APIKeyGetByHash(ctx context.Context, hash string) (*checkout.APIKey, error) {
	return db.apiKeyWhere(ctx, `secret_hash = $1`, hash)
}

// APIKeyGet finds a key by id.
func (db *DB) APIKeyGet(ctx context.Context, id string) (*checkout.APIKey, error) {
	return db.apiKeyWhere(ctx, `id = $1`, id)
}

// APIKeyList returns a store's keys, oldest first.
func (db *DB) APIKeyList(ctx context.Context, merchantID string) ([]*checkout.APIKey, error) {
	rows, err := db.readRows(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE store_id = $1 ORDER BY created_at, id`, merchantID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanAPIKey)
}

// APIKeyInsert stores a new key.
func (tx *Tx) APIKeyInsert(ctx context.Context, k *checkout.APIKey) error {
	_, err := tx.exec(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9)`,
		k.ID, k.MerchantID, string(k.Mode), string(k.Type), checkout.JoinPermissions(k.Permissions), k.SecretHash, k.SecretHint, k.CreatedAt.Unix(), k.Name)
	return tx.db.translate(err)
}

// APIKeyRevoke marks a key revoked.
func (tx *Tx) APIKeyRevoke(ctx context.Context, id string, t time.Time) error {
	res, err := tx.exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, t.Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return checkout.Errorf(checkout.ENotFound, "No such API key: %s.", id)
	}
	return nil
}
