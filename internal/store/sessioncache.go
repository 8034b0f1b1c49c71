package store

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/checkoutd/checkoutd/checkout"
)

// The session cache (SQLite). A retrieve read its session from the
// database every time: a quarter of its CPU, the lookup, the scan and the
// decoding of items and metadata (bench, -profile-row retrieve). Merchants
// poll a session until it completes, and the payment page polls it too, so
// the same sessions are read again and again.
//
// A process that is the only one writing sessions can keep the sessions it
// read in memory: every change to a session then goes through this
// process's SessionUpdate, which drops it from the cache. That holds on
// SQLite when `serve` owns the file (sqlite.OpenToServe locks it against a
// second `serve`; the other commands never write a session). It does not
// hold on PostgreSQL, where several nodes write the same sessions: there,
// nothing is cached. (`checkoutd migrate` may run beside a serve: so no
// SQLite migration may change sessions' rows in place; serve's own
// migrations run before it reads any.)
//
// A read must never return a session older than one a read before it
// returned. So a session is dropped from the cache when a write of it
// begins (before its UPDATE runs), and a read that missed does not fill
// the cache while any session write is under way (writing), nor if one
// ended since the read began (gen): what it read may be older than what
// that write committed. A read that misses thus fills the cache only with
// what no write touched from before it read until after it put; and from
// a write's commit until its transaction has ended, whatever readers see
// comes from the database. Sessions are written rarely (a payment's start
// and end, an expiry) and read often, so the cache rarely misses for it.
type sessionCache struct {
	max int // bytes at most (sessionSize); a full cache drops sessions at random to add one

	mu      sync.Mutex
	m       map[string]*checkout.Session
	bytes   int    // the sessions' sessionSize, summed
	gen     uint64 // bumped when a session write ends
	writing int    // session writes begun and not ended

	hits, misses atomic.Int64
}

// SessionCacheBytes bounds the memory of a session cache. A session of the
// benchmark's takes about 1.5 KB, so it holds about ten thousand such,
// more than the sessions being paid at once in any shop one SQLite file
// serves; one at the limits of every field (ten items with images, twenty
// metadata values of 500 characters) takes up to 80 KB, and then it holds
// two hundred.
const SessionCacheBytes = 16 << 20

// CacheSessions has SessionGet keep sessions in memory, up to maxBytes of
// them (see sessionCache). Only for a process that is the only one to
// write the database's sessions: sqlite.OpenToServe calls it, having
// locked the file. Call it before the store is used.
func (db *DB) CacheSessions(maxBytes int) {
	db.sessions = &sessionCache{max: maxBytes, m: make(map[string]*checkout.Session)}
}

// sessionSize is about the memory s takes: its strings' bytes and its
// structs'.
func sessionSize(s *checkout.Session) int {
	n := 512 + len(s.ID) + len(s.MerchantID) + len(s.Mode) + len(s.Status) + len(s.Title) + len(s.Currency) +
		strLen(s.Description) + strLen(s.ReturnURL) + strLen(s.CancelURL) + strLen(s.PaymentID) + strLen(s.ActivePaymentID) +
		strLen(s.Customer.Email) + strLen(s.Customer.Name)
	for _, it := range s.Items {
		n += 64 + len(it.Name) + strLen(it.Image)
	}
	for k, v := range s.Metadata {
		n += 48 + len(k) + len(v)
	}
	return n
}

func strLen(p *string) int {
	if p == nil {
		return 0
	}
	return 16 + len(*p)
}

// get returns a copy of the cached session id, if there is one.
func (c *sessionCache) get(id string) (*checkout.Session, bool) {
	c.mu.Lock()
	s, ok := c.m[id]
	c.mu.Unlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	c.hits.Add(1)
	return cloneSession(s), true
}

// generation returns what a read that misses must see unchanged, and no
// write under way, to fill the cache (put).
func (c *sessionCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put caches a copy of s, read from the database after generation
// returned gen, unless a session write is under way or ended meanwhile.
func (c *sessionCache) put(s *checkout.Session, gen uint64) {
	s = cloneSession(s)
	size := sessionSize(s)
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.writing > 0 {
		return
	}
	c.drop(s.ID)
	for id := range c.m { // sessions at random (map order is) until s fits
		if c.bytes+size <= c.max {
			break
		}
		c.drop(id)
	}
	c.m[s.ID] = s
	c.bytes += size
}

// drop removes session id, if cached. c.mu is held.
func (c *sessionCache) drop(id string) {
	if s, ok := c.m[id]; ok {
		c.bytes -= sessionSize(s)
		delete(c.m, id)
	}
}

// writeBegins drops session id, about to be written, and holds every
// read's caching until writeEnds.
func (c *sessionCache) writeBegins(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing++
	c.drop(id)
}

// writeEnds is called once the transaction that wrote a session has
// ended, committed or rolled back: reads that began before may no longer
// fill the cache (gen); later ones may.
func (c *sessionCache) writeEnds() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.writing--
}

// sessionWrite notes that tx writes session id: dropped from the cache now,
// reads not cached until tx ends (Tx.end).
func (tx *Tx) sessionWrite(id string) {
	if c := tx.db.sessions; c != nil {
		c.writeBegins(id)
		tx.sessionsWritten = append(tx.sessionsWritten, id)
	}
}

// end is called once tx has committed or rolled back, before any caller
// hears of it.
func (tx *Tx) end() {
	if c := tx.db.sessions; c != nil {
		for range tx.sessionsWritten {
			c.writeEnds()
		}
		tx.sessionsWritten = nil
	}
}

// cloneSession returns a copy of s that shares nothing it could change:
// callers may change what SessionGet returns.
func cloneSession(s *checkout.Session) *checkout.Session {
	c := *s
	c.Items = slices.Clone(s.Items)
	c.Metadata = maps.Clone(s.Metadata)
	c.Description = clonePtr(s.Description)
	c.ReturnURL = clonePtr(s.ReturnURL)
	c.CancelURL = clonePtr(s.CancelURL)
	c.PaymentID = clonePtr(s.PaymentID)
	c.CompletedAt = clonePtr(s.CompletedAt)
	c.ActivePaymentID = clonePtr(s.ActivePaymentID)
	c.Customer.Email = clonePtr(s.Customer.Email)
	c.Customer.Name = clonePtr(s.Customer.Name)
	for i, it := range c.Items {
		c.Items[i].Image = clonePtr(it.Image)
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
