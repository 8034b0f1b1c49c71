package service_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestSetupToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		token, expires, err := f.svc.SetupToken(ctx)
		if err != nil || len(token) != 43 || !expires.Equal(t0.Add(24*time.Hour)) {
			t.Fatalf("SetupToken = %q, %v, %v; want 43 characters, expiring at %v", token, expires, err, t0.Add(24*time.Hour))
		}
		st, err := db.SetupTokenGet(ctx, sha256Hex(token))
		if err != nil || st.UsedAt != nil {
			t.Fatalf("the stored token = %+v, %v; want its hash stored, unused", st, err)
		}
		if _, err := db.SetupTokenGet(ctx, token); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the token itself is stored: %v", err)
		}
		if err := f.svc.CheckSetupToken(ctx, token); err != nil {
			t.Errorf("CheckSetupToken = %v; want nil", err)
		}
		// Another token: its first character changed (to one it is not:
		// "x"+token[1:] was the token itself once in 64 runs).
		first := "x"
		if token[0] == 'x' {
			first = "y"
		}
		wantError(t, "CheckSetupToken(unknown)", f.svc.CheckSetupToken(ctx, first+token[1:]), checkout.ESetupTokenInvalid, "")

		// A form mistake does not spend the link.
		_, err = f.svc.CompleteSetup(ctx, token, "ann@example.com", "short")
		wantError(t, "CompleteSetup(short password)", err, checkout.EValidationFailed, "password")
		a, err := f.svc.CompleteSetup(ctx, token, "Ann@Example.com", goodPassword)
		if err != nil || a.Email != "ann@example.com" {
			t.Fatalf("CompleteSetup = %+v, %v; want ann's account", a, err)
		}
		if _, err := f.svc.VerifyPassword(ctx, "ann@example.com", goodPassword); err != nil {
			t.Errorf("VerifyPassword after setup = %v", err)
		}
		_, err = f.svc.CompleteSetup(ctx, token, "bob@example.com", goodPassword)
		wantError(t, "CompleteSetup(again)", err, checkout.ESetupTokenInvalid, "")

		// Once an account exists, no more setup tokens.
		if token, _, err := f.svc.SetupToken(ctx); token != "" || err != nil {
			t.Errorf("SetupToken with an account = %q, %v; want none", token, err)
		}
	})
}

func TestSetupTokenExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		token, _, err := f.svc.SetupToken(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(24*time.Hour - time.Second)
		if err := f.svc.CheckSetupToken(ctx, token); err != nil {
			t.Errorf("CheckSetupToken a second before expiry = %v; want nil", err)
		}
		f.clock.Advance(time.Second)
		_, err = f.svc.CompleteSetup(ctx, token, "ann@example.com", goodPassword)
		wantError(t, "CompleteSetup(at expiry)", err, checkout.ESetupTokenInvalid, "")
		if exist, _ := db.AccountsExist(ctx); exist {
			t.Error("an expired link created an account")
		}
	})
}

// Two uses of one link at once (two nodes): one account.
func TestCompleteSetupRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		token, _, err := f.svc.SetupToken(ctx)
		if err != nil {
			t.Fatal(err)
		}
		other := f.newService(db)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, svc := range []*service.Service{f.svc, other} {
			wg.Go(func() {
				_, errs[i] = svc.CompleteSetup(ctx, token, []string{"ann@example.com", "bob@example.com"}[i], goodPassword)
			})
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("two CompleteSetup = %v, %v; want one success", errs[0], errs[1])
		}
		_, errAnn := db.AccountGetByEmail(ctx, "ann@example.com")
		_, errBob := db.AccountGetByEmail(ctx, "bob@example.com")
		if (errAnn == nil) == (errBob == nil) {
			t.Errorf("accounts: ann %v, bob %v; want exactly one", errAnn, errBob)
		}
	})
}

func TestSignIn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		a, err := f.svc.CreateAccount(ctx, "ann@example.com", goodPassword)
		if err != nil {
			t.Fatal(err)
		}
		tok1, err := f.svc.SignIn(ctx, " ANN@example.com", goodPassword, "192.0.2.1/32")
		if err != nil || len(tok1) != 43 {
			t.Fatalf("SignIn = %q, %v", tok1, err)
		}
		tok2, err := f.svc.SignIn(ctx, "ann@example.com", goodPassword, "192.0.2.1/32")
		if err != nil || tok2 == tok1 {
			t.Fatalf("second SignIn = %q, %v; want a new token", tok2, err)
		}
		if _, err := db.DashboardSessionGet(ctx, tok1); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the token itself is stored as the session id: %v", err)
		}
		ds, acct, err := f.svc.DashboardSession(ctx, tok1)
		if err != nil || acct.ID != a.ID || ds.ID != sha256Hex(tok1) || !ds.ExpiresAt.Equal(t0.Add(12*time.Hour)) {
			t.Fatalf("DashboardSession = %+v, %+v, %v", ds, acct, err)
		}

		for _, tt := range []struct{ email, pw string }{
			{"ann@example.com", goodPassword + "!"},
			{"nobody@example.com", goodPassword},
		} {
			_, err := f.svc.SignIn(ctx, tt.email, tt.pw, "192.0.2.9/32")
			ce, _ := err.(*checkout.Error)
			if ce == nil || ce.Code != checkout.EInvalidCredentials || ce.Message != "Email or password is incorrect." {
				t.Errorf("SignIn(%s, wrong) = %v; want invalid_credentials, \"Email or password is incorrect.\"", tt.email, err)
			}
		}

		if err := f.svc.SignOut(ctx, tok1); err != nil {
			t.Fatal(err)
		}
		_, _, err = f.svc.DashboardSession(ctx, tok1)
		wantError(t, "DashboardSession(signed out)", err, checkout.EAuthenticationRequired, "")
		if _, _, err := f.svc.DashboardSession(ctx, tok2); err != nil {
			t.Errorf("the other session ended with the first: %v", err)
		}
		_, _, err = f.svc.DashboardSession(ctx, "")
		wantError(t, "DashboardSession(no token)", err, checkout.EAuthenticationRequired, "")
		if err := f.svc.SignOut(ctx, tok1); err != nil {
			t.Errorf("SignOut again = %v; want nil", err)
		}
	})
}

// A session ends 2 h after its last use and 12 h after sign-in, on both
// sides of each bound, and its last use is written at most once a minute.
func TestDashboardSessionTimeouts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		if _, err := f.svc.CreateAccount(ctx, "ann@example.com", goodPassword); err != nil {
			t.Fatal(err)
		}
		signIn := func() string {
			tok, err := f.svc.SignIn(ctx, "ann@example.com", goodPassword, "192.0.2.1/32")
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		lastSeen := func(tok string) time.Time {
			ds, err := db.DashboardSessionGet(ctx, sha256Hex(tok))
			if err != nil {
				t.Fatal(err)
			}
			return ds.LastSeenAt
		}
		use := func(tok string) error { _, _, err := f.svc.DashboardSession(ctx, tok); return err }

		// Idle.
		tok := signIn()
		start := f.clock.Now()
		f.clock.Advance(59 * time.Second)
		if err := use(tok); err != nil || !lastSeen(tok).Equal(start) {
			t.Errorf("after 59 s: %v, last seen %v; want valid, last seen unchanged (%v)", err, lastSeen(tok), start)
		}
		f.clock.Advance(time.Second)
		if err := use(tok); err != nil || !lastSeen(tok).Equal(start.Add(time.Minute)) {
			t.Errorf("after 60 s: %v, last seen %v; want last seen written", err, lastSeen(tok))
		}
		f.clock.Advance(2*time.Hour - time.Second)
		if err := use(tok); err != nil {
			t.Errorf("idle 2 h less a second: %v; want valid", err)
		}
		f.clock.Advance(2 * time.Hour)
		wantError(t, "idle 2 h", use(tok), checkout.EAuthenticationRequired, "")
		if _, err := db.DashboardSessionGet(ctx, sha256Hex(tok)); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("an ended session was kept: %v", err)
		}

		// Absolute: used every hour, it still ends 12 h after sign-in.
		tok = signIn()
		for range 11 {
			f.clock.Advance(time.Hour)
			if err := use(tok); err != nil {
				t.Fatalf("at %v: %v; want valid", f.clock.Now().Sub(start), err)
			}
		}
		f.clock.Advance(time.Hour - time.Second)
		if err := use(tok); err != nil {
			t.Errorf("12 h less a second after sign-in: %v; want valid", err)
		}
		f.clock.Advance(time.Second)
		wantError(t, "12 h after sign-in", use(tok), checkout.EAuthenticationRequired, "")
	})
}

// 10 failures per 15 minutes per email and per client; limited answers do
// not tell whether the account exists.
func TestSignInLimits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		if _, err := f.svc.CreateAccount(ctx, "ann@example.com", goodPassword); err != nil {
			t.Fatal(err)
		}
		fail := func(email, client string) error {
			_, err := f.svc.SignIn(ctx, email, "wrong password!", client)
			return err
		}
		// Per email: from ten clients, then an eleventh.
		for i := range 10 {
			wantError(t, "failure", fail("ann@example.com", "192.0.2."+string(rune('0'+i))), checkout.EInvalidCredentials, "")
		}
		_, err := f.svc.SignIn(ctx, "Ann@example.com", goodPassword, "198.51.100.1/32")
		ce, _ := err.(*checkout.Error)
		if ce == nil || ce.Code != checkout.ERateLimited || ce.Message != "Too many attempts; try again in 2 minutes." || ce.RetryAfter != 90*time.Second {
			t.Fatalf("SignIn(11th, right password) = %#v; want rate_limited, try again in 2 minutes (90 s)", err)
		}
		// The right password from another address for another account works.
		if _, err := f.svc.CreateAccount(ctx, "bob@example.com", goodPassword); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.SignIn(ctx, "bob@example.com", goodPassword, "198.51.100.1/32"); err != nil {
			t.Errorf("another account is limited by ann's failures: %v", err)
		}
		// An unknown email is limited just the same.
		for i := range 10 {
			wantError(t, "failure", fail("nobody@example.com", "203.0.113."+string(rune('0'+i))), checkout.EInvalidCredentials, "")
		}
		err2 := fail("nobody@example.com", "198.51.100.2/32")
		if e, _ := err2.(*checkout.Error); e == nil || e.Code != checkout.ERateLimited || e.Message != ce.Message {
			t.Errorf("unknown email, 11th = %v; want what a known one answers (%v)", err2, ce)
		}
		// A failure comes back every 90 s.
		f.clock.Advance(90*time.Second - time.Second)
		wantError(t, "just before 90 s", fail("ann@example.com", "198.51.100.3/32"), checkout.ERateLimited, "")
		f.clock.Advance(time.Second)
		if _, err := f.svc.SignIn(ctx, "ann@example.com", goodPassword, "198.51.100.3/32"); err != nil {
			t.Errorf("after 90 s: %v; want a sign-in", err)
		}

		// Per client: ten emails from one address, then an eleventh.
		client := "192.0.2.200/32"
		for i := range 10 {
			wantError(t, "failure", fail("c"+string(rune('a'+i))+"@example.com", client), checkout.EInvalidCredentials, "")
		}
		_, err = f.svc.SignIn(ctx, "bob@example.com", goodPassword, client)
		wantError(t, "11th from one client", err, checkout.ERateLimited, "")
		if _, err := f.svc.SignIn(ctx, "bob@example.com", goodPassword, "192.0.2.201/32"); err != nil {
			t.Errorf("another client is limited: %v", err)
		}
	})
}

// Purge deletes expired dashboard sessions and setup tokens.
func TestPurgeDashboard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		setup, _, err := f.svc.SetupToken(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CreateAccount(ctx, "ann@example.com", goodPassword); err != nil {
			t.Fatal(err)
		}
		tok, err := f.svc.SignIn(ctx, "ann@example.com", goodPassword, "192.0.2.1/32")
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(12*time.Hour + time.Second)
		if res, err := f.svc.Purge(ctx); err != nil || res != (service.PurgeResult{DashboardSessions: 1}) {
			t.Errorf("Purge after 12 h = %+v, %v; want the session", res, err)
		}
		if _, err := db.DashboardSessionGet(ctx, sha256Hex(tok)); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the expired session: %v; want purged", err)
		}
		f.clock.Advance(12 * time.Hour)
		if res, err := f.svc.Purge(ctx); err != nil || res != (service.PurgeResult{SetupTokens: 1}) {
			t.Errorf("Purge after 24 h = %+v, %v; want the setup token", res, err)
		}
		if _, err := db.SetupTokenGet(ctx, sha256Hex(setup)); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the expired setup token: %v; want purged", err)
		}
	})
}
