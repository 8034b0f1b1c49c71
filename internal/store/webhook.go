package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const endpointColumns = `id, store_id, mode, url, events, enabled, secret, created_at, updated_at, description, previous_secret, previous_secret_expires_at, kind, listener_name, seen_at_ms`

// endpointFields are the columns of endpointColumns that scanEndpoint
// reads into e, with the temporaries it converts from.
type endpointFields struct {
	events          string
	enabled         int
	created, update int64
	previousExpires int64
	seen            int64
}

func (f *endpointFields) dest(e *checkout.Endpoint) []any {
	return []any{&e.ID, &e.MerchantID, &e.Mode, &e.URL, &f.events, &f.enabled, &e.Secret, &f.created, &f.update,
		&e.Description, &e.PreviousSecret, &f.previousExpires, &e.Kind, &e.ListenerName, &f.seen}
}

func (f *endpointFields) fill(e *checkout.Endpoint) {
	e.Events = strings.Split(f.events, ",")
	e.Enabled = f.enabled != 0
	e.CreatedAt = time.Unix(f.created, 0)
	e.UpdatedAt = time.Unix(f.update, 0)
	if f.previousExpires != 0 {
		e.PreviousSecretExpiresAt = time.Unix(f.previousExpires, 0)
	}
	if f.seen != 0 {
		e.SeenAt = time.UnixMilli(f.seen)
	}
}

func scanEndpoint(row scanner) (*checkout.Endpoint, error) {
	var e checkout.Endpoint
	var f endpointFields
	if err := row.Scan(f.dest(&e)...); err != nil {
		return nil, err
	}
	f.fill(&e)
	return &e, nil
}

// unixMilliOrZero is a time for a NOT NULL column of Unix milliseconds
// where 0 means none.
func unixMilliOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// unixOrZero is a time for a NOT NULL column of Unix seconds where 0 means
// none.
func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func endpointNotFound(id string) error { return checkout.EndpointNotFound(id) }

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

// EndpointInsert stores a new endpoint (of kind HTTPS when e has none).
func (tx *Tx) EndpointInsert(ctx context.Context, e *checkout.Endpoint) error {
	if e.Kind == "" {
		e.Kind = checkout.EndpointHTTPS
	}
	_, err := tx.exec(ctx, `INSERT INTO endpoints (`+endpointColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		e.ID, e.MerchantID, string(e.Mode), e.URL, strings.Join(e.Events, ","), boolInt(e.Enabled), e.Secret,
		e.CreatedAt.Unix(), e.UpdatedAt.Unix(), e.Description, e.PreviousSecret, unixOrZero(e.PreviousSecretExpiresAt),
		string(e.Kind), e.ListenerName, unixMilliOrZero(e.SeenAt))
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
	res, err := tx.exec(ctx, `UPDATE endpoints SET url = $2, events = $3, description = $4, enabled = $5, secret = $6,
		previous_secret = $7, previous_secret_expires_at = $8, updated_at = $9 WHERE id = $1`,
		e.ID, e.URL, strings.Join(e.Events, ","), e.Description, boolInt(e.Enabled), e.Secret,
		e.PreviousSecret, unixOrZero(e.PreviousSecretExpiresAt), e.UpdatedAt.Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return endpointNotFound(e.ID)
	}
	return nil
}

// EndpointDelete deletes an endpoint, its deliveries, their attempts and
// their leases.
// It locks the endpoint first, so that it waits for a fan-out in progress
// (EndpointListEnabled) and then deletes the delivery that one made too.
func (tx *Tx) EndpointDelete(ctx context.Context, id string) error {
	if _, err := tx.EndpointGetForUpdate(ctx, id); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE endpoint_id = $1)`,
		`DELETE FROM deliveries WHERE endpoint_id = $1`,
		`DELETE FROM delivery_leases WHERE endpoint_id = $1`,
	} {
		if _, err := tx.exec(ctx, q, id); err != nil {
			return tx.db.translate(err)
		}
	}
	_, err := tx.exec(ctx, `DELETE FROM endpoints WHERE id = $1`, id)
	return tx.db.translate(err)
}

// EndpointCount counts a store's HTTPS endpoints (listeners aside).
func (tx *Tx) EndpointCount(ctx context.Context, merchantID string) (int, error) {
	var n int
	err := tx.row(ctx, `SELECT COUNT(*) FROM endpoints WHERE store_id = $1 AND kind = 'https'`, merchantID).Scan(&n)
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
//
// The list is read once per store and mode in a transaction, and kept in
// tx until a statement of tx writes to the endpoints (Tx.exec): a batch
// of creates for one store (group commit) fans out with one read, not one
// per create. The endpoints it read stay locked, and on SQLite no other
// transaction writes until tx ends, so the list stays what a read would
// return. Callers must not change the endpoints returned.
func (tx *Tx) EndpointListEnabled(ctx context.Context, merchantID string, mode checkout.Mode) ([]*checkout.Endpoint, error) {
	key := merchantID + " " + string(mode)
	if eps, ok := tx.enabled[key]; ok {
		return eps, nil
	}
	// Endpoints are none of the tables whose inserts are combined.
	q, args := `SELECT `+endpointColumns+` FROM endpoints WHERE store_id = $1 AND mode = $2 AND enabled = 1`+tx.db.dialect.ForShare,
		[]any{merchantID, string(mode)}
	var eps []*checkout.Endpoint
	if tx.tx.carriesBegin(args) {
		// A batch of creates reads them first: the read goes in one round
		// trip with the transaction's BEGIN (pipetx.go).
		_, _, err := tx.tx.pipeline(tx.context(ctx), PipeStmt{Query: q, Args: args, Scan: func(row scanner) error {
			e, err := scanEndpoint(row)
			eps = append(eps, e)
			return err
		}})
		if err != nil {
			return nil, tx.db.translate(err)
		}
	} else {
		rows, err := tx.rowsUnrelated(ctx, q, args...)
		if err != nil {
			return nil, tx.db.translate(err)
		}
		if eps, err = collect(tx.db, rows, scanEndpoint); err != nil {
			return nil, err
		}
	}
	if tx.enabled == nil {
		tx.enabled = map[string][]*checkout.Endpoint{}
	}
	tx.enabled[key] = eps
	return eps, nil
}
