package checkout

import "time"

// The session state machine (SPEC.md "States and transitions"):
//
//	open ──(payment succeeds)──► complete
//	open ──(hour over, no payment on its way)──► expired
//	open ──(payment fails)──► open
//
// complete and expired are final (DESIGN.md 4.10). A payment on its way
// (ActivePaymentID) keeps the session open past ExpiresAt, and is the only
// payment that may complete it.

// ExpiryDue reports whether s should turn expired at now: it is open, its
// hour is over, and no payment is on its way.
func (s *Session) ExpiryDue(now time.Time) bool {
	return s.Status == StatusOpen && !now.Before(s.ExpiresAt) && !s.PaymentInProgress()
}

// Expire moves s to expired at now. It fails with a conflict when s is not
// due (DESIGN.md 4.10: complete and expired are final).
func (s *Session) Expire(now time.Time) error {
	if !s.ExpiryDue(now) {
		return Errorf(EConflict, "session %s cannot expire: it is %s", s.ID, s.Status)
	}
	s.Status = StatusExpired
	return nil
}

// PaymentDecline returns why s cannot begin a payment at now, or DeclineNone
// when it can: it must be open, within its hour, and held by no other
// payment.
func (s *Session) PaymentDecline(now time.Time) Decline {
	switch {
	case s.Status == StatusComplete:
		return DeclineComplete
	case s.Status == StatusExpired:
		return DeclineExpired
	case s.PaymentInProgress():
		return DeclineInProgress
	case s.ExpiryDue(now):
		return DeclineExpired
	}
	return DeclineNone
}

// BeginPayment lets payment paymentID hold s from now until it succeeds or
// fails. It returns the Decline when s cannot begin a payment.
func (s *Session) BeginPayment(paymentID string, now time.Time) error {
	if d := s.PaymentDecline(now); d != DeclineNone {
		return d
	}
	s.ActivePaymentID = &paymentID
	return nil
}

// ReleasePayment ends the hold of payment paymentID, which failed; the
// buyer may try again. A session held by another payment, or by none, is
// left as it is.
func (s *Session) ReleasePayment(paymentID string) {
	if s.ActivePaymentID != nil && *s.ActivePaymentID == paymentID {
		s.ActivePaymentID = nil
	}
}

// Complete moves an open session to complete, paid by paymentID at now.
// Exactly one payment can complete a session: a session that is not open,
// or that another payment holds, refuses.
func (s *Session) Complete(paymentID string, now time.Time) error {
	if s.Status != StatusOpen {
		return Errorf(EConflict, "session %s cannot complete: it is %s", s.ID, s.Status)
	}
	if s.ActivePaymentID != nil && *s.ActivePaymentID != paymentID {
		return Errorf(EConflict, "session %s cannot complete with %s: %s holds it", s.ID, paymentID, *s.ActivePaymentID)
	}
	t := now.Truncate(time.Second)
	s.Status = StatusComplete
	s.PaymentID = &paymentID
	s.CompletedAt = &t
	s.ActivePaymentID = nil
	return nil
}
