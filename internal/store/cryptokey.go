package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const cryptoKeyColumns = `id, store_id, coin, network, xkey, fingerprint, next_index, active, created_at, updated_at`

func scanCryptoKey(row scanner) (*checkout.CryptoKey, error) {
	var k checkout.CryptoKey
	var active int
	var created, updated int64
	if err := row.Scan(&k.ID, &k.MerchantID, &k.Coin, &k.Network, &k.Key, &k.Fingerprint, &k.NextIndex, &active, &created, &updated); err != nil {
		return nil, err
	}
	k.Active = active != 0
	k.CreatedAt, k.UpdatedAt = time.Unix(created, 0), time.Unix(updated, 0)
	return &k, nil
}

func noCryptoKey(merchantID, coin string) error {
	return checkout.Errorf(checkout.ENotFound, "Store %s has no %s key; set one with checkoutd stores crypto set.", merchantID, coin)
}

// CryptoKeyActive returns a store's active key for a coin; not_found when
// it has none.
func (db *DB) CryptoKeyActive(ctx context.Context, merchantID, coin string) (*checkout.CryptoKey, error) {
	k, err := scanCryptoKey(db.readRow(ctx, `SELECT `+cryptoKeyColumns+` FROM crypto_keys WHERE store_id = $1 AND coin = $2 AND active = 1`, merchantID, coin))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noCryptoKey(merchantID, coin)
	}
	return k, db.translate(err)
}

// CryptoKeyList returns a store's active keys, by coin.
func (db *DB) CryptoKeyList(ctx context.Context, merchantID string) ([]*checkout.CryptoKey, error) {
	rows, err := db.readRows(ctx, `SELECT `+cryptoKeyColumns+` FROM crypto_keys WHERE store_id = $1 AND active = 1 ORDER BY coin`, merchantID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanCryptoKey)
}

// CryptoKeySet makes k its store's active key for its coin: a key of that
// id (set before) is made active again with its index kept; the key it
// replaces stays, inactive. It returns the key as stored.
func (tx *Tx) CryptoKeySet(ctx context.Context, k *checkout.CryptoKey) (*checkout.CryptoKey, error) {
	if _, err := tx.exec(ctx, `UPDATE crypto_keys SET active = 0, updated_at = $3 WHERE store_id = $1 AND coin = $2 AND active = 1 AND id <> $4`,
		k.MerchantID, k.Coin, k.UpdatedAt.Unix(), k.ID); err != nil {
		return nil, tx.db.translate(err)
	}
	_, err := tx.exec(ctx, `INSERT INTO crypto_keys (`+cryptoKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9)
		ON CONFLICT (id) DO UPDATE SET active = 1, updated_at = $9`,
		k.ID, k.MerchantID, k.Coin, k.Network, k.Key, k.Fingerprint, k.NextIndex, k.CreatedAt.Unix(), k.UpdatedAt.Unix())
	if err != nil {
		return nil, tx.db.translate(err)
	}
	got, err := scanCryptoKey(tx.row(ctx, `SELECT `+cryptoKeyColumns+` FROM crypto_keys WHERE id = $1`, k.ID))
	return got, tx.db.translate(err)
}

// CryptoKeyRemove makes a store's key for a coin inactive (it stays, with
// its index); not_found when there is none.
func (tx *Tx) CryptoKeyRemove(ctx context.Context, merchantID, coin string, now time.Time) error {
	res, err := tx.exec(ctx, `UPDATE crypto_keys SET active = 0, updated_at = $3 WHERE store_id = $1 AND coin = $2 AND active = 1`,
		merchantID, coin, now.Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return noCryptoKey(merchantID, coin)
	}
	return nil
}

// CryptoKeyTake returns a store's active key for a coin with the index to
// use next, and moves its next index on: under the key's lock, so two
// quotes never take one index.
func (tx *Tx) CryptoKeyTake(ctx context.Context, merchantID, coin string) (*checkout.CryptoKey, error) {
	k, err := scanCryptoKey(tx.row(ctx, `SELECT `+cryptoKeyColumns+` FROM crypto_keys WHERE store_id = $1 AND coin = $2 AND active = 1`+tx.db.dialect.ForUpdate,
		merchantID, coin))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noCryptoKey(merchantID, coin)
	}
	if err != nil {
		return nil, tx.db.translate(err)
	}
	if _, err := tx.exec(ctx, `UPDATE crypto_keys SET next_index = next_index + 1 WHERE id = $1`, k.ID); err != nil {
		return nil, tx.db.translate(err)
	}
	return k, nil
}
