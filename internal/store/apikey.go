package store

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const apiKeyColumns = `id, name, store_id, mode, type, permissions, secret_hash, secret_hint, created_at, revoked_at, last_used_at, secret_sealed`

func scanAPIKey(row scanner) (*checkout.APIKey, error) {
	var k checkout.APIKey
	var perms string
	var created int64
	var revoked, used sql.NullInt64
	if err := row.Scan(&k.ID, &k.Name, &k.MerchantID, &k.Mode, &k.Type, &perms, &k.SecretHash, &k.SecretHint, &created, &revoked, &used, &k.SealedSecret); err != nil {
		return nil, err
	}
	k.Permissions = checkout.ParsePermissions(perms)
	k.CreatedAt = time.Unix(created, 0)
	k.RevokedAt = timePtr(revoked)
	k.LastUsedAt = timePtr(used)
	return &k, nil
}

func (db *DB) apiKeyWhere(ctx context.Context, where string, arg any) (*checkout.APIKey, error) {
	k, err := scanAPIKey(db.readRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE `+where, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such API key.")
	}
	return k, db.translate(err)
}

// APIKeyGetByHash finds a key by the hash of its secret.
func (db *DB) APIKeyGetByHash(ctx context.Context, hash string) (*checkout.APIKey, error) {
	return db.apiKeyWhere(ctx, `secret_hash = $1`, hash)
}

// APIKeyGet finds a key by id.
func (db *DB) APIKeyGet(ctx context.Context, id string) (*checkout.APIKey, error) {
	return db.apiKeyWhere(ctx, `id = $1`, id)
}

// APIKeyList returns a store's keys, oldest first.
func (db *DB) APIKeyList(ctx context.Context, merchantID string) ([]*checkout.APIKey, error) {
	rows, err := db.readRows(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE store_id = $1 ORDER BY created_at, id`, merchantID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanAPIKey)
}

// apiKeyEachActiveQuery reads through the index of keys by creation
// (migration 0020): what a node reads again, often, is the few keys of the
// last minutes.
const apiKeyEachActiveQuery = `SELECT id, type, secret_hash FROM api_keys WHERE created_at >= $1 AND revoked_at IS NULL`

// APIKeyEachActive calls each with the id, type and secret hash of every
// unrevoked key created at or after since, every store's, in no order; the
// zero time gives them all. The keys are not kept: a node lists a million
// keys in little memory.
func (db *DB) APIKeyEachActive(ctx context.Context, since time.Time, each func(id string, typ checkout.KeyType, secretHash string)) error {
	var from int64
	if !since.IsZero() {
		from = since.Unix()
	}
	rows, err := db.readRows(ctx, apiKeyEachActiveQuery, from)
	if err != nil {
		return db.translate(err)
	}
	defer rows.Close()
	var id, typ, hash string
	for rows.Next() {
		if err := rows.Scan(&id, &typ, &hash); err != nil {
			return db.translate(err)
		}
		each(id, checkout.KeyType(typ), hash)
	}
	return db.translate(rows.Err())
}

// APIKeyInsert stores a new key.
func (tx *Tx) APIKeyInsert(ctx context.Context, k *checkout.APIKey) error {
	_, err := tx.exec(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, NULL, $10)`,
		k.ID, k.Name, k.MerchantID, string(k.Mode), string(k.Type), checkout.JoinPermissions(k.Permissions), k.SecretHash, k.SecretHint, k.CreatedAt.Unix(),
		k.SealedSecret)
	return tx.db.translate(err)
}

// APIKeyListSealed returns every key with a sealed secret (the HMAC keys),
// revoked or not, oldest first, locked for the transaction.
func (tx *Tx) APIKeyListSealed(ctx context.Context) ([]*checkout.APIKey, error) {
	return collectEach(ctx, tx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE secret_sealed <> '' ORDER BY created_at, id`+tx.db.dialect.ForUpdate, nil, scanAPIKey)
}

// APIKeySetSealed writes a key's sealed secret.
func (tx *Tx) APIKeySetSealed(ctx context.Context, id, sealed string) error {
	res, err := tx.exec(ctx, `UPDATE api_keys SET secret_sealed = $2 WHERE id = $1`, id, sealed)
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return checkout.Errorf(checkout.ENotFound, "No such API key: %s.", id)
	}
	return nil
}

// APIKeyRevoke marks a key revoked.
func (tx *Tx) APIKeyRevoke(ctx context.Context, id string, t time.Time) error {
	res, err := tx.exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, id, t.Unix())
	if err != nil {
		return tx.db.translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return checkout.Errorf(checkout.ENotFound, "No such API key: %s.", id)
	}
	return nil
}

// latestUses returns the time of each key's latest log, in Unix seconds.
func latestUses(logs []*checkout.RequestLog) map[string]int64 {
	latest := map[string]int64{}
	for _, l := range logs {
		if t := l.CreatedAt.Unix(); t > latest[l.APIKeyID] {
			latest[l.APIKeyID] = t
		}
	}
	return latest
}

// keysUsed sets the last use of each key of latest to its time there,
// where that is at least checkout.APIKeyUseGranularity after the time
// stored: a key used all day is written once a minute, by whichever node's
// batch comes first, however many nodes serve it. Keys go in id order, so
// that two batches updating the same keys at once on PostgreSQL lock them in
// one order and cannot deadlock.
func (tx *Tx) keysUsed(ctx context.Context, latest map[string]int64) error {
	grain := int64(checkout.APIKeyUseGranularity / time.Second)
	for _, id := range slices.Sorted(maps.Keys(latest)) {
		if _, err := tx.exec(ctx, `UPDATE api_keys SET last_used_at = $2
			WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`, id, latest[id], latest[id]-grain); err != nil {
			return err
		}
	}
	return nil
}

// keyUses are the last uses of API keys that a DB wrote, by key id, in Unix
// seconds.
type keyUses struct {
	mu      sync.Mutex
	written map[string]int64
}

// keysUsedApart notes the last use of the keys of logs (keysUsed), in a
// transaction of its own after the logs' (in another file on SQLite, by
// COPY on PostgreSQL), and only for the keys whose use would change what is
// stored: a key whose use this process wrote less than the granularity
// before its latest log is left alone, as the UPDATE would leave it.
// Without this every batch of logs would cost the database of the sessions
// a transaction.
func (db *DB) keysUsedApart(ctx context.Context, logs []*checkout.RequestLog) error {
	grain := int64(checkout.APIKeyUseGranularity / time.Second)
	latest := latestUses(logs)
	db.keysUsed.mu.Lock()
	for id, t := range latest {
		if w, ok := db.keysUsed.written[id]; ok && t < w+grain {
			delete(latest, id)
		}
	}
	db.keysUsed.mu.Unlock()
	if len(latest) == 0 {
		return nil
	}
	if err := db.InTx(ctx, func(t checkout.Tx) error { return t.(*Tx).keysUsed(ctx, latest) }); err != nil {
		return err
	}
	db.keysUsed.mu.Lock()
	defer db.keysUsed.mu.Unlock()
	if db.keysUsed.written == nil {
		db.keysUsed.written = map[string]int64{}
	}
	for id, t := range latest {
		db.keysUsed.written[id] = max(db.keysUsed.written[id], t)
	}
	return nil
}
