package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// Listeners: `checkoutd listen` receives a store's test-mode events on a
// developer's machine (docs/webhooks.md, Local development). A listener is
// an endpoint of kind listener, so every event it subscribes to gets a row
// in the deliveries table as for any endpoint, and waits there while the
// developer is away. The dispatcher never attempts one (checkout.ListenerHold):
// the listener's stream sends its pending deliveries one at a time, oldest
// first, and `checkoutd listen` forwards each to the local URL and reports
// the local answer (ListenerResult), which finishes the delivery.

// ErrListenerReplaced ends a listener's stream when a newer stream holds
// the listener, or the listener was deleted.
var ErrListenerReplaced = errors.New("another stream holds the listener, or it was deleted")

// listenerTouchEvery is how often a connected stream notes that its listener
// is still connected (seen_at), against ListenerIdleLimit's 24 hours.
const listenerTouchEvery = time.Minute

// Listen registers a listener for the key's store under p.Name or, when
// the store has one of that name, resumes it: its events become p.Events
// and it is enabled again and counts as seen now, keeping its id, signing
// secret and waiting deliveries. Only a test-mode key may listen: live events never reach a
// listener.
func (s *Service) Listen(ctx context.Context, key *checkout.APIKey, p checkout.ListenerParams) (*checkout.Endpoint, error) {
	if key.Mode != checkout.ModeTest {
		return nil, checkout.Errorf(checkout.EPermissionDenied,
			"checkoutd listen receives test-mode events only; use a test-mode key (ck_test_...). Live events go to HTTPS endpoints.")
	}
	p.MerchantID = key.MerchantID
	p, err := checkout.NormalizeListener(p)
	if err != nil {
		return nil, err
	}
	var ep *checkout.Endpoint
	err = s.inTx(ctx, func(tx *txn) error {
		if err := tx.MerchantLock(ctx, p.MerchantID); err != nil {
			return err
		}
		listeners, err := tx.ListenersForUpdate(ctx, p.MerchantID)
		if err != nil {
			return err
		}
		now := s.now()
		for _, l := range listeners {
			if l.ListenerName == p.Name {
				// The developer is back: it receives events from now on,
				// even before its stream connects.
				ep = l
				ep.Events, ep.Enabled, ep.UpdatedAt, ep.SeenAt = p.Events, true, now, now
				if err := tx.EndpointUpdate(ctx, ep); err != nil {
					return err
				}
				return tx.ListenerSeen(ctx, ep.ID, now)
			}
		}
		if len(listeners) >= checkout.MaxListenersPerStore {
			idlest := listeners[0] // the longest idle first
			if idlest.Receives(now) {
				return &checkout.Error{
					Code: checkout.EValidationFailed,
					Message: fmt.Sprintf("A store can have at most %d listeners, and each of this store's was connected in the last 24 hours; "+
						"listen under the name of one of them (--name), or delete one in the dashboard (Developers, Webhooks).", checkout.MaxListenersPerStore),
					Param:   "name",
					Details: []checkout.Violation{{Code: "too_many", Param: "name", Message: fmt.Sprintf("at most %d listeners per store", checkout.MaxListenersPerStore)}},
				}
			}
			if err := tx.EndpointDelete(ctx, idlest.ID); err != nil {
				return err
			}
		}
		ep = checkout.NewListener(p, now)
		return tx.EndpointInsert(ctx, ep)
	})
	if err != nil {
		return nil, err
	}
	return ep, nil
}

// ListenerStream is one connection of a listener: it holds the listener
// until it closes or a newer one connects.
type ListenerStream struct {
	s       *Service
	ID      string
	conn    string
	touched time.Time
}

// ConnectListener opens a stream of the key's listener id, replacing any
// stream that held it (that one ends at its next Next). A listener of
// another store, or an HTTPS endpoint, is not_found.
func (s *Service) ConnectListener(ctx context.Context, key *checkout.APIKey, id string) (*ListenerStream, error) {
	st := &ListenerStream{s: s, ID: id, conn: checkout.NewID("lc_", 16)}
	err := s.inTx(ctx, func(tx *txn) error {
		ep, err := lockEndpoint(ctx, tx, &checkout.Scope{MerchantID: key.MerchantID, Mode: key.Mode}, id)
		if err != nil {
			return err
		}
		if !ep.IsListener() {
			return checkout.EndpointNotFound(id)
		}
		if !ep.Enabled {
			return checkout.Errorf(checkout.EValidationFailed, "Listener %s is disabled; run checkoutd listen again, which enables it.", id)
		}
		st.touched = s.now()
		return tx.ListenerConnect(ctx, id, st.conn, st.touched)
	})
	if err != nil {
		return nil, err
	}
	s.broadcast()
	return st, nil
}

// Next returns the listener's oldest pending delivery, or nil when none
// waits; ErrListenerReplaced when this stream no longer holds the listener.
// While the stream lasts it notes, once a minute, that the listener is
// connected.
func (st *ListenerStream) Next(ctx context.Context) (*checkout.Listened, error) {
	if now := st.s.now(); now.Sub(st.touched) >= listenerTouchEvery || now.Before(st.touched) {
		current, err := st.s.store.ListenerTouch(ctx, st.ID, st.conn, now, false)
		if err != nil {
			return nil, err
		}
		if !current {
			return nil, ErrListenerReplaced
		}
		st.touched = now
	}
	l, current, err := st.s.store.ListenerNext(ctx, st.ID, st.conn)
	if err != nil {
		return nil, err
	}
	if !current {
		return nil, ErrListenerReplaced
	}
	return l, nil
}

// Sign returns the Service-Webhook-Signature of body sent now to the
// listener: signed with its current secrets, as the dispatcher signs for an
// HTTPS endpoint, so a roll takes effect at once here too.
func (st *ListenerStream) Sign(ctx context.Context, body []byte) (string, time.Time, error) {
	ep, err := st.s.store.EndpointGet(ctx, st.ID)
	if err != nil {
		return "", time.Time{}, err
	}
	now := st.s.now()
	return checkout.SignWebhookSecrets(ep.SigningSecrets(now), now, body), now, nil
}

// Close ends the stream: the listener was connected until now, and its
// idle time starts.
func (st *ListenerStream) Close(ctx context.Context) error {
	_, err := st.s.store.ListenerTouch(ctx, st.ID, st.conn, st.s.now(), true)
	return err
}

// ListenerResult records what `checkoutd listen` got from the local URL for
// a delivery of the key's listener: the attempt, with the local answer, and
// the delivery's end (succeeded on 2xx, failed otherwise:
// checkout.Delivery.RecordListened). Reporting a finished delivery again
// changes nothing, so a client may repeat a report it is unsure arrived.
func (s *Service) ListenerResult(ctx context.Context, key *checkout.APIKey, listenerID, deliveryID string, r checkout.ListenerResult) (*checkout.Delivery, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	var d *checkout.Delivery
	err := s.inTx(ctx, func(tx *txn) error {
		ep, err := lockEndpoint(ctx, tx, &checkout.Scope{MerchantID: key.MerchantID, Mode: key.Mode}, listenerID)
		if err != nil {
			return err
		}
		if !ep.IsListener() {
			return checkout.EndpointNotFound(listenerID)
		}
		if d, err = tx.DeliveryGetForUpdate(ctx, deliveryID); err != nil {
			return err
		}
		if d.EndpointID != ep.ID {
			return checkout.DeliveryNotFound(deliveryID)
		}
		if d.Finished() {
			return nil
		}
		now := s.now()
		a := &checkout.Attempt{
			DeliveryID:   d.ID,
			Number:       d.Attempts + 1,
			StartedAt:    now.Add(-r.Duration),
			Duration:     r.Duration,
			StatusCode:   r.StatusCode,
			Error:        checkout.StorableText(r.Error),
			ResponseBody: truncateText(checkout.StorableText(r.ResponseBody), checkout.MaxAttemptResponse),
		}
		if a.Error == "" && (a.StatusCode < 200 || a.StatusCode >= 300) {
			a.Error = fmt.Sprintf("the local receiver answered %d; only 2xx counts as delivered", a.StatusCode)
		}
		d.RecordListened(a, now)
		return tx.DeliveryRecordListened(ctx, a, d)
	})
	if err != nil {
		return nil, err
	}
	s.broadcast()
	return d, nil
}

// truncateText cuts s to at most n bytes without splitting a character.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// changes tells listeners' streams that deliveries changed in this
// process: a channel closed at the next change.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

// DeliveriesChanged returns a channel closed when deliveries next change
// in this process (an event fanned out, a listener's result recorded). A
// stream waits on it between reads, and polls as well for the changes of
// other processes.
func (s *Service) DeliveriesChanged() <-chan struct{} {
	s.changes.mu.Lock()
	defer s.changes.mu.Unlock()
	if s.changes.ch == nil {
		s.changes.ch = make(chan struct{})
	}
	return s.changes.ch
}

func (s *Service) broadcast() {
	s.changes.mu.Lock()
	defer s.changes.mu.Unlock()
	if s.changes.ch != nil {
		close(s.changes.ch)
		s.changes.ch = nil
	}
}
