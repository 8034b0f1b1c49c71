package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// AccountsExist reports whether there is any account at all.
func (db *DB) AccountsExist(ctx context.Context) (bool, error) {
	var n int
	err := db.readRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM accounts LIMIT 1) AS a`).Scan(&n)
	return n > 0, db.translate(err)
}

const dashboardSessionColumns = `id, account_id, created_at, last_seen_at, expires_at`

// DashboardSessionGet returns a dashboard session by id (the hash of its
// token); not_found when there is none.
func (db *DB) DashboardSessionGet(ctx context.Context, id string) (*checkout.DashboardSession, error) {
	var ds checkout.DashboardSession
	var created, seen, expires int64
	err := db.readRow(ctx, `SELECT `+dashboardSessionColumns+` FROM dashboard_sessions WHERE id = $1`, id).
		Scan(&ds.ID, &ds.AccountID, &created, &seen, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such dashboard session.")
	}
	if err != nil {
		return nil, db.translate(err)
	}
	ds.CreatedAt, ds.LastSeenAt, ds.ExpiresAt = time.Unix(created, 0), time.Unix(seen, 0), time.Unix(expires, 0)
	return &ds, nil
}

// DashboardSessionInsert stores a new dashboard session; conflict when its
// id is taken.
func (tx *Tx) DashboardSessionInsert(ctx context.Context, ds *checkout.DashboardSession) error {
	_, err := tx.exec(ctx, `INSERT INTO dashboard_sessions (`+dashboardSessionColumns+`) VALUES ($1, $2, $3, $4, $5)`,
		ds.ID, ds.AccountID, ds.CreatedAt.Unix(), ds.LastSeenAt.Unix(), ds.ExpiresAt.Unix())
	return tx.db.translate(err)
}

// DashboardSessionTouch sets a session's last_seen_at; not_found when there
// is no such session.
func (tx *Tx) DashboardSessionTouch(ctx context.Context, id string, t time.Time) error {
	res, err := tx.exec(ctx, `UPDATE dashboard_sessions SET last_seen_at = $2 WHERE id = $1`, id, t.Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return checkout.Errorf(checkout.ENotFound, "No such dashboard session.")
	}
	return nil
}

// DashboardSessionDelete deletes a session, if there is one.
func (tx *Tx) DashboardSessionDelete(ctx context.Context, id string) error {
	_, err := tx.exec(ctx, `DELETE FROM dashboard_sessions WHERE id = $1`, id)
	return tx.db.translate(err)
}

// SetupTokenGet returns a setup token by its hash; not_found when there is
// none.
func (db *DB) SetupTokenGet(ctx context.Context, hash string) (*checkout.SetupToken, error) {
	var st checkout.SetupToken
	var created, expires int64
	var used sql.NullInt64
	err := db.readRow(ctx, `SELECT hash, created_at, expires_at, used_at FROM setup_tokens WHERE hash = $1`, hash).
		Scan(&st.Hash, &created, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such setup token.")
	}
	if err != nil {
		return nil, db.translate(err)
	}
	st.CreatedAt, st.ExpiresAt = time.Unix(created, 0), time.Unix(expires, 0)
	if used.Valid {
		u := time.Unix(used.Int64, 0)
		st.UsedAt = &u
	}
	return &st, nil
}

// SetupTokenInsert stores a new setup token; conflict when its hash is
// taken.
func (tx *Tx) SetupTokenInsert(ctx context.Context, st *checkout.SetupToken) error {
	var used any
	if st.UsedAt != nil {
		used = st.UsedAt.Unix()
	}
	_, err := tx.exec(ctx, `INSERT INTO setup_tokens (hash, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4)`,
		st.Hash, st.CreatedAt.Unix(), st.ExpiresAt.Unix(), used)
	return tx.db.translate(err)
}

// SetupTokenUse marks a token used at t when it is unused and has not
// expired: one conditional UPDATE, so of two transactions using one token
// only one changes its row.
func (tx *Tx) SetupTokenUse(ctx context.Context, hash string, t time.Time) error {
	res, err := tx.exec(ctx, `UPDATE setup_tokens SET used_at = $2 WHERE hash = $1 AND used_at IS NULL AND expires_at > $2`,
		hash, t.Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return checkout.Errorf(checkout.ENotFound, "No usable setup token.")
	}
	return nil
}

// DashboardSessionPurge deletes the sessions that expired before t, in
// batches.
func (db *DB) DashboardSessionPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purgeWhere(ctx, "dashboard_sessions", "id", "expires_at < $1", before.Unix())
}

// SetupTokenPurge deletes the setup tokens that expired before t, in
// batches.
func (db *DB) SetupTokenPurge(ctx context.Context, before time.Time) (int64, error) {
	return db.purgeWhere(ctx, "setup_tokens", "hash", "expires_at < $1", before.Unix())
}
