package store

import (
	"context"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// purgeBatch is how many rows one purge statement deletes at most. A purge
// deletes in batches, each its own transaction, until a batch comes back
// short: on SQLite every other write waits while a statement runs, so one
// statement deleting a month of rows would stop the service for as long.
const purgeBatch = 1000

// purgeLoop runs step, which deletes at most limit rows in a transaction of
// its own and returns how many it deleted, until it deletes fewer than
// limit. It returns how many rows were deleted in all.
func (db *DB) purgeLoop(ctx context.Context, table string, step func(limit int) (int64, error)) (int64, error) {
	limit := db.purgeBatch
	if limit <= 0 {
		limit = purgeBatch
	}
	var total int64
	for {
		n, err := step(limit)
		if err != nil {
			return total, db.translate(err)
		}
		total += n
		if db.purgeHook != nil {
			db.purgeHook(table, n)
		}
		if n < int64(limit) {
			return total, nil
		}
	}
}

// purgeWhere deletes, in batches, the rows of table whose key (one column,
// or a list of them) matches where.
func (db *DB) purgeWhere(ctx context.Context, table, key, where string, arg any) (int64, error) {
	query := `DELETE FROM ` + table + ` WHERE (` + key + `) IN (SELECT ` + key + ` FROM ` + table + ` WHERE ` + where + ` LIMIT $2)`
	return db.purgeLoop(ctx, table, func(limit int) (int64, error) {
		res, err := db.write.ExecContext(ctx, query, arg, limit)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	})
}

// RequestLogPurge deletes logs created before t, in batches.
func (db *DB) RequestLogPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.requestLogs().purgeWhere(ctx, "request_logs", "request_id", "created_at_ms < $1", before.UnixMilli())
}

// IdempotencyPurge deletes records created before t, in batches.
func (db *DB) IdempotencyPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purgeWhere(ctx, "idempotency_keys", "store_id, mode, key", "created_at < $1", before.Unix())
}

// EventPurge deletes events created before t, with their finished
// deliveries and the deliveries' attempts, in batches; an event with a
// pending delivery stays. It returns how many events it deleted.
func (db *DB) EventPurge(ctx context.Context, before time.Time) (int64, error) {
	ms := before.UnixMilli()
	_, err := db.purgeLoop(ctx, "deliveries", func(limit int) (int64, error) {
		var n int64
		err := db.InTx(ctx, func(t checkout.Tx) error {
			tx := t.(*Tx)
			rows, err := tx.rows(ctx, `SELECT id FROM deliveries WHERE created_at_ms < $1 AND status <> 'pending' LIMIT $2`, ms, limit)
			if err != nil {
				return err
			}
			ids, err := collect(db, rows, func(row scanner) (string, error) {
				var id string
				return id, row.Scan(&id)
			})
			if err != nil || len(ids) == 0 {
				return err
			}
			marks := make([]string, len(ids))
			args := make([]any, len(ids))
			for i, id := range ids {
				marks[i], args[i] = db.dialect.Param(i+1), id
			}
			in := strings.Join(marks, ", ")
			// A finished delivery keeps a lease only when its owner crashed
			// after it was canceled: rare, but nothing else deletes it.
			for _, table := range []string{"delivery_attempts", "delivery_leases"} {
				if _, err := tx.execRaw(ctx, `DELETE FROM `+table+` WHERE delivery_id IN (`+in+`)`, args...); err != nil {
					return err
				}
			}
			res, err := tx.execRaw(ctx, `DELETE FROM deliveries WHERE id IN (`+in+`)`, args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		return n, err
	})
	if err != nil {
		return 0, err
	}
	return db.purgeWhere(ctx, "events", "seq",
		`created_at < $1 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)`, before.Unix())
}
