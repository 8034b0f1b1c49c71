package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// ListenersForUpdate returns a store's listeners, the longest idle first,
// locked until the transaction ends.
func (tx *Tx) ListenersForUpdate(ctx context.Context, merchantID string) ([]*checkout.Endpoint, error) {
	rows, err := tx.rows(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE store_id = $1 AND kind = 'listener'
		ORDER BY seen_at_ms, id`+tx.db.dialect.ForUpdate, merchantID)
	if err != nil {
		return nil, tx.db.translate(err)
	}
	return collect(tx.db, rows, scanEndpoint)
}

// ListenerConnect makes conn the stream holding a listener, connected at
// seen.
func (tx *Tx) ListenerConnect(ctx context.Context, endpointID, conn string, seen time.Time) error {
	res, err := tx.exec(ctx, `UPDATE endpoints SET connection = $2, seen_at_ms = $3 WHERE id = $1 AND kind = 'listener'`,
		endpointID, conn, seen.UnixMilli())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return endpointNotFound(endpointID)
	}
	return nil
}

// ListenerSeen notes that a listener was seen at seen (registered again),
// whichever stream holds it.
func (tx *Tx) ListenerSeen(ctx context.Context, endpointID string, seen time.Time) error {
	_, err := tx.exec(ctx, `UPDATE endpoints SET seen_at_ms = $2 WHERE id = $1 AND kind = 'listener'`, endpointID, seen.UnixMilli())
	return tx.db.translate(err)
}

// ListenerTouch notes that stream conn is still connected at seen (or, with
// release, that it was until seen) and reports whether it still holds the
// listener.
func (db *DB) ListenerTouch(ctx context.Context, endpointID, conn string, seen time.Time, release bool) (bool, error) {
	var n int64
	err := db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		q := `UPDATE endpoints SET seen_at_ms = $3 WHERE id = $1 AND connection = $2`
		if release {
			q = `UPDATE endpoints SET seen_at_ms = $3, connection = '' WHERE id = $1 AND connection = $2`
		}
		res, err := tx.exec(ctx, q, endpointID, conn, seen.UnixMilli())
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n == 1, db.translate(err)
}

// ListenerNext returns a listener's oldest pending delivery with its event
// (the order they were made in), or nil, if conn still holds the listener.
// It reads the partial index of pending deliveries by endpoint.
func (db *DB) ListenerNext(ctx context.Context, endpointID, conn string) (*checkout.Listened, bool, error) {
	var holder string
	err := db.readRow(ctx, `SELECT connection FROM endpoints WHERE id = $1`, endpointID).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) || err == nil && holder != conn {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, db.translate(err)
	}
	var d checkout.Delivery
	var v checkout.Event
	var df deliveryFields
	var vCreated int64
	var data string
	dest := append(df.dest(&d), &v.ID, &v.MerchantID, &v.Mode, &v.Type, &vCreated, &data)
	err = db.readRow(ctx, `SELECT `+prefixed("d", deliveryColumns)+`, v.id, v.store_id, v.mode, v.type, v.created_at, v.data
		FROM deliveries d JOIN events v ON v.id = d.event_id
		WHERE d.endpoint_id = $1 AND d.status = 'pending'
		ORDER BY d.next_attempt_at_ms, d.seq LIMIT 1`, endpointID).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, db.translate(err)
	}
	df.fill(&d)
	v.CreatedAt, v.Object = time.Unix(vCreated, 0), []byte(data)
	return &checkout.Listened{Delivery: &d, Event: &v}, true, nil
}

// DeliveryGetForUpdate reads and locks a delivery.
func (tx *Tx) DeliveryGetForUpdate(ctx context.Context, id string) (*checkout.Delivery, error) {
	d, err := scanDelivery(tx.row(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`+tx.db.dialect.ForUpdate, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.DeliveryNotFound(id)
	}
	return d, tx.db.translate(err)
}

// DeliveryRecordListened stores attempt a of a pending delivery to a
// listener, and the delivery's new state d. The caller holds the delivery's
// lock (DeliveryGetForUpdate) and has checked it is pending.
func (tx *Tx) DeliveryRecordListened(ctx context.Context, a *checkout.Attempt, d *checkout.Delivery) error {
	if err := tx.attemptInsert(ctx, a, d.EndpointID); err != nil {
		return tx.db.translate(err)
	}
	_, err := tx.exec(ctx, `UPDATE deliveries SET status = $2, attempts = $3, last_status_code = $4, last_error = $5,
		updated_at_ms = $6 WHERE id = $1 AND status = 'pending'`,
		d.ID, string(d.Status), d.Attempts, d.LastStatusCode, d.LastError, d.UpdatedAt.UnixMilli())
	return tx.db.translate(err)
}
