package store

import (
	"context"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// EventInsert stores an event.
func (tx *Tx) EventInsert(ctx context.Context, e *checkout.Event) error {
	_, err := tx.exec(ctx, `INSERT INTO events (id, store_id, mode, type, created_at, data) VALUES ($1, $2, $3, $4, $5, $6)`,
		e.ID, e.MerchantID, string(e.Mode), e.Type, e.CreatedAt.Unix(), string(e.Object))
	return tx.db.translate(err)
}

// EventList returns a store's events of one mode, newest first.
func (db *DB) EventList(ctx context.Context, p checkout.EventListParams) ([]*checkout.Event, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.readRows(ctx, `SELECT id, store_id, mode, type, created_at, data FROM events
		WHERE store_id = $1 AND mode = $2 AND ($3 = '' OR type = $3)
		ORDER BY seq DESC LIMIT $4`, p.MerchantID, string(p.Mode), p.Type, limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, func(row scanner) (*checkout.Event, error) {
		var e checkout.Event
		var created int64
		var data string
		if err := row.Scan(&e.ID, &e.MerchantID, &e.Mode, &e.Type, &created, &data); err != nil {
			return nil, err
		}
		e.CreatedAt = time.Unix(created, 0)
		e.Object = []byte(data)
		return &e, nil
	})
}
