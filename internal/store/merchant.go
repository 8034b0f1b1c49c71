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

const merchantColumns = `id, name, currency, website, statement_descriptor, created_at, pricing`

func scanMerchant(row scanner) (*checkout.Merchant, error) {
	var m checkout.Merchant
	var created int64
	var pricing string
	if err := row.Scan(&m.ID, &m.Name, &m.Currency, &m.Website, &m.StatementDescriptor, &created, &pricing); err != nil {
		return nil, err
	}
	m.CreatedAt = time.Unix(created, 0)
	m.Pricing = checkout.DefaultPricing
	if pricing != "" {
		if err := json.Unmarshal([]byte(pricing), &m.Pricing); err != nil {
			return nil, fmt.Errorf("store %s: pricing: %w", m.ID, err)
		}
	}
	return &m, nil
}

// pricingText is a store's pricing as stored: ” for the defaults, so that
// stores created before pricing existed, and those left at the defaults,
// follow the defaults.
func pricingText(p checkout.Pricing) (string, error) {
	if p == checkout.DefaultPricing {
		return "", nil
	}
	b, err := json.Marshal(p)
	return string(b), err
}

// MerchantGet returns a store by id.
func (db *DB) MerchantGet(ctx context.Context, id string) (*checkout.Merchant, error) {
	m, err := scanMerchant(db.readRow(ctx, `SELECT `+merchantColumns+` FROM stores WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", id)
	}
	return m, db.translate(err)
}

// MerchantList returns every store, oldest first.
func (db *DB) MerchantList(ctx context.Context) ([]*checkout.Merchant, error) {
	rows, err := db.readRows(ctx, `SELECT `+merchantColumns+` FROM stores ORDER BY created_at, id`)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanMerchant)
}

// MerchantUpdate writes a store's mutable fields.
func (tx *Tx) MerchantUpdate(ctx context.Context, m *checkout.Merchant) error {
	pricing, err := pricingText(m.Pricing)
	if err != nil {
		return err
	}
	res, err := tx.exec(ctx, `UPDATE stores SET name = $1, currency = $2, website = $3, statement_descriptor = $4, pricing = $5
		WHERE id = $6`, m.Name, m.Currency, m.Website, m.StatementDescriptor, pricing, m.ID)
	if err != nil {
		return tx.db.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return tx.db.translate(err)
	}
	if n == 0 {
		return checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", m.ID)
	}
	return nil
}

// MerchantInsert stores a new store.
func (tx *Tx) MerchantInsert(ctx context.Context, m *checkout.Merchant) error {
	pricing, err := pricingText(m.Pricing)
	if err != nil {
		return err
	}
	_, err = tx.exec(ctx, `INSERT INTO stores (`+merchantColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		m.ID, m.Name, m.Currency, m.Website, m.StatementDescriptor, m.CreatedAt.Unix(), pricing)
	return tx.db.translate(err)
}
