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

const refundColumns = `id, payment_id, session_id, store_id, mode, amount, currency, reason, status, failure_code,
	requested_by_kind, requested_by_id, requested_by_name, due_at_ms, created_at_ms, updated_at_ms, details, link_token, payout_address`

func scanRefund(row scanner) (*checkout.Refund, error) {
	var r checkout.Refund
	var due sql.NullInt64
	var created, updated int64
	var details string
	var token, payout sql.NullString // payout_address is derived from details
	err := row.Scan(&r.ID, &r.PaymentID, &r.SessionID, &r.MerchantID, &r.Mode, &r.Amount, &r.Currency, &r.Reason, &r.Status, &r.FailureCode,
		&r.RequestedBy.Kind, &r.RequestedBy.ID, &r.RequestedBy.Name, &due, &created, &updated, &details, &token, &payout)
	if err != nil {
		return nil, err
	}
	if details != "" {
		var card acquirerRefund
		if err := json.Unmarshal([]byte(details), &card); err != nil {
			return nil, fmt.Errorf("refund %s: details: %w", r.ID, err)
		}
		if r.Acquirer = card.Acquirer; r.Acquirer == nil {
			r.Crypto = &checkout.CryptoRefund{}
			if err := json.Unmarshal([]byte(details), r.Crypto); err != nil {
				return nil, fmt.Errorf("refund %s: details: %w", r.ID, err)
			}
		}
	}
	r.LinkToken = token.String
	r.DueAt = msPtr(due)
	r.CreatedAt = time.UnixMilli(created)
	r.UpdatedAt = time.UnixMilli(updated)
	return &r, nil
}

func refundNotFound(id string) error {
	return checkout.Errorf(checkout.ENotFound, "No such refund: %s.", id)
}

// acquirerRefund is the details column of a refund at a card acquirer; a
// crypto refund's holds its checkout.CryptoRefund, which has no "acquirer".
type acquirerRefund struct {
	Acquirer *checkout.AcquirerRef `json:"acquirer,omitempty"`
}

// refundDetails returns the details, link token and payout address columns
// of r.
func refundDetails(r *checkout.Refund) (details string, token, payout *string, err error) {
	if r.Acquirer != nil {
		b, err := json.Marshal(acquirerRefund{Acquirer: r.Acquirer})
		return string(b), nil, nil, err
	}
	if r.Crypto == nil {
		return "", nil, nil, nil
	}
	b, err := json.Marshal(r.Crypto)
	if err != nil {
		return "", nil, nil, err
	}
	if r.LinkToken != "" {
		token = &r.LinkToken
	}
	if r.Crypto.Address != "" {
		p := payoutAddress(r.Crypto.Coin, r.Crypto.Address)
		payout = &p
	}
	return string(b), token, payout, nil
}

// payoutAddress is the payout_address column of a coin's address.
func payoutAddress(coin, address string) string { return coin + ":" + address }

// RefundInsert stores a new refund.
func (tx *Tx) RefundInsert(ctx context.Context, r *checkout.Refund) error {
	details, token, payout, err := refundDetails(r)
	if err != nil {
		return err
	}
	_, err = tx.exec(ctx, `INSERT INTO refunds (`+refundColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
		r.ID, r.PaymentID, r.SessionID, r.MerchantID, string(r.Mode), r.Amount, r.Currency, string(r.Reason), string(r.Status), r.FailureCode,
		string(r.RequestedBy.Kind), r.RequestedBy.ID, r.RequestedBy.Name, unixMilliPtr(r.DueAt), r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli(),
		details, token, payout)
	return tx.db.translate(err)
}

// RefundUpdate writes a refund's mutable fields: its status, failure, due
// time and crypto details.
func (tx *Tx) RefundUpdate(ctx context.Context, r *checkout.Refund) error {
	details, _, payout, err := refundDetails(r)
	if err != nil {
		return err
	}
	res, err := tx.exec(ctx, `UPDATE refunds SET status = $2, failure_code = $3, due_at_ms = $4, updated_at_ms = $5, details = $6, payout_address = $7 WHERE id = $1`,
		r.ID, string(r.Status), r.FailureCode, unixMilliPtr(r.DueAt), r.UpdatedAt.UnixMilli(), details, payout)
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return refundNotFound(r.ID)
	}
	return nil
}

// RefundGetForUpdate reads and locks a refund.
func (tx *Tx) RefundGetForUpdate(ctx context.Context, id string) (*checkout.Refund, error) {
	r, err := scanRefund(tx.row(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1`+tx.db.dialect.ForUpdate, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, refundNotFound(id)
	}
	return r, tx.db.translate(err)
}

// RefundGet returns a refund by id.
func (db *DB) RefundGet(ctx context.Context, id string) (*checkout.Refund, error) {
	r, err := scanRefund(db.readRow(ctx, `SELECT `+refundColumns+` FROM refunds WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, refundNotFound(id)
	}
	return r, db.translate(err)
}

// RefundGetByLink returns the refund of a link token.
func (db *DB) RefundGetByLink(ctx context.Context, token string) (*checkout.Refund, error) {
	r, err := scanRefund(db.readRow(ctx, `SELECT `+refundColumns+` FROM refunds WHERE link_token = $1`, token))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such refund link.")
	}
	return r, db.translate(err)
}

// RefundListByPayout returns the pending refunds that pay an address of a
// coin, oldest first: what a transaction to it may pay.
func (db *DB) RefundListByPayout(ctx context.Context, coin, address string) ([]*checkout.Refund, error) {
	rows, err := db.readRows(ctx, `SELECT `+refundColumns+` FROM refunds WHERE payout_address = $1 AND status = 'pending' ORDER BY created_at_ms, id`,
		payoutAddress(coin, address))
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRefund)
}

// RefundListAwaitingPayout returns the pending refunds with a payout
// address: the addresses a live node watches for them.
func (db *DB) RefundListAwaitingPayout(ctx context.Context) ([]*checkout.Refund, error) {
	rows, err := db.readRows(ctx, `SELECT `+refundColumns+` FROM refunds WHERE payout_address IS NOT NULL AND status = 'pending' ORDER BY created_at_ms, id`)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRefund)
}

// RefundListByPayment returns a payment's refunds, oldest first.
func (db *DB) RefundListByPayment(ctx context.Context, paymentID string) ([]*checkout.Refund, error) {
	rows, err := db.readRows(ctx, `SELECT `+refundColumns+` FROM refunds WHERE payment_id = $1 ORDER BY created_at_ms, id`, paymentID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRefund)
}

// RefundListDue returns at most limit refunds whose due time has come, the
// longest due first: those whose processor did not answer, for the
// payments job to look up.
func (db *DB) RefundListDue(ctx context.Context, now time.Time, limit int) ([]*checkout.Refund, error) {
	rows, err := db.readRows(ctx, `SELECT `+refundColumns+` FROM refunds WHERE due_at_ms IS NOT NULL AND due_at_ms <= $1 ORDER BY due_at_ms LIMIT $2`,
		now.UnixMilli(), limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanRefund)
}
