package service

import (
	"context"
	"slices"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// PageSession is what the hosted payment page shows of a session.
type PageSession struct {
	Session  *checkout.Session
	Merchant *checkout.Merchant
	// Methods are the payment methods the session's mode offers.
	Methods []checkout.PaymentMethod
	// Coins are the coins the crypto method offers: every coin in test
	// mode; in live mode those with a node here and a key of the store's
	// for the node's chain.
	Coins []checkout.Coin
	// Active is the payment on its way, nil when none is.
	Active *checkout.Payment
	// Paid is the payment that completed the session, nil until one did.
	Paid *checkout.Payment
	// Failed are the session's failed payments. Their order is not that of
	// the attempts: payments made within one tick of the clock tie.
	Failed []*checkout.Payment
	// FailedCardAttempts counts the session's failed card payments.
	FailedCardAttempts int
	// Acquirer is the card acquirer whose element takes the card, when the
	// store has one in the session's mode; nil when the card form is
	// checkoutd's own (test mode's simulator).
	Acquirer *PageAcquirer
}

// PageAcquirer is what the page needs of a store's card acquirer: its
// name, the store's publishable key there, and how the page takes a card
// through its element (scripts, the origins its Content-Security-Policy
// admits).
type PageAcquirer struct {
	Name           string
	PublishableKey string
	Page           pay.AcquirerPage
}

// PageSession returns a session for its payment page. Anyone holding the
// session's id may see this: the page is public. A session whose hour is
// over turns expired here, as on any read.
func (s *Service) PageSession(ctx context.Context, id string) (*PageSession, error) {
	if !checkout.ValidSessionID(id) {
		return nil, checkout.Errorf(checkout.ECheckoutNotFound, "No such checkout session.")
	}
	sess, err := s.store.SessionGet(ctx, id)
	if err != nil {
		return nil, err
	}
	m, err := s.Merchant(ctx, sess.MerchantID)
	if err != nil {
		return nil, err
	}
	if sess.ExpiryDue(s.now()) {
		if sess, _, err = s.expire(ctx, m, id); err != nil {
			return nil, err
		}
	}
	ps := &PageSession{Session: sess, Merchant: m, Methods: s.procs.For(sess.Mode).Methods()}
	sa, err := s.storeAcquirer(ctx, m.ID, sess.Mode)
	if err != nil {
		return nil, err
	}
	if sa != nil {
		ps.Acquirer = &PageAcquirer{Name: sa.name, PublishableKey: sa.publishableKey, Page: sa.page}
		if !slices.Contains(ps.Methods, checkout.MethodCard) {
			ps.Methods = slices.Insert(ps.Methods, 0, checkout.MethodCard)
		}
	}
	if ps.Coins, err = s.coinsOffered(ctx, sess); err != nil {
		return nil, err
	}
	if len(ps.Coins) == 0 {
		ps.Methods = slices.DeleteFunc(ps.Methods, func(m checkout.PaymentMethod) bool { return m == checkout.MethodCrypto })
	}
	payments, err := s.store.PaymentListBySession(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, p := range payments {
		switch {
		case sess.ActivePaymentID != nil && p.ID == *sess.ActivePaymentID:
			ps.Active = p
		case sess.PaymentID != nil && p.ID == *sess.PaymentID:
			ps.Paid = p
		case p.Status == checkout.PaymentFailed:
			ps.Failed = append(ps.Failed, p)
			if p.Method == checkout.MethodCard {
				ps.FailedCardAttempts++
			}
		}
	}
	return ps, nil
}

// Processors returns the processors of a mode.
func (s *Service) Processors(mode checkout.Mode) pay.Processors { return s.procs.For(mode) }
