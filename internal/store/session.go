package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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
	if err != nil {
		return tx.db.translate(err)
	}
	// Each metadata key's value, for the Sessions page's search (migration
	// 0026), in key order so a batch's statements keep one text. A key or
	// value holding a NUL character, which PostgreSQL's text cannot hold
	// (the JSON of metadata escapes it) and no search form can send, is
	// left out on either database.
	for _, k := range slices.Sorted(maps.Keys(s.Metadata)) {
		if strings.ContainsRune(k, 0) || strings.ContainsRune(s.Metadata[k], 0) {
			continue
		}
		err := tx.insert(ctx, deferSessionMetadata, `INSERT INTO session_metadata (store_id, mode, key, value, created_at, session_id) VALUES `,
			s.MerchantID, string(s.Mode), k, s.Metadata[k], s.CreatedAt.Unix(), s.ID)
		if err != nil {
			return tx.db.translate(err)
		}
	}
	return nil
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

// sessionListColumns are sessionColumns of the table sessions, which a
// metadata search joins to session_metadata.
var sessionListColumns = func() string {
	cols := strings.Split(sessionColumns, ",")
	for i, c := range cols {
		cols[i] = "sessions." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

// SessionList returns a page of a store's checkout sessions of one mode,
// newest first by (created_at, id), with p's filters: the dashboard's
// Sessions. Each search and filter is served by an index of migration 0026 (sessions_list: 0024)
// that starts with the scope and ends with the order, so the page is read
// off it in order and the query stops at the limit:
//
//	no filter, dates  sessions_list           (store_id, mode, created_at, id)
//	Status            sessions_status         (store_id, mode, status, created_at, id)
//	Email             sessions_email          (store_id, mode, lower(customer_email), created_at, id)
//	                  (on PostgreSQL lower(customer_email COLLATE "C"), ASCII alone as on SQLite)
//	Metadata          session_metadata's primary key (store_id, mode, key, value, created_at, session_id)
//	                  (on SQLite the table itself, WITHOUT ROWID)
//
// (A search by a session's or a payment's id reads the one session by its
// primary key: service.ListSessions.)
//
// TestSessionListPlans checks the plans on both databases.
func (db *DB) SessionList(ctx context.Context, p checkout.SessionListParams) ([]*checkout.Session, error) {
	q, args := db.sessionListQuery(p)
	rows, err := db.readRows(ctx, q, args...)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanSession)
}

// sessionListQuery builds SessionList's query and its arguments. Its text
// depends only on which filters are set, so the statement cache holds a
// few.
func (db *DB) sessionListQuery(p checkout.SessionListParams) (string, []any) {
	limit := p.Limit
	if limit <= 0 {
		limit = 50
	}
	// With a metadata search the rows come from session_metadata (m), in
	// its order, each joined to its session by id; the scope, dates and
	// keyset are then m's columns, so that the index bounds them.
	t, from := "", "sessions"
	if p.MetadataKey != "" {
		t, from = "m.", "session_metadata m JOIN sessions ON sessions.id = m.session_id"
	}
	idCol := t + "id"
	if t != "" {
		idCol = "m.session_id"
	}
	var w where
	w.add(t+"store_id = ?", p.MerchantID)
	w.add(t+"mode = ?", string(p.Mode))
	if p.MetadataKey != "" {
		w.add("m.key = ?", p.MetadataKey)
		w.add("m.value = ?", p.MetadataValue)
	}
	if p.Email != "" {
		// As sessions_email is written on each database (migration 0026):
		// ASCII letters lower-cased, others as they are.
		if db.dialect.Name == "postgres" {
			w.add(`lower(sessions.customer_email COLLATE "C") = ?`, p.Email)
		} else {
			w.add("lower(sessions.customer_email) = ?", p.Email)
		}
	}
	if p.Status != "" {
		w.add("sessions.status = ?", string(p.Status))
		if p.Status == checkout.StatusOpen && !p.Now.IsZero() {
			// An open session whose hour is over, and with no payment on
			// its way, is expired: as the API answers, and as the expiry
			// job records it within seconds.
			w.add("(sessions.expires_at > ? OR sessions.active_payment_id IS NOT NULL)", p.Now.Unix())
		}
	}
	if !p.From.IsZero() {
		w.add(t+"created_at >= ?", ceilUnix(p.From))
	}
	if !p.To.IsZero() {
		w.add(t+"created_at < ?", ceilUnix(p.To))
	}
	if !p.After.IsZero() {
		// The keyset: (created_at, id) < (At, ID), written so that its
		// first part bounds the index range on either database.
		at := p.After.At.Unix()
		w.add(t+"created_at <= ?", at)
		w.add("("+t+"created_at < ? OR "+idCol+" < ?)", at, p.After.ID)
	}
	return `SELECT ` + sessionListColumns + ` FROM ` + from + ` WHERE ` + w.sql(db.dialect) +
		` ORDER BY ` + t + `created_at DESC, ` + idCol + ` DESC LIMIT ` + strconv.Itoa(limit), w.argsFor(db.dialect)
}
