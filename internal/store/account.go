package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const accountColumns = `id, email, password_hash, created_at`

func scanAccount(row scanner) (*checkout.Account, error) {
	var a checkout.Account
	var created int64
	if err := row.Scan(&a.ID, &a.Email, &a.PasswordHash, &created); err != nil {
		return nil, err
	}
	a.CreatedAt = time.Unix(created, 0)
	return &a, nil
}

func (db *DB) accountWhere(ctx context.Context, where string, arg any) (*checkout.Account, error) {
	a, err := scanAccount(db.readRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such account.")
	}
	return a, db.translate(err)
}

// AccountGet finds an account by id.
func (db *DB) AccountGet(ctx context.Context, id string) (*checkout.Account, error) {
	return db.accountWhere(ctx, `id = $1`, id)
}

// AccountGetByEmail finds an account by its email, exactly as given: the
// caller normalises it.
func (db *DB) AccountGetByEmail(ctx context.Context, email string) (*checkout.Account, error) {
	return db.accountWhere(ctx, `email = $1`, email)
}

// AccountInsert stores a new account; conflict when its id or email is
// taken.
func (tx *Tx) AccountInsert(ctx context.Context, a *checkout.Account) error {
	_, err := tx.exec(ctx, `INSERT INTO accounts (`+accountColumns+`) VALUES ($1, $2, $3, $4)`,
		a.ID, a.Email, a.PasswordHash, a.CreatedAt.Unix())
	return tx.db.translate(err)
}

// AccountSetPasswordHash replaces an account's password hash.
func (tx *Tx) AccountSetPasswordHash(ctx context.Context, id, hash string) error {
	res, err := tx.exec(ctx, `UPDATE accounts SET password_hash = $1 WHERE id = $2`, hash, id)
	if err != nil {
		return tx.db.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return tx.db.translate(err)
	}
	if n == 0 {
		return checkout.Errorf(checkout.ENotFound, "No such account: %s.", id)
	}
	return nil
}

const membershipColumns = `account_id, store_id, created_at`

func scanMembership(row scanner) (*checkout.Membership, error) {
	var m checkout.Membership
	var created int64
	if err := row.Scan(&m.AccountID, &m.MerchantID, &created); err != nil {
		return nil, err
	}
	m.CreatedAt = time.Unix(created, 0)
	return &m, nil
}

// MembershipGet returns an account's membership of a store; not_found when
// the account is not a member.
func (db *DB) MembershipGet(ctx context.Context, accountID, merchantID string) (*checkout.Membership, error) {
	m, err := scanMembership(db.readRow(ctx,
		`SELECT `+membershipColumns+` FROM memberships WHERE account_id = $1 AND store_id = $2`, accountID, merchantID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such membership.")
	}
	return m, db.translate(err)
}

// MembershipList returns an account's memberships, oldest first.
func (db *DB) MembershipList(ctx context.Context, accountID string) ([]*checkout.Membership, error) {
	rows, err := db.readRows(ctx, `SELECT `+membershipColumns+` FROM memberships WHERE account_id = $1 ORDER BY created_at, store_id`, accountID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanMembership)
}

// MembershipInsert stores a membership; conflict when the account is a
// member of the store already.
func (tx *Tx) MembershipInsert(ctx context.Context, m *checkout.Membership) error {
	_, err := tx.exec(ctx, `INSERT INTO memberships (`+membershipColumns+`) VALUES ($1, $2, $3)`,
		m.AccountID, m.MerchantID, m.CreatedAt.Unix())
	return tx.db.translate(err)
}
