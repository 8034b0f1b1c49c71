package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const endpointColumns = `id, store_id, mode, url, events, enabled, secret, created_at, updated_at`

func scanEndpoint(row scanner) (*checkout.Endpoint, error) {
	var e checkout.Endpoint
	var events string
	var enabled int
	var created, updated int64
	if err := row.Scan(&e.ID, &e.MerchantID, &e.Mode, &e.URL, &events, &enabled, &e.Secret, &created, &updated); err != nil {
		return nil, err
	}
	e.Events = strings.Split(events, ",")
	e.Enabled = enabled != 0
	e.CreatedAt = time.Unix(created, 0)
	e.UpdatedAt = time.Unix(updated, 0)
	return &e, nil
}

func endpointNotFound(id string) error {
	return checkout.Errorf(checkout.ENotFound, "No such webhook endpoint: %s.", id)
}

// EndpointGet returns an endpoint by id.
func (db *DB) EndpointGet(ctx context.Context, id string) (*checkout.Endpoint, error) {
	e, err := scanEndpoint(db.readRow(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, endpointNotFound(id)
	}
	return e, db.translate(err)
}

// EndpointList returns a store's endpoints, oldest first.
func (db *DB) EndpointList(ctx context.Context, merchantID string) ([]*checkout.Endpoint, error) {
	rows, err := db.readRows(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE store_id = $1 ORDER BY created_at, id`, merchantID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanEndpoint)
}

// MerchantLock locks a store's row.
func (tx *Tx) MerchantLock(ctx context.Context, id string) error {
	var got string
	err := tx.row(ctx, `SELECT id FROM stores WHERE id = $1`+tx.db.dialect.ForUpdate, id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", id)
	}
	return tx.db.translate(err)
}

// EndpointInsert stores a new endpoint.
func (tx *Tx) EndpointInsert(ctx context.Context, e *checkout.Endpoint) error {
	_, err := tx.exec(ctx, `INSERT INTO endpoints (`+endpointColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		e.ID, e.MerchantID, string(e.Mode), e.URL, strings.Join(e.Events, ","), boolInt(e.Enabled), e.Secret,
		e.CreatedAt.Unix(), e.UpdatedAt.Unix())
	return tx.db.translate(err)
}

// EndpointGetForUpdate reads and locks an endpoint.
func (tx *Tx) EndpointGetForUpdate(ctx context.Context, id string) (*checkout.Endpoint, error) {
	e, err := scanEndpoint(tx.row(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE id = $1`+tx.db.dialect.ForUpdate, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, endpointNotFound(id)
	}
	return e, tx.db.translate(err)
}

// EndpointUpdate writes an endpoint's mutable fields.
func (tx *Tx) EndpointUpdate(ctx context.Context, e *checkout.Endpoint) error {
	res, err := tx.exec(ctx, `UPDATE endpoints SET enabled = $2, secret = $3, updated_at = $4 WHERE id = $1`,
		e.ID, boolInt(e.Enabled), e.Secret, e.UpdatedAt.Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return endpointNotFound(e.ID)
	}
	return nil
}

// EndpointDelete deletes an endpoint, its deliveries and their attempts.
// It locks the endpoint first, so that it waits for a fan-out in progress
// (EndpointListEnabled) and then deletes the delivery that one made too.
func (tx *Tx) EndpointDelete(ctx context.Context, id string) error {
	if _, err := tx.EndpointGetForUpdate(ctx, id); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE endpoint_id = $1)`,
		`DELETE FROM deliveries WHERE endpoint_id = $1`,
	} {
		if _, err := tx.exec(ctx, q, id); err != nil {
			return tx.db.translate(err)
		}
	}
	_, err := tx.exec(ctx, `DELETE FROM endpoints WHERE id = $1`, id)
	return tx.db.translate(err)
}

// EndpointCount counts a store's endpoints.
func (tx *Tx) EndpointCount(ctx context.Context, merchantID string) (int, error) {
	var n int
	err := tx.row(ctx, `SELECT COUNT(*) FROM endpoints WHERE store_id = $1`, merchantID).Scan(&n)
	return n, tx.db.translate(err)
}

// EndpointListEnabled returns the enabled endpoints of a store and mode,
// and keeps them from changing until the transaction ends (FOR SHARE on
// PostgreSQL). Disabling or deleting an endpoint locks it first
// (EndpointGetForUpdate), so it waits for this transaction and then cancels
// or deletes the deliveries it made; a change that came first makes this
// read wait and see the endpoint disabled or gone. Without the lock, a
// delivery inserted by an event's transaction while the endpoint was being
// disabled would stay pending and be delivered anyway.
func (tx *Tx) EndpointListEnabled(ctx context.Context, merchantID string, mode checkout.Mode) ([]*checkout.Endpoint, error) {
	rows, err := tx.rows(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE store_id = $1 AND mode = $2 AND enabled = 1`+tx.db.dialect.ForShare,
		merchantID, string(mode))
	if err != nil {
		return nil, tx.db.translate(err)
	}
	return collect(tx.db, rows, scanEndpoint)
}
