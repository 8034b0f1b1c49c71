// Package clock provides the time source that checkoutd injects everywhere a
// schedule is kept (expiry, retries, confirmations, holds), and a fake one
// that tests move by hand.
package clock

import (
	"sync"
	"time"
)

// Func returns the current time. time.Now is the real one.
type Func func() time.Time

// Fake is a clock that moves only when told. Its zero value is not usable;
// use NewFake.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// Set moves the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}
