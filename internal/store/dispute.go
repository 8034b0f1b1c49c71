package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const disputeColumns = `id, payment_id, session_id, store_id, mode, amount, currency, reason, status, fee, evidence_due_by,
	evidence, submitted_at_ms, submitted_by, closed_at_ms, due_at_ms, created_at_ms, updated_at_ms`

func scanDispute(row scanner) (*checkout.Dispute, error) {
	var d checkout.Dispute
	var evidence, by string
	var dueBy, created, updated int64
	var submitted, closed, next sql.NullInt64
	err := row.Scan(&d.ID, &d.PaymentID, &d.SessionID, &d.MerchantID, &d.Mode, &d.Amount, &d.Currency, &d.Reason, &d.Status, &d.Fee, &dueBy,
		&evidence, &submitted, &by, &closed, &next, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(evidence), &d.Evidence); err != nil {
		return nil, fmt.Errorf("dispute %s: evidence: %w", d.ID, err)
	}
	if by != "" {
		var a checkout.Actor
		if err := json.Unmarshal([]byte(by), &a); err != nil {
			return nil, fmt.Errorf("dispute %s: submitted_by: %w", d.ID, err)
		}
		d.SubmittedBy = &a
	}
	d.EvidenceDueBy = time.Unix(dueBy, 0)
	d.SubmittedAt, d.ClosedAt, d.DueAt = msPtr(submitted), msPtr(closed), msPtr(next)
	d.CreatedAt, d.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	return &d, nil
}

func disputeArgs(d *checkout.Dispute) ([]any, error) {
	evidence, err := json.Marshal(d.Evidence)
	if err != nil {
		return nil, err
	}
	by := ""
	if d.SubmittedBy != nil {
		b, err := json.Marshal(d.SubmittedBy)
		if err != nil {
			return nil, err
		}
		by = string(b)
	}
	return []any{d.ID, d.PaymentID, d.SessionID, d.MerchantID, string(d.Mode), d.Amount, d.Currency, string(d.Reason), string(d.Status), d.Fee,
		d.EvidenceDueBy.Unix(), string(evidence), unixMilliPtr(d.SubmittedAt), by, unixMilliPtr(d.ClosedAt), unixMilliPtr(d.DueAt),
		d.CreatedAt.UnixMilli(), d.UpdatedAt.UnixMilli()}, nil
}

func disputeNotFound(id string) error {
	return checkout.Errorf(checkout.ENotFound, "No such dispute: %s.", id)
}

// DisputeInsert stores a new dispute; a second dispute of one payment is a
// conflict.
func (tx *Tx) DisputeInsert(ctx context.Context, d *checkout.Dispute) error {
	args, err := disputeArgs(d)
	if err != nil {
		return err
	}
	_, err = tx.exec(ctx, `INSERT INTO disputes (`+disputeColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`, args...)
	return tx.db.translate(err)
}

// DisputeUpdate writes a dispute's mutable fields: its status, evidence,
// submission, closing and due time.
func (tx *Tx) DisputeUpdate(ctx context.Context, d *checkout.Dispute) error {
	args, err := disputeArgs(d)
	if err != nil {
		return err
	}
	res, err := tx.exec(ctx, `UPDATE disputes SET status = $2, evidence = $3, submitted_at_ms = $4, submitted_by = $5, closed_at_ms = $6,
		due_at_ms = $7, updated_at_ms = $8 WHERE id = $1`,
		args[0], args[8], args[11], args[12], args[13], args[14], args[15], args[17])
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return disputeNotFound(d.ID)
	}
	return nil
}

// DisputeGetForUpdate reads and locks a dispute.
func (tx *Tx) DisputeGetForUpdate(ctx context.Context, id string) (*checkout.Dispute, error) {
	d, err := scanDispute(tx.row(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE id = $1`+tx.db.dialect.ForUpdate, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, disputeNotFound(id)
	}
	return d, tx.db.translate(err)
}

// DisputeGetByPaymentForUpdate returns a payment's dispute, locked.
func (tx *Tx) DisputeGetByPaymentForUpdate(ctx context.Context, paymentID string) (*checkout.Dispute, error) {
	d, err := scanDispute(tx.row(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE payment_id = $1`+tx.db.dialect.ForUpdate, paymentID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, disputeNotFound(paymentID)
	}
	return d, tx.db.translate(err)
}

// DisputeGet returns a dispute by id.
func (db *DB) DisputeGet(ctx context.Context, id string) (*checkout.Dispute, error) {
	return db.disputeWhere(ctx, `id = $1`, id)
}

// DisputeGetByPayment returns the dispute of a payment.
func (db *DB) DisputeGetByPayment(ctx context.Context, paymentID string) (*checkout.Dispute, error) {
	return db.disputeWhere(ctx, `payment_id = $1`, paymentID)
}

func (db *DB) disputeWhere(ctx context.Context, where string, arg any) (*checkout.Dispute, error) {
	d, err := scanDispute(db.readRow(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, disputeNotFound(fmt.Sprint(arg))
	}
	return d, db.translate(err)
}

// DisputeListDue returns at most limit disputes whose due time has come,
// the longest due first: deadlines passed and decisions to make.
func (db *DB) DisputeListDue(ctx context.Context, now time.Time, limit int) ([]*checkout.Dispute, error) {
	rows, err := db.readRows(ctx, `SELECT `+disputeColumns+` FROM disputes WHERE due_at_ms IS NOT NULL AND due_at_ms <= $1 ORDER BY due_at_ms LIMIT $2`,
		now.UnixMilli(), limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collectSkipping(db, rows, "disputes", scanDispute)
}

// DisputeListOpen returns at most limit of a store's open disputes of one
// mode (needing a response or under review), the nearest deadline first:
// the store's home's "needs attention".
func (db *DB) DisputeListOpen(ctx context.Context, merchantID string, mode checkout.Mode, limit int) ([]*checkout.Dispute, error) {
	rows, err := db.readRows(ctx, `SELECT `+disputeColumns+` FROM disputes
		WHERE store_id = $1 AND mode = $2 AND status IN ('needs_response', 'under_review') ORDER BY evidence_due_by, id LIMIT $3`,
		merchantID, string(mode), limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collectSkipping(db, rows, "disputes", scanDispute)
}
