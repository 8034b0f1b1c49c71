package service

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
)

// keyIndex is this node's list of the API keys that exist, every store's:
// a 64-bit fingerprint of each bearer key's secret hash and of each HMAC
// key's id. It answers, without a read of the key, whether a credential
// may be valid, for the clients over their limit of failed authentications
// (BearerKeyMayExist, SigningKeyMayExist): a made-up key is refused from
// memory, and a valid key still gets in, however many made-up ones came
// from its address before it (docs/api.md, Authentication).
//
// It is read from the database when first needed (every unrevoked key),
// and then again, for the keys created since, whenever a credential it
// does not hold arrives after its last read began: a key created a moment
// ago, on this node or another, is found by the read its request waits
// for. Those reads are one at a time and at least KeyIndexReadEvery apart, and every
// request waiting shares the next one, so a flood of made-up keys costs the
// database one small read per KeyIndexReadEvery whatever its rate.
//
// A key revoked after it was read stays listed: its requests go on to
// the key's read, which refuses it. A false match (two fingerprints alike)
// costs the same read and nothing else.
type keyIndex struct {
	store checkout.Store
	// now is the service's clock, which stamps keys' created_at: what
	// the reads after the first look for. Their pace is kept in real
	// time.
	now  clock.Func
	seed maphash.Seed

	mu     sync.Mutex
	prints map[uint64]struct{}
	// loaded is set by the first read that succeeds; lastRead is when
	// the last successful read began, and since where the next one
	// starts, on the service's clock.
	loaded   bool
	lastRead time.Time
	since    time.Time
	// failed is the error of the last read if it failed, and failedAt
	// when that read began.
	failed   error
	failedAt time.Time
	// reading is set while a read is under way (or waits for its turn);
	// done is closed when it ends.
	reading bool
	done    chan struct{}
	started time.Time // when the latest read began
}

// KeyIndexReadEvery is the least time between the starts of two reads of the
// index: what a flood of made-up keys costs the database at most, and what
// a request for a key the index does not hold waits at most, beside the
// read itself.
const KeyIndexReadEvery = 50 * time.Millisecond

// readMargin is how far before the last read's start the next read looks
// for new keys: a key is stamped with its creator's clock before its
// transaction commits, and nodes' clocks differ a little. The few keys
// created within it are read again, which costs nothing.
const readMargin = 5 * time.Minute

// readTimeout bounds one read of the index.
const readTimeout = 10 * time.Second

func newKeyIndex(store checkout.Store, now clock.Func) *keyIndex {
	return &keyIndex{store: store, now: now, seed: maphash.MakeSeed()}
}

// bearerPrint and idPrint are the fingerprints of a bearer key (by its
// secret's hash) and of an HMAC key (by its id).
func (x *keyIndex) bearerPrint(secretHash string) uint64 {
	return maphash.String(x.seed, "bearer:"+secretHash)
}

func (x *keyIndex) idPrint(id string) uint64 { return maphash.String(x.seed, "id:"+id) }

func (x *keyIndex) print(id string, typ checkout.KeyType, secretHash string) uint64 {
	if typ == checkout.KeyHMAC {
		return x.idPrint(id)
	}
	return x.bearerPrint(secretHash)
}

// add lists a key this node created, before anyone can use it.
func (x *keyIndex) add(k *checkout.APIKey) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.prints == nil {
		x.prints = map[uint64]struct{}{}
	}
	x.prints[x.print(k.ID, k.Type, k.SecretHash)] = struct{}{}
}

// contains reports whether the index holds print, reading it again first
// unless a read that began after the call did already.
func (x *keyIndex) contains(ctx context.Context, print uint64) (bool, error) {
	arrived := time.Now()
	x.mu.Lock()
	for {
		if _, ok := x.prints[print]; ok {
			x.mu.Unlock()
			return true, nil
		}
		if x.loaded && !x.lastRead.Before(arrived) {
			x.mu.Unlock()
			return false, nil
		}
		if x.failed != nil && !x.failedAt.Before(arrived) {
			err := x.failed
			x.mu.Unlock()
			return false, err
		}
		if !x.reading {
			x.reading = true
			x.done = make(chan struct{})
			x.mu.Unlock()
			x.read()
			x.mu.Lock()
			continue
		}
		done := x.done
		x.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return false, ctx.Err()
		}
		x.mu.Lock()
	}
}

// read reads the keys created since the last read (all of them the first
// time) into the index, no sooner than KeyIndexReadEvery after the last read
// began. It runs on a context of its own: the caller that runs it reads
// for the others waiting too, and its leaving must not fail them.
func (x *keyIndex) read() {
	x.mu.Lock()
	since, loaded, prev := x.since, x.loaded, x.started
	x.mu.Unlock()
	if wait := KeyIndexReadEvery - time.Since(prev); !prev.IsZero() && wait > 0 {
		time.Sleep(wait)
	}
	start := time.Now()
	next := x.now().Add(-readMargin)
	if !loaded {
		since = time.Time{}
	}
	// The prints are gathered apart and added once the read succeeded:
	// the index's lock is not held across the read, and a read cut short
	// adds nothing.
	var read []uint64
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	err := x.store.APIKeyEachActive(ctx, since, func(id string, typ checkout.KeyType, secretHash string) {
		read = append(read, x.print(id, typ, secretHash))
	})
	cancel()

	x.mu.Lock()
	defer x.mu.Unlock()
	x.started = start
	x.reading = false
	close(x.done)
	if err != nil {
		x.failed, x.failedAt = err, start
		return
	}
	if x.prints == nil {
		x.prints = make(map[uint64]struct{}, len(read))
	}
	for _, p := range read {
		x.prints[p] = struct{}{}
	}
	x.loaded, x.lastRead, x.since, x.failed = true, start, next, nil
}
