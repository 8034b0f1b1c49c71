package service

import (
	"context"
	"encoding/json"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// CreateSessionParams are the inputs of CreateSession.
type CreateSessionParams struct {
	Key     *checkout.APIKey
	StoreID string
	Params  *checkout.CreateParams
	// IdempotencyKey, when not empty, makes the request safe to retry.
	IdempotencyKey string
}

// CreateSessionResult is the outcome of CreateSession: the created session
// as the API shows it, and whether it is the replay of an earlier request
// (the session that request created, as it was then).
type CreateSessionResult struct {
	Data     json.RawMessage
	Replayed bool
}

// CreateSession creates an open session in the key's store and mode and
// records checkout.created in the same transaction. With an idempotency key
// it returns the first outcome again for the same request, and fails with
// idempotency_conflict for another.
func (s *Service) CreateSession(ctx context.Context, p CreateSessionParams) (*CreateSessionResult, error) {
	if err := s.checkStore(p.Key, p.StoreID); err != nil {
		return nil, err
	}
	var hash string
	if p.IdempotencyKey != "" {
		hash = requestHash(p.StoreID, p.Params)
		if res, err := s.replay(ctx, p, hash); res != nil || err != nil {
			return res, err
		}
	}
	m, err := s.Merchant(ctx, p.StoreID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	sess := checkout.NewSession(p.Params, m, p.Key.Mode, now)
	data, err := json.Marshal(sess.View(m, s.checkoutBaseURL))
	if err != nil {
		return nil, checkout.Internal(err)
	}
	res := &CreateSessionResult{Data: data}
	err = s.inTx(ctx, func(tx *txn) error {
		if p.IdempotencyKey != "" {
			err := tx.IdempotencyInsert(ctx, &checkout.IdempotencyRecord{
				MerchantID: p.StoreID, Mode: p.Key.Mode, Key: p.IdempotencyKey,
				RequestHash: hash, Body: data, CreatedAt: now,
			})
			if err != nil {
				return err
			}
		}
		if err := tx.SessionInsert(ctx, sess); err != nil {
			return err
		}
		return s.emit(ctx, tx, sess.MerchantID, sess.Mode, checkout.EventCheckoutCreated, data)
	})
	if checkout.IsCode(err, checkout.EConflict) && p.IdempotencyKey != "" {
		// Another request with the same key committed first: answer as it did.
		if res, err := s.replay(ctx, p, hash); res != nil || err != nil {
			return res, err
		}
	}
	if err != nil {
		return nil, err
	}
	s.counts.created.inc(sess.Mode)
	return res, nil
}

// replay returns the saved outcome for the request's idempotency key, nil
// when there is none yet (or it is older than the window), and
// idempotency_conflict when the key was used for another request.
func (s *Service) replay(ctx context.Context, p CreateSessionParams, hash string) (*CreateSessionResult, error) {
	rec, err := s.store.IdempotencyGet(ctx, p.StoreID, p.Key.Mode, p.IdempotencyKey)
	if checkout.IsCode(err, checkout.ENotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if s.now().Sub(rec.CreatedAt) >= checkout.IdempotencyWindow {
		return nil, nil
	}
	if rec.RequestHash != hash {
		return nil, &checkout.Error{
			Code:    checkout.EIdempotencyConflict,
			Message: "This Idempotency-Key was used with a different request in the last 24 hours. Use a new key for a new request.",
			Param:   "Idempotency-Key",
		}
	}
	return &CreateSessionResult{Data: rec.Body, Replayed: true}, nil
}

// GetSession returns a session of the key's store and mode as the API shows
// it. A session whose hour is over turns expired here and now, emitting
// checkout.expired, rather than wait for the background job.
func (s *Service) GetSession(ctx context.Context, key *checkout.APIKey, storeID, id string) (*checkout.SessionJSON, error) {
	if err := s.checkStore(key, storeID); err != nil {
		return nil, err
	}
	sess, err := s.store.SessionGet(ctx, id)
	if err != nil {
		return nil, err
	}
	if sess.MerchantID != storeID || sess.Mode != key.Mode {
		// Another store's or another mode's session: the same answer as for
		// none at all, so ids leak nothing.
		return nil, checkout.Errorf(checkout.ECheckoutNotFound, "No such checkout session: %s.", id)
	}
	m, err := s.Merchant(ctx, storeID)
	if err != nil {
		return nil, err
	}
	if sess.ExpiryDue(s.now()) {
		if sess, _, err = s.expire(ctx, m, id); err != nil {
			return nil, err
		}
	}
	return sess.View(m, s.checkoutBaseURL), nil
}

// checkStore fails with store_not_found when the key belongs to another
// store: the same answer as for a store that does not exist.
func (s *Service) checkStore(key *checkout.APIKey, storeID string) error {
	if key.MerchantID != storeID {
		return checkout.Errorf(checkout.EStoreNotFound, "No such store: %s.", storeID)
	}
	return nil
}

// ExpireDue expires up to limit sessions that are due and returns how many
// it expired. The expiry job calls it every few seconds. A session that
// cannot be expired is logged and counted (Stats.RowFailures), and the
// others are expired all the same; the errors are returned together.
func (s *Service) ExpireDue(ctx context.Context, limit int) (int, error) {
	due, err := s.store.SessionListDue(ctx, s.now(), limit)
	if err != nil {
		return 0, err
	}
	return eachDue(ctx, s, JobExpireSessions, "session_id", due, func(d *checkout.Session) string { return d.ID },
		func(d *checkout.Session) (bool, error) { return s.expireDue(ctx, d) })
}

// expireDue expires one session that SessionListDue returned.
func (s *Service) expireDue(ctx context.Context, d *checkout.Session) (bool, error) {
	m, err := s.Merchant(ctx, d.MerchantID)
	if err != nil {
		return false, err
	}
	_, expired, err := s.expire(ctx, m, d.ID)
	return expired, err
}

// expire turns the session expired if it is still due once locked, and
// records checkout.expired in the same transaction. It returns the session as
// it stands and whether this call expired it (another node, or a read, may
// have done it first). m is the session's store, read before the
// transaction so that the transaction holds one connection and waits for
// no other.
func (s *Service) expire(ctx context.Context, m *checkout.Merchant, id string) (*checkout.Session, bool, error) {
	var out *checkout.Session
	expired := false
	err := s.inTx(ctx, func(tx *txn) error {
		sess, err := tx.SessionGetForUpdate(ctx, id)
		if err != nil {
			return err
		}
		out = sess
		now := s.now()
		if !sess.ExpiryDue(now) {
			return nil // completed, expired or paid meanwhile
		}
		if err := s.expireLocked(ctx, tx, m, sess, now); err != nil {
			return err
		}
		expired = true
		return nil
	})
	expired = expired && err == nil
	if expired {
		s.counts.expired.inc(out.Mode)
	}
	return out, expired, err
}

// expireBatch is how many sessions one round of ExpireAll takes at a time.
const expireBatch = 500

// ExpireAll expires every due session, in batches, and returns how many.
func (s *Service) ExpireAll(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := s.ExpireDue(ctx, expireBatch)
		total += n
		if err != nil || n < expireBatch {
			return total, err
		}
	}
}

// expireLocked expires a locked, due session in tx and records
// checkout.expired.
func (s *Service) expireLocked(ctx context.Context, tx *txn, m *checkout.Merchant, sess *checkout.Session, now time.Time) error {
	if err := sess.Expire(now); err != nil {
		return err
	}
	if err := tx.SessionUpdate(ctx, sess); err != nil {
		return err
	}
	return s.emitSession(ctx, tx, m, checkout.EventCheckoutExpired, sess)
}
