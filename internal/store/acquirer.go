package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const acquirerColumns = `store_id, mode, acquirer, account_id, publishable_key, secret_key_sealed, secret_key_hint,
	webhook_secret_sealed, webhook_secret_hint, warnings, set_by_kind, set_by_id, set_by_name, set_at_ms`

func scanAcquirerAccount(row scanner) (*checkout.AcquirerAccount, error) {
	var a checkout.AcquirerAccount
	var warnings string
	var set int64
	err := row.Scan(&a.MerchantID, &a.Mode, &a.Acquirer, &a.AccountID, &a.PublishableKey, &a.SealedSecretKey, &a.SecretKeyHint,
		&a.SealedWebhookSecret, &a.WebhookSecretHint, &warnings, &a.SetBy.Kind, &a.SetBy.ID, &a.SetBy.Name, &set)
	if err != nil {
		return nil, err
	}
	if warnings != "" {
		a.Warnings = strings.Split(warnings, "\n")
	}
	a.SetAt = time.UnixMilli(set)
	return &a, nil
}

// joinWarnings keeps warnings one a line: each is a sentence, on one line.
func joinWarnings(ws []string) string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		if w = strings.Join(strings.Fields(w), " "); w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, "\n")
}

func noAcquirerAccount(merchantID string, mode checkout.Mode, acquirer string) error {
	return checkout.Errorf(checkout.ENotFound, "Store %s has no %s account in %s mode.", merchantID, acquirer, mode)
}

// AcquirerAccountGet returns a store's account at an acquirer in a mode;
// not_found when it has none.
func (db *DB) AcquirerAccountGet(ctx context.Context, merchantID string, mode checkout.Mode, acquirer string) (*checkout.AcquirerAccount, error) {
	a, err := scanAcquirerAccount(db.readRow(ctx, `SELECT `+acquirerColumns+` FROM acquirer_accounts WHERE store_id = $1 AND mode = $2 AND acquirer = $3`,
		merchantID, string(mode), acquirer))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noAcquirerAccount(merchantID, mode, acquirer)
	}
	return a, db.translate(err)
}

// AcquirerAccountList returns a store's acquirer accounts, by mode and
// acquirer.
func (db *DB) AcquirerAccountList(ctx context.Context, merchantID string) ([]*checkout.AcquirerAccount, error) {
	rows, err := db.readRows(ctx, `SELECT `+acquirerColumns+` FROM acquirer_accounts WHERE store_id = $1 ORDER BY mode, acquirer`, merchantID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanAcquirerAccount)
}

// AcquirerAccountPut stores a store's account at an acquirer in a mode, in
// place of the one it had.
func (tx *Tx) AcquirerAccountPut(ctx context.Context, a *checkout.AcquirerAccount) error {
	_, err := tx.exec(ctx, `INSERT INTO acquirer_accounts (`+acquirerColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		ON CONFLICT (store_id, mode, acquirer) DO UPDATE SET account_id = $4, publishable_key = $5, secret_key_sealed = $6, secret_key_hint = $7,
			webhook_secret_sealed = $8, webhook_secret_hint = $9, warnings = $10, set_by_kind = $11, set_by_id = $12, set_by_name = $13, set_at_ms = $14`,
		a.MerchantID, string(a.Mode), a.Acquirer, a.AccountID, a.PublishableKey, a.SealedSecretKey, a.SecretKeyHint,
		a.SealedWebhookSecret, a.WebhookSecretHint, joinWarnings(a.Warnings), string(a.SetBy.Kind), a.SetBy.ID, a.SetBy.Name, a.SetAt.UnixMilli())
	return tx.db.translate(err)
}

// AcquirerAccountDelete deletes a store's account at an acquirer in a
// mode; not_found when there is none.
func (tx *Tx) AcquirerAccountDelete(ctx context.Context, merchantID string, mode checkout.Mode, acquirer string) error {
	res, err := tx.exec(ctx, `DELETE FROM acquirer_accounts WHERE store_id = $1 AND mode = $2 AND acquirer = $3`, merchantID, string(mode), acquirer)
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return noAcquirerAccount(merchantID, mode, acquirer)
	}
	return nil
}

// AcquirerAccountListSealed returns every store's acquirer account, locked
// for the transaction, in the order of the key.
func (tx *Tx) AcquirerAccountListSealed(ctx context.Context) ([]*checkout.AcquirerAccount, error) {
	return collectEach(ctx, tx, `SELECT `+acquirerColumns+` FROM acquirer_accounts ORDER BY store_id, mode, acquirer`+tx.db.dialect.ForUpdate, nil, scanAcquirerAccount)
}

// AcquirerAccountSetSealed writes an account's sealed secrets (its hints
// stay: the secrets are the same).
func (tx *Tx) AcquirerAccountSetSealed(ctx context.Context, a *checkout.AcquirerAccount) error {
	res, err := tx.exec(ctx, `UPDATE acquirer_accounts SET secret_key_sealed = $4, webhook_secret_sealed = $5 WHERE store_id = $1 AND mode = $2 AND acquirer = $3`,
		a.MerchantID, string(a.Mode), a.Acquirer, a.SealedSecretKey, a.SealedWebhookSecret)
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return noAcquirerAccount(a.MerchantID, a.Mode, a.Acquirer)
	}
	return nil
}
