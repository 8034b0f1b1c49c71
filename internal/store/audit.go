package store

import (
	"context"
	"strconv"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const auditColumns = `id, store_id, actor_kind, actor_id, actor_name, action, object_id, client_address, user_agent, created_at_ms`

func scanAudit(row scanner) (*checkout.AuditEntry, error) {
	var e checkout.AuditEntry
	var created int64
	err := row.Scan(&e.ID, &e.MerchantID, &e.Actor.Kind, &e.Actor.ID, &e.Actor.Name, &e.Action, &e.ObjectID, &e.ClientAddress, &e.UserAgent, &created)
	if err != nil {
		return nil, err
	}
	e.CreatedAt = time.UnixMilli(created)
	return &e, nil
}

// AuditInsert records an audit entry in the transaction of its change.
func (tx *Tx) AuditInsert(ctx context.Context, e *checkout.AuditEntry) error {
	_, err := tx.exec(ctx, `INSERT INTO audit_entries (`+auditColumns+`, actor_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		e.ID, e.MerchantID, string(e.Actor.Kind), e.Actor.ID, e.Actor.Name, string(e.Action), e.ObjectID, e.ClientAddress, e.UserAgent,
		e.CreatedAt.UnixMilli(), e.Actor.Key())
	return tx.db.translate(err)
}

// AuditList returns a page of a store's audit entries, newest first by
// (created_at_ms, id), with p's filters. Each filter has an index of
// migration 0025 that starts with the store and ends with the order, so a
// page is read off it in order, and the date range bounds it:
//
//	no filter      audit_entries_list   (store_id, created_at_ms, id)
//	Action         audit_entries_action (store_id, action, created_at_ms, id)
//	ActorKey       audit_entries_actor  (store_id, actor_key, created_at_ms, id)
//
// With both an actor and an action, the actor's index is read (one actor
// does far fewer things than a store). TestAuditListPlans checks the plans
// on both databases.
func (db *DB) AuditList(ctx context.Context, p checkout.AuditListParams) ([]*checkout.AuditEntry, error) {
	q, args := db.auditListQuery(p)
	rows, err := db.readRows(ctx, q, args...)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanAudit)
}

// auditListQuery builds AuditList's query and its arguments.
func (db *DB) auditListQuery(p checkout.AuditListParams) (string, []any) {
	limit := p.Limit
	if limit <= 0 {
		limit = 50
	}
	index := "audit_entries_list"
	var w where
	w.add("store_id = ?", p.MerchantID)
	if p.ActorKey != "" {
		w.add("actor_key = ?", p.ActorKey)
		index = "audit_entries_actor"
	}
	if p.Action != "" {
		w.add("action = ?", string(p.Action))
		if p.ActorKey == "" {
			index = "audit_entries_action"
		}
	}
	if !p.Since.IsZero() {
		w.add("created_at_ms >= ?", p.Since.UnixMilli())
	}
	if !p.Until.IsZero() {
		w.add("created_at_ms < ?", p.Until.UnixMilli())
	}
	if !p.After.IsZero() {
		// The keyset: (created_at_ms, id) < (At, ID), written so that its
		// first part bounds the index range on either database.
		at := p.After.At.UnixMilli()
		w.add("created_at_ms <= ?", at)
		w.add("(created_at_ms < ? OR id < ?)", at, p.After.ID)
	}
	return `SELECT ` + auditColumns + ` FROM audit_entries` + db.dialect.IndexedBy(index) + ` WHERE ` + w.sql(db.dialect) +
		` ORDER BY created_at_ms DESC, id DESC LIMIT ` + strconv.Itoa(limit), w.argsFor(db.dialect)
}

// AuditPurge deletes the entries made before t, in batches.
func (db *DB) AuditPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purgeWhere(ctx, "audit_entries", "id", "created_at_ms < $1", before.UnixMilli())
}
