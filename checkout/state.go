package checkout

import "time"

// ExpiryDue reports whether s should turn expired at now: it is open, its
// hour is over, and no crypto payment or skins trade is on its way.
func (s *Session) ExpiryDue(now time.Time) bool {
	return s.Status == StatusOpen && !now.Before(s.ExpiresAt) && !s.PaymentInProgress
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

// Complete moves an open session to complete, paid by paymentID at now.
// Exactly one payment can complete a session: a session that is not open
// refuses.
func (s *Session) Complete(paymentID string, now time.Time) error {
	if s.Status != StatusOpen {
		return Errorf(EConflict, "session %s cannot complete: it is %s", s.ID, s.Status)
	}
	t := now.Truncate(time.Second)
	s.Status = StatusComplete
	s.PaymentID = &paymentID
	s.CompletedAt = &t
	s.PaymentInProgress = false
	return nil
}
