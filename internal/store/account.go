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

const membershipColumns = `account_id, store_id, role, created_at`

func scanMembership(row scanner) (*checkout.Membership, error) {
	var m checkout.Membership
	var created int64
	if err := row.Scan(&m.AccountID, &m.MerchantID, &m.Role, &created); err != nil {
		return nil, err
	}
	m.CreatedAt = time.Unix(created, 0)
	return &m, nil
}

func scanMembershipEmail(row scanner) (*checkout.Membership, error) {
	var m checkout.Membership
	var created int64
	if err := row.Scan(&m.AccountID, &m.MerchantID, &m.Role, &created, &m.Email); err != nil {
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

// storeMembersQuery lists a store's members with their emails, oldest
// first.
const storeMembersQuery = `SELECT m.account_id, m.store_id, m.role, m.created_at, a.email
	FROM memberships m JOIN accounts a ON a.id = m.account_id
	WHERE m.store_id = $1 ORDER BY m.created_at, m.account_id`

// MembershipListByStore returns a store's members with their emails,
// oldest first.
func (db *DB) MembershipListByStore(ctx context.Context, merchantID string) ([]*checkout.Membership, error) {
	rows, err := db.readRows(ctx, storeMembersQuery, merchantID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanMembershipEmail)
}

// MembershipInsert stores a membership; conflict when the account is a
// member of the store already.
func (tx *Tx) MembershipInsert(ctx context.Context, m *checkout.Membership) error {
	_, err := tx.exec(ctx, `INSERT INTO memberships (`+membershipColumns+`) VALUES ($1, $2, $3, $4)`,
		m.AccountID, m.MerchantID, string(m.Role), m.CreatedAt.Unix())
	return tx.db.translate(err)
}

// MembershipListForUpdate returns a store's members with their emails,
// oldest first, locked until the transaction ends (on SQLite, whose writes
// run one at a time, the transaction holds the database already).
func (tx *Tx) MembershipListForUpdate(ctx context.Context, merchantID string) ([]*checkout.Membership, error) {
	q := storeMembersQuery
	if tx.db.dialect.ForUpdate != "" {
		q += tx.db.dialect.ForUpdate + " OF m"
	}
	var ms []*checkout.Membership
	err := tx.each(ctx, q, []any{merchantID}, func(row scanner) error {
		m, err := scanMembershipEmail(row)
		if err == nil {
			ms = append(ms, m)
		}
		return err
	})
	return ms, tx.db.translate(err)
}

// MembershipSetRole changes a member's role; not_found when the account is
// not a member of the store.
func (tx *Tx) MembershipSetRole(ctx context.Context, accountID, merchantID string, r checkout.Role) error {
	res, err := tx.exec(ctx, `UPDATE memberships SET role = $1 WHERE account_id = $2 AND store_id = $3`, string(r), accountID, merchantID)
	return tx.oneRow(res, err, "No such member.")
}

// MembershipDelete removes a member from a store; not_found when the
// account is not a member of it.
func (tx *Tx) MembershipDelete(ctx context.Context, accountID, merchantID string) error {
	res, err := tx.exec(ctx, `DELETE FROM memberships WHERE account_id = $1 AND store_id = $2`, accountID, merchantID)
	return tx.oneRow(res, err, "No such member.")
}

// oneRow is the outcome of a statement that changes one row: not_found
// with msg when it changed none.
func (tx *Tx) oneRow(res sql.Result, err error, msg string) error {
	if err != nil {
		return tx.db.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return tx.db.translate(err)
	}
	if n == 0 {
		return checkout.Errorf(checkout.ENotFound, "%s", msg)
	}
	return nil
}

const invitationColumns = `id, store_id, email, role, token_hash, invited_by, created_at, expires_at, accepted_at, accepted_by, revoked_at`

func scanInvitation(row scanner) (*checkout.Invitation, error) {
	var inv checkout.Invitation
	var created, expires int64
	var accepted, revoked sql.NullInt64
	var acceptedBy sql.NullString
	if err := row.Scan(&inv.ID, &inv.MerchantID, &inv.Email, &inv.Role, &inv.TokenHash, &inv.InvitedBy, &created, &expires,
		&accepted, &acceptedBy, &revoked); err != nil {
		return nil, err
	}
	inv.CreatedAt, inv.ExpiresAt, inv.AcceptedBy = time.Unix(created, 0), time.Unix(expires, 0), acceptedBy.String
	if accepted.Valid {
		t := time.Unix(accepted.Int64, 0)
		inv.AcceptedAt = &t
	}
	if revoked.Valid {
		t := time.Unix(revoked.Int64, 0)
		inv.RevokedAt = &t
	}
	return &inv, nil
}

// InvitationGetByHash finds an invitation by its token's hash.
func (db *DB) InvitationGetByHash(ctx context.Context, tokenHash string) (*checkout.Invitation, error) {
	inv, err := scanInvitation(db.readRow(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE token_hash = $1`, tokenHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such invitation.")
	}
	return inv, db.translate(err)
}

// InvitationListPending returns a store's invitations whose links work at
// now, newest first. A store has few: it is not paged.
func (db *DB) InvitationListPending(ctx context.Context, merchantID string, now time.Time) ([]*checkout.Invitation, error) {
	rows, err := db.readRows(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE store_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2
		ORDER BY created_at DESC, id DESC`, merchantID, now.Unix())
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanInvitation)
}

// InvitationInsert stores a new invitation.
func (tx *Tx) InvitationInsert(ctx context.Context, inv *checkout.Invitation) error {
	_, err := tx.exec(ctx, `INSERT INTO invitations (`+invitationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, NULL, NULL)`,
		inv.ID, inv.MerchantID, inv.Email, string(inv.Role), inv.TokenHash, inv.InvitedBy, inv.CreatedAt.Unix(), inv.ExpiresAt.Unix())
	return tx.db.translate(err)
}

// InvitationAccept marks an invitation used, if its link still works at t:
// one statement whose condition decides, so that of two at once exactly
// one changes the row.
func (tx *Tx) InvitationAccept(ctx context.Context, id, accountID string, t time.Time) error {
	res, err := tx.exec(ctx, `UPDATE invitations SET accepted_at = $1, accepted_by = $2
		WHERE id = $3 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1`, t.Unix(), accountID, id)
	return tx.oneRow(res, err, "No such invitation pending.")
}

// InvitationRevoke takes back a store's pending invitation.
func (tx *Tx) InvitationRevoke(ctx context.Context, id, merchantID string, t time.Time) error {
	res, err := tx.exec(ctx, `UPDATE invitations SET revoked_at = $1
		WHERE id = $2 AND store_id = $3 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1`, t.Unix(), id, merchantID)
	return tx.oneRow(res, err, "No such invitation pending.")
}
