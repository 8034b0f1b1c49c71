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

const sessionColumns = `id, store_id, mode, status, title, description, currency, amount, discount_amount, tax_amount, total_amount,
	items, customer_email, customer_name, metadata, return_url, cancel_url, payment_id,
	created_at, expires_at, completed_at, active_payment_id`

func scanSession(row scanner) (*checkout.Session, error) {
	var s checkout.Session
	var items, metadata string
	var created, expires int64
	var completed sql.NullInt64
	err := row.Scan(&s.ID, &s.MerchantID, &s.Mode, &s.Status, &s.Title, &s.Description, &s.Currency,
		&s.Amount, &s.DiscountAmount, &s.TaxAmount, &s.TotalAmount,
		&items, &s.Customer.Email, &s.Customer.Name, &metadata, &s.ReturnURL, &s.CancelURL, &s.PaymentID,
		&created, &expires, &completed, &s.ActivePaymentID)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(items), &s.Items); err != nil {
		return nil, fmt.Errorf("session %s: items: %w", s.ID, err)
	}
	if err := json.Unmarshal([]byte(metadata), &s.Metadata); err != nil {
		return nil, fmt.Errorf("session %s: metadata: %w", s.ID, err)
	}
	s.CreatedAt = time.Unix(created, 0)
	s.ExpiresAt = time.Unix(expires, 0)
	s.CompletedAt = timePtr(completed)
	return &s, nil
}

func sessionNotFound(id string) error {
	return checkout.Errorf(checkout.ECheckoutNotFound, "No such checkout session: %s.", id)
}

// SessionGet returns a session by id: from the session cache when there
// is one and it holds it (sessioncache.go).
func (db *DB) SessionGet(ctx context.Context, id string) (*checkout.Session, error) {
	c := db.sessions
	var gen uint64
	if c != nil {
		if s, ok := c.get(id); ok {
			return s, nil
		}
		gen = c.generation()
	}
	var s *checkout.Session
	var err error
	if db.reads != nil {
		s, err = db.sessionGetBatched(ctx, id) // readbatch.go
	} else {
		s, err = db.sessionRead(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	if c != nil {
		if db.sessionReadHook != nil {
			db.sessionReadHook(s)
		}
		c.put(s, gen)
	}
	return s, nil
}

// SessionListDue returns open sessions due to expire at now. The expiry job
// reads it: a session that cannot be read is skipped (collectSkipping).
func (db *DB) SessionListDue(ctx context.Context, now time.Time, limit int) ([]*checkout.Session, error) {
	rows, err := db.readRows(ctx, `SELECT `+sessionColumns+` FROM sessions
		WHERE status = 'open' AND expires_at <= $1 AND active_payment_id IS NULL
		ORDER BY expires_at LIMIT $2`, now.Unix(), limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collectSkipping(db, rows, "sessions", scanSession)
}

// SessionInsert stores a new session.
func (tx *Tx) SessionInsert(ctx context.Context, s *checkout.Session) error {
	items, err := json.Marshal(s.Items)
	if err != nil {
		return err
	}
	metadata, err := json.Marshal(s.Metadata)
	if err != nil {
		return err
	}
	err = tx.insert(ctx, deferSessions, `INSERT INTO sessions (`+sessionColumns+`) VALUES `,
		s.ID, s.MerchantID, string(s.Mode), string(s.Status), s.Title, s.Description, s.Currency,
		s.Amount, s.DiscountAmount, s.TaxAmount, s.TotalAmount,
		string(items), s.Customer.Email, s.Customer.Name, string(metadata), s.ReturnURL, s.CancelURL, s.PaymentID,
		s.CreatedAt.Unix(), s.ExpiresAt.Unix(), unixPtr(s.CompletedAt), s.ActivePaymentID)
	return tx.db.translate(err)
}

// SessionGetForUpdate reads and locks a session.
func (tx *Tx) SessionGetForUpdate(ctx context.Context, id string) (*checkout.Session, error) {
	s, err := scanSession(tx.row(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = $1`+tx.db.dialect.ForUpdate, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, sessionNotFound(id)
	}
	return s, tx.db.translate(err)
}

// SessionUpdate writes the mutable fields of a session.
func (tx *Tx) SessionUpdate(ctx context.Context, s *checkout.Session) error {
	tx.sessionWrite(s.ID)
	res, err := tx.exec(ctx, `UPDATE sessions SET status = $2, payment_id = $3, completed_at = $4, active_payment_id = $5 WHERE id = $1`,
		s.ID, string(s.Status), s.PaymentID, unixPtr(s.CompletedAt), s.ActivePaymentID)
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return sessionNotFound(s.ID)
	}
	return nil
}
