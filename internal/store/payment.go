package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const paymentColumns = `id, session_id, store_id, mode, method, status, captured, amount, amount_refunded, fee, currency,
	card_brand, card_last4, buyer_country, customer_name, receipt_email, failure_code, failure_message, details, dispute_on_success,
	due_at_ms, created_at_ms, updated_at_ms, succeeded_at, tx_hash, amount_refunding, amount_disputed, dispute_fee`

// paymentDetails is the JSON of the details column.
type paymentDetails struct {
	Crypto  *checkout.CryptoDetails `json:"crypto,omitempty"`
	Skins   *checkout.SkinsDetails  `json:"skins,omitempty"`
	Dispute *checkout.DisputePlan   `json:"dispute_plan,omitempty"`
	// Acquirer is a live card payment's place at the card acquirer.
	Acquirer *checkout.AcquirerRef `json:"acquirer,omitempty"`
}

func scanPayment(row scanner) (*checkout.Payment, error) {
	var p checkout.Payment
	var captured, dispute int
	var details string
	var due, succeeded sql.NullInt64
	var created, updated int64
	var txHash sql.NullString // the same as details' crypto.tx_hash
	err := row.Scan(&p.ID, &p.SessionID, &p.MerchantID, &p.Mode, &p.Method, &p.Status, &captured, &p.Amount, &p.AmountRefunded, &p.Fee, &p.Currency,
		&p.CardBrand, &p.CardLast4, &p.BuyerCountry, &p.CustomerName, &p.ReceiptEmail, &p.FailureCode, &p.FailureMessage, &details, &dispute,
		&due, &created, &updated, &succeeded, &txHash, &p.AmountRefunding, &p.AmountDisputed, &p.DisputeFee)
	if err != nil {
		return nil, err
	}
	var d paymentDetails
	if err := json.Unmarshal([]byte(details), &d); err != nil {
		return nil, fmt.Errorf("payment %s: details: %w", p.ID, err)
	}
	p.Crypto, p.Skins, p.DisputePlan, p.Acquirer = d.Crypto, d.Skins, d.Dispute, d.Acquirer
	p.DisputeOnSuccess = dispute != 0
	p.DueAt = msPtr(due)
	p.CreatedAt = time.UnixMilli(created)
	p.UpdatedAt = time.UnixMilli(updated)
	if succeeded.Valid {
		t := time.Unix(succeeded.Int64, 0)
		p.SucceededAt = &t
	}
	return &p, nil
}

func paymentArgs(p *checkout.Payment) ([]any, error) {
	details, err := json.Marshal(paymentDetails{Crypto: p.Crypto, Skins: p.Skins, Dispute: p.DisputePlan, Acquirer: p.Acquirer})
	if err != nil {
		return nil, err
	}
	var txHash *string
	if p.Crypto != nil {
		txHash = &p.Crypto.TxHash
	}
	return []any{p.ID, p.SessionID, p.MerchantID, string(p.Mode), string(p.Method), string(p.Status), boolInt(p.Status.Captured()),
		p.Amount, p.AmountRefunded, p.Fee, p.Currency,
		p.CardBrand, p.CardLast4, p.BuyerCountry, p.CustomerName, p.ReceiptEmail, p.FailureCode, p.FailureMessage, string(details), boolInt(p.DisputeOnSuccess),
		unixMilliPtr(p.DueAt), p.CreatedAt.UnixMilli(), p.UpdatedAt.UnixMilli(), unixPtr(p.SucceededAt), txHash, p.AmountRefunding, p.AmountDisputed, p.DisputeFee, boolInt(p.RefundDue())}, nil
}

func paymentNotFound(id string) error {
	return checkout.Errorf(checkout.ENotFound, "No such payment: %s.", id)
}

// PaymentInsert stores a new payment. A second captured payment of one
// session is a conflict.
func (tx *Tx) PaymentInsert(ctx context.Context, p *checkout.Payment) error {
	args, err := paymentArgs(p)
	if err != nil {
		return err
	}
	// refund_due is derived from the payment, as captured is, and never
	// read back: it is what the refund list's index holds (migration 0016).
	_, err = tx.exec(ctx, `INSERT INTO payments (`+paymentColumns+`, refund_due)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29)`, args...)
	return tx.db.translate(err)
}

// PaymentUpdate writes a payment's mutable fields. Capturing a second
// payment of one session is a conflict.
func (tx *Tx) PaymentUpdate(ctx context.Context, p *checkout.Payment) error {
	details, err := json.Marshal(paymentDetails{Crypto: p.Crypto, Skins: p.Skins, Dispute: p.DisputePlan, Acquirer: p.Acquirer})
	if err != nil {
		return err
	}
	res, err := tx.exec(ctx, `UPDATE payments SET status = $2, captured = $3, amount_refunded = $4, fee = $5,
		card_brand = $6, card_last4 = $7, buyer_country = $8, customer_name = $9, failure_code = $10, failure_message = $11,
		details = $12, dispute_on_success = $13, due_at_ms = $14, updated_at_ms = $15, succeeded_at = $16, receipt_email = $17,
		refund_due = $18, amount_refunding = $19, amount_disputed = $20, dispute_fee = $21
		WHERE id = $1`,
		p.ID, string(p.Status), boolInt(p.Status.Captured()), p.AmountRefunded, p.Fee,
		p.CardBrand, p.CardLast4, p.BuyerCountry, p.CustomerName, p.FailureCode, p.FailureMessage,
		string(details), boolInt(p.DisputeOnSuccess), unixMilliPtr(p.DueAt), p.UpdatedAt.UnixMilli(), unixPtr(p.SucceededAt), p.ReceiptEmail,
		boolInt(p.RefundDue()), p.AmountRefunding, p.AmountDisputed, p.DisputeFee)
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return paymentNotFound(p.ID)
	}
	return nil
}

// PaymentGetForUpdate reads and locks a payment.
func (tx *Tx) PaymentGetForUpdate(ctx context.Context, id string) (*checkout.Payment, error) {
	p, err := scanPayment(tx.row(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1`+tx.db.dialect.ForUpdate, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, paymentNotFound(id)
	}
	return p, tx.db.translate(err)
}

// PaymentGetByTxHash returns the crypto payment of a session made by a
// transaction.
func (tx *Tx) PaymentGetByTxHash(ctx context.Context, sessionID, txHash string) (*checkout.Payment, error) {
	p, err := scanPayment(tx.row(ctx, `SELECT `+paymentColumns+` FROM payments WHERE session_id = $1 AND tx_hash = $2`, sessionID, txHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No payment of %s by transaction %s.", sessionID, txHash)
	}
	return p, tx.db.translate(err)
}

// PaymentCountFailed counts a session's failed payments by method.
func (tx *Tx) PaymentCountFailed(ctx context.Context, sessionID string, method checkout.PaymentMethod) (int, error) {
	var n int
	err := tx.row(ctx, `SELECT COUNT(*) FROM payments WHERE session_id = $1 AND method = $2 AND status = 'failed'`,
		sessionID, string(method)).Scan(&n)
	return n, tx.db.translate(err)
}

// CryptoQuoteInsert stores a quote unless the session already has one for
// the coin.
func (tx *Tx) CryptoQuoteInsert(ctx context.Context, q *checkout.CryptoQuote) error {
	keyIndex := q.KeyIndex
	if q.KeyID == "" {
		keyIndex = -1
	}
	_, err := tx.exec(ctx, `INSERT INTO crypto_quotes (session_id, coin, address, amount_base, created_at_ms, key_id, key_index, expires_at_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (session_id, coin) DO NOTHING`,
		q.SessionID, q.Coin, q.Address, q.AmountBase, q.CreatedAt.UnixMilli(), q.KeyID, keyIndex, unixMilliOrZero(q.ExpiresAt))
	return tx.db.translate(err)
}

// PaymentGet returns a payment by id.
func (db *DB) PaymentGet(ctx context.Context, id string) (*checkout.Payment, error) {
	p, err := scanPayment(db.readRow(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, paymentNotFound(id)
	}
	return p, db.translate(err)
}

// PaymentListBySession returns a session's payments, oldest first.
func (db *DB) PaymentListBySession(ctx context.Context, sessionID string) ([]*checkout.Payment, error) {
	rows, err := db.readRows(ctx, `SELECT `+paymentColumns+` FROM payments WHERE session_id = $1 ORDER BY created_at_ms, id`, sessionID)
	if err != nil {
		return nil, db.translate(err)
	}
	return db.scanPayments(rows)
}

// PaymentListDue returns at most limit payments whose due time has come,
// the longest due first. The payments job reads it: a payment that cannot
// be read is skipped (collectSkipping).
func (db *DB) PaymentListDue(ctx context.Context, now time.Time, limit int) ([]*checkout.Payment, error) {
	rows, err := db.readRows(ctx, `SELECT `+paymentColumns+` FROM payments WHERE due_at_ms IS NOT NULL AND due_at_ms <= $1 ORDER BY due_at_ms LIMIT $2`,
		now.UnixMilli(), limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collectSkipping(db, rows, "payments", scanPayment)
}

// PaymentList returns a page of a store's payments of one mode, newest
// first by (created_at_ms, id), with p's filters: the dashboard's Payments.
// Each filter is served by an index of migration 0016 that starts with the
// scope and ends with the order, so the page is read off it in order and
// the query stops at the limit:
//
//	no filter     payments_list       (store_id, mode, created_at_ms, id)
//	Status        payments_status     (store_id, mode, status, created_at_ms, id)
//	RefundDue     payments_refund_due (store_id, mode, created_at_ms, id) WHERE refund_due = 1
//
// TestPaymentListPlans checks the plans on both databases.
func (db *DB) PaymentList(ctx context.Context, p checkout.PaymentListParams) ([]*checkout.Payment, error) {
	q, args := db.paymentListQuery(p)
	rows, err := db.readRows(ctx, q, args...)
	if err != nil {
		return nil, db.translate(err)
	}
	return db.scanPayments(rows)
}

// paymentListQuery builds PaymentList's query and its arguments. Its text
// depends only on which filters are set, so the statement cache holds a
// few.
func (db *DB) paymentListQuery(p checkout.PaymentListParams) (string, []any) {
	limit := p.Limit
	if limit <= 0 {
		limit = 50
	}
	var w where
	w.add("store_id = ?", p.MerchantID)
	w.add("mode = ?", string(p.Mode))
	if p.Status != "" {
		w.add("status = ?", string(p.Status))
	}
	if p.RefundDue {
		// Written as payments_refund_due's condition, so that both
		// databases see the partial index answers it.
		w.add("refund_due = 1")
	}
	if !p.After.IsZero() {
		// The keyset: (created_at_ms, id) < (At, ID), written so that its
		// first part bounds the index range on either database.
		at := p.After.At.UnixMilli()
		w.add("created_at_ms <= ?", at)
		w.add("(created_at_ms < ? OR id < ?)", at, p.After.ID)
	}
	return `SELECT ` + paymentColumns + ` FROM payments WHERE ` + w.sql(db.dialect) +
		` ORDER BY created_at_ms DESC, id DESC LIMIT ` + strconv.Itoa(limit), w.argsFor(db.dialect)
}

// PaymentCountRefundDue counts a store's payments of one mode that are to be
// refunded, up to limit, from payments_refund_due: the dashboard says how
// many wait ("100 or more" past its limit) without counting a long history.
func (db *DB) PaymentCountRefundDue(ctx context.Context, merchantID string, mode checkout.Mode, limit int) (int, error) {
	var n int
	err := db.readRow(ctx, paymentCountRefundDueQuery, merchantID, string(mode), limit).Scan(&n)
	return n, db.translate(err)
}

const paymentCountRefundDueQuery = `SELECT COUNT(*) FROM
	(SELECT 1 FROM payments WHERE store_id = $1 AND mode = $2 AND refund_due = 1 LIMIT $3) due`

func (db *DB) scanPayments(rows *sql.Rows) ([]*checkout.Payment, error) {
	defer rows.Close()
	var out []*checkout.Payment
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, db.translate(err)
		}
		out = append(out, p)
	}
	return out, db.translate(rows.Err())
}

const cryptoQuoteColumns = `session_id, coin, address, amount_base, created_at_ms, key_id, key_index, expires_at_ms`

func scanCryptoQuote(row scanner) (*checkout.CryptoQuote, error) {
	var q checkout.CryptoQuote
	var created, expires int64
	if err := row.Scan(&q.SessionID, &q.Coin, &q.Address, &q.AmountBase, &created, &q.KeyID, &q.KeyIndex, &expires); err != nil {
		return nil, err
	}
	q.CreatedAt = time.UnixMilli(created)
	if q.KeyID == "" {
		q.KeyIndex = 0 // stored as -1: no index
	}
	if expires != 0 {
		q.ExpiresAt = time.UnixMilli(expires)
	}
	return &q, nil
}

func noQuote(sessionID, coin string) error {
	return checkout.Errorf(checkout.ENotFound, "No %s quote for session %s.", coin, sessionID)
}

// CryptoQuoteGet returns a session's quote for a coin.
func (db *DB) CryptoQuoteGet(ctx context.Context, sessionID, coin string) (*checkout.CryptoQuote, error) {
	q, err := scanCryptoQuote(db.readRow(ctx, `SELECT `+cryptoQuoteColumns+` FROM crypto_quotes WHERE session_id = $1 AND coin = $2`, sessionID, coin))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noQuote(sessionID, coin)
	}
	return q, db.translate(err)
}

// CryptoQuoteGet returns a session's quote for a coin, in the transaction.
func (tx *Tx) CryptoQuoteGet(ctx context.Context, sessionID, coin string) (*checkout.CryptoQuote, error) {
	q, err := scanCryptoQuote(tx.row(ctx, `SELECT `+cryptoQuoteColumns+` FROM crypto_quotes WHERE session_id = $1 AND coin = $2`, sessionID, coin))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noQuote(sessionID, coin)
	}
	return q, tx.db.translate(err)
}

// CryptoQuoteByAddress returns the quote that pays to a coin's address: a
// live address belongs to one quote. not_found when none does.
func (db *DB) CryptoQuoteByAddress(ctx context.Context, coin, address string) (*checkout.CryptoQuote, error) {
	q, err := scanCryptoQuote(db.readRow(ctx, `SELECT `+cryptoQuoteColumns+` FROM crypto_quotes WHERE coin = $1 AND address = $2
		ORDER BY created_at_ms LIMIT 1`, coin, address))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No %s quote pays to %s.", coin, address)
	}
	return q, db.translate(err)
}

// CryptoQuoteAddressesOpen returns the addresses of a coin's live quotes
// whose session is still open: those a node must watch, after a restart of
// a node that keeps its watch list in memory.
func (db *DB) CryptoQuoteAddressesOpen(ctx context.Context, coin string) ([]string, error) {
	rows, err := db.readRows(ctx, `SELECT q.address FROM crypto_quotes q JOIN sessions s ON s.id = q.session_id
		WHERE q.coin = $1 AND q.key_id <> '' AND s.status = 'open' ORDER BY q.created_at_ms`, coin)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, func(row scanner) (string, error) {
		var a string
		return a, row.Scan(&a)
	})
}

// CryptoQuoteRequote prices a live quote again: a new amount, holding until
// expiresAt; its address stays.
func (tx *Tx) CryptoQuoteRequote(ctx context.Context, sessionID, coin, amountBase string, expiresAt time.Time) error {
	_, err := tx.exec(ctx, `UPDATE crypto_quotes SET amount_base = $3, expires_at_ms = $4 WHERE session_id = $1 AND coin = $2`,
		sessionID, coin, amountBase, expiresAt.UnixMilli())
	return tx.db.translate(err)
}
