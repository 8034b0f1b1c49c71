package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// ChainCursor returns where the scan of coin's node resumes; "" when it
// never ran.
func (db *DB) ChainCursor(ctx context.Context, coin string) (string, error) {
	var c string
	err := db.readRow(ctx, `SELECT cursor FROM chain_cursors WHERE coin = $1`, coin).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return c, db.translate(err)
}

// SetChainCursor records where the scan of coin's node resumes.
func (db *DB) SetChainCursor(ctx context.Context, coin, cursor string, now time.Time) error {
	return db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		_, err := tx.exec(ctx, `INSERT INTO chain_cursors (coin, cursor, updated_at_ms) VALUES ($1, $2, $3)
			ON CONFLICT (coin) DO UPDATE SET cursor = $2, updated_at_ms = $3`, coin, cursor, now.UnixMilli())
		return err
	})
}

// InitChainCursor records where the scan of coin's node starts, unless a
// scan already recorded where it resumes.
func (db *DB) InitChainCursor(ctx context.Context, coin, cursor string, now time.Time) error {
	return db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		_, err := tx.exec(ctx, `INSERT INTO chain_cursors (coin, cursor, updated_at_ms) VALUES ($1, $2, $3)
			ON CONFLICT (coin) DO NOTHING`, coin, cursor, now.UnixMilli())
		return err
	})
}
