package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The dashboard's session and setup-link lifetimes, and its sign-in limits
// (docs/dashboard.md).
const (
	// SessionIdleTimeout ends a dashboard session nobody used for that long.
	SessionIdleTimeout = 2 * time.Hour
	// SessionLifetime ends a dashboard session that long after sign-in,
	// however active.
	SessionLifetime = 12 * time.Hour
	// sessionTouchEvery is how often a session's last_seen_at is written
	// at most: a page view a second must not be a write a second.
	sessionTouchEvery = time.Minute
	// SetupTokenLifetime is how long a setup link stays valid.
	SetupTokenLifetime = 24 * time.Hour
	// SignInFailureLimit failed sign-ins per SignInFailureWindow are
	// allowed per account email and per client, each on its own.
	SignInFailureLimit  = 10
	SignInFailureWindow = 15 * time.Minute
)

// newToken returns a new random token of 256 bits (43 base64url
// characters) and its id, the SHA-256 of the token in hex: what the
// database keeps.
func newToken() (token, id string) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand documents it)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, tokenID(token)
}

// tokenID is the SHA-256 in hex of a token. The tokens hold 256 random
// bits, so a fast hash is enough (as for API keys).
func tokenID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// SetupToken returns a new one-time setup token for the first account,
// valid SetupTokenLifetime, or "" when an account exists already.
func (s *Service) SetupToken(ctx context.Context) (token string, expires time.Time, err error) {
	exist, err := s.store.AccountsExist(ctx)
	if err != nil || exist {
		return "", time.Time{}, err
	}
	token, hash := newToken()
	now := s.now().Truncate(time.Second)
	st := &checkout.SetupToken{Hash: hash, CreatedAt: now, ExpiresAt: now.Add(SetupTokenLifetime)}
	if err := s.store.InTx(ctx, func(tx checkout.Tx) error { return tx.SetupTokenInsert(ctx, st) }); err != nil {
		return "", time.Time{}, err
	}
	return token, st.ExpiresAt, nil
}

// CheckSetupToken reports whether token is a setup link that can still
// create the first account: setup_token_invalid, with a message that says
// why, when it is unknown, used or expired, or an account exists already.
func (s *Service) CheckSetupToken(ctx context.Context, token string) error {
	exist, err := s.store.AccountsExist(ctx)
	if err != nil {
		return err
	}
	if exist {
		return checkout.Errorf(checkout.ESetupTokenInvalid, "An account exists already, so this setup link no longer works. Sign in instead.")
	}
	st, err := s.store.SetupTokenGet(ctx, tokenID(token))
	switch {
	case checkout.IsCode(err, checkout.ENotFound):
		return checkout.Errorf(checkout.ESetupTokenInvalid, "This setup link is not valid. Copy the whole link from checkoutd's log.")
	case err != nil:
		return err
	case st.UsedAt != nil:
		return checkout.Errorf(checkout.ESetupTokenInvalid, "This setup link has been used already. Sign in instead.")
	case !s.now().Before(st.ExpiresAt):
		return checkout.Errorf(checkout.ESetupTokenInvalid, "This setup link has expired. Restart checkoutd to log a new one.")
	}
	return nil
}

// CompleteSetup creates the first account with a setup token, in one
// transaction that also marks the token used: of two uses of one token,
// one creates an account. The email and password follow CreateAccount's
// rules and are checked first, so a mistake in the form does not spend the
// link.
func (s *Service) CompleteSetup(ctx context.Context, token, email, pw string) (*checkout.Account, error) {
	if err := s.CheckSetupToken(ctx, token); err != nil {
		return nil, err
	}
	a, err := s.createAccount(ctx, email, pw, func(tx checkout.Tx) error {
		return tx.SetupTokenUse(ctx, tokenID(token), s.now())
	})
	if checkout.IsCode(err, checkout.ENotFound) {
		// Used or expired between the check and the transaction.
		return nil, s.CheckSetupToken(ctx, token)
	}
	return a, err
}

// SignIn checks an email and password and starts a dashboard session,
// returning its token: a new one at every sign-in, so a token planted
// before sign-in is never the session's (no fixation). client is who is
// signing in (the peer address, web.ClientOf).
//
// Failures are limited per account email and per client, each to
// SignInFailureLimit per SignInFailureWindow: over either, SignIn fails
// with rate_limited (RetryAfter set) without checking the password. The
// email's budget is kept whether or not it has an account, so being
// limited tells nothing about which accounts exist; an unknown email and a
// wrong password fail alike (invalid_credentials) and take the same time
// (VerifyPassword).
func (s *Service) SignIn(ctx context.Context, email, pw, client string) (token string, err error) {
	emailKey := checkout.NormalizeEmail(email)
	if ok, wait := s.signInBlocked(emailKey, client); !ok {
		mins := int((wait + time.Minute - 1) / time.Minute)
		unit := "minutes"
		if mins == 1 {
			unit = "minute"
		}
		return "", &checkout.Error{Code: checkout.ERateLimited, RetryAfter: wait,
			Message: fmt.Sprintf("Too many attempts; try again in %d %s.", mins, unit)}
	}
	a, err := s.VerifyPassword(ctx, email, pw)
	if checkout.IsCode(err, checkout.EInvalidCredentials) {
		s.signInFailures.byEmail.Fail(emailKey)
		s.signInFailures.byClient.Fail(client)
		// The failed attempt is recorded (the email tried, never the
		// password); a record that cannot be written is logged and the
		// answer stays the same.
		tried := checkout.Actor{Kind: checkout.ActorAccount, Name: emailKey}
		if err := s.store.InTx(ctx, func(tx checkout.Tx) error {
			return s.recordAs(ctx, tx, tried, "", checkout.AuditSignInFailed, "")
		}); err != nil {
			s.log.WarnContext(ctx, "record a failed sign-in in the audit trail", "error", err)
		}
		return "", checkout.Errorf(checkout.EInvalidCredentials, "Email or password is incorrect.")
	}
	if err != nil {
		return "", err
	}
	token, id := newToken()
	now := s.now().Truncate(time.Second)
	ds := &checkout.DashboardSession{ID: id, AccountID: a.ID, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionLifetime)}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.DashboardSessionInsert(ctx, ds); err != nil {
			return err
		}
		return s.recordAs(ctx, tx, checkout.Actor{Kind: checkout.ActorAccount, ID: a.ID, Name: a.Email}, "", checkout.AuditSignIn, a.ID)
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// signInBlocked reports whether a sign-in may be tried (ok), and if not
// how long until it may.
func (s *Service) signInBlocked(email, client string) (ok bool, wait time.Duration) {
	b1, w1 := s.signInFailures.byEmail.Blocked(email)
	b2, w2 := s.signInFailures.byClient.Blocked(client)
	return !b1 && !b2, max(w1, w2)
}

// DashboardSession returns the session of a token and its account. A
// session ends SessionIdleTimeout after it was last used and
// SessionLifetime after sign-in; an unknown or ended one fails with
// authentication_required (an ended one is deleted). Its last_seen_at is
// written at most once a minute.
func (s *Service) DashboardSession(ctx context.Context, token string) (*checkout.DashboardSession, *checkout.Account, error) {
	required := checkout.Errorf(checkout.EAuthenticationRequired, "Sign in to continue.")
	if token == "" {
		return nil, nil, required
	}
	ds, err := s.store.DashboardSessionGet(ctx, tokenID(token))
	if checkout.IsCode(err, checkout.ENotFound) {
		return nil, nil, required
	}
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	if !now.Before(ds.ExpiresAt) || !now.Before(ds.LastSeenAt.Add(SessionIdleTimeout)) {
		if err := s.store.InTx(ctx, func(tx checkout.Tx) error { return tx.DashboardSessionDelete(ctx, ds.ID) }); err != nil {
			return nil, nil, err
		}
		return nil, nil, required
	}
	a, err := s.store.AccountGet(ctx, ds.AccountID)
	if err != nil {
		return nil, nil, err
	}
	if now.Sub(ds.LastSeenAt) >= sessionTouchEvery {
		seen := now.Truncate(time.Second)
		err := s.store.InTx(ctx, func(tx checkout.Tx) error { return tx.DashboardSessionTouch(ctx, ds.ID, seen) })
		if checkout.IsCode(err, checkout.ENotFound) {
			return nil, nil, required // signed out meanwhile
		}
		if err != nil {
			return nil, nil, err
		}
		ds.LastSeenAt = seen
	}
	return ds, a, nil
}

// SignOut ends the session of a token; signing out of an unknown or ended
// session succeeds.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.store.InTx(ctx, func(tx checkout.Tx) error { return tx.DashboardSessionDelete(ctx, tokenID(token)) })
}
