package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/store"
)

// UserAgent is sent with every delivery.
const UserAgent = "Service-Webhooks/1.0"

// Queue is what the dispatcher needs of the database (*store.DB): due
// deliveries claimed under a lease, and attempts recorded. A delivery is
// attempted only by the owner of its lease; one whose lease runs out (its
// owner crashed) is claimed again.
type Queue interface {
	// DeliveryClaim leases due deliveries to p.Owner and returns them with
	// the endpoint as it is now and the event.
	DeliveryClaim(ctx context.Context, p store.ClaimParams) ([]*store.Claim, error)
	// DeliveryClaimable reports whether a claim at now would find a
	// delivery to lease, with a read that sets nothing aside.
	DeliveryClaimable(ctx context.Context, now time.Time, perEndpoint int) (bool, error)
	// DeliveryRecord stores a finished attempt and, when owner still holds
	// the lease and the delivery is still pending, the delivery's new state
	// (d after Record). It reports whether the delivery was updated. A
	// delivery deleted meanwhile (with its endpoint) gets no record.
	DeliveryRecord(ctx context.Context, owner string, a *checkout.Attempt, d *checkout.Delivery) (bool, error)
	// DeliveryRecordAll does what DeliveryRecord does for each record, all
	// in one transaction (one commit for many attempts), and reports for
	// each whether its delivery was updated. When next.Limit is above zero
	// it then claims as DeliveryClaim(next) would, in the same
	// transaction, and returns the claims. When it fails, none is stored
	// and none is claimed.
	DeliveryRecordAll(ctx context.Context, rs []store.AttemptRecord, next store.ClaimParams) ([]bool, []*store.Claim, error)
}

// Config configures a Dispatcher.
type Config struct {
	Store  Queue
	Client *http.Client
	// Now is the clock of schedules and signatures; time.Now when nil.
	Now    clock.Func
	Logger *slog.Logger
	// Workers bounds the attempts in flight in this process (default 32).
	Workers int
	// PerEndpoint bounds the attempts in flight to one endpoint (default 4),
	// so a slow or dead endpoint holds at most that many workers.
	PerEndpoint int
	// Lease is how long a claimed delivery is reserved for its attempt
	// (default 60 s, well over Timeout). A process killed mid-attempt
	// loses nothing: the delivery is claimed again when its lease runs out.
	Lease time.Duration
	// Poll is how often the database is checked for due deliveries when
	// nothing wakes the dispatcher (default 1 s). Events created in this
	// process wake it at once.
	Poll time.Duration
}

// Dispatcher claims due deliveries, sends them and records the attempts.
type Dispatcher struct {
	cfg    Config
	node   string
	claims atomic.Uint64
	// handedOver counts the deliveries claimed for this dispatcher by the
	// transactions that created them (Take).
	handedOver atomic.Int64
	// inFlight counts the workers making attempts: sem also holds the
	// workers set aside for a claim under way.
	inFlight atomic.Int64
	// started counts the attempts begun, for RunOnce.
	started atomic.Int64
	wake    chan struct{}
	freed   chan struct{}
	sem     chan struct{}
	wg      sync.WaitGroup
	counts  struct {
		succeeded, failed, gaveUp atomic.Int64
		micros                    atomic.Int64
	}

	// Finished attempts wait here to be stored together (group commit) by
	// up to recordLanes recorders (recordLoop), each started by a record
	// that finds fewer running.
	recMu     sync.Mutex
	recorders int
	recQueue  []*pendingRecord
	// posting counts the claims handed to workers whose records are not
	// queued yet (their attempts under way); a record lowers it, and
	// closes and replaces queued, under recMu.
	posting atomic.Int64
	queued  chan struct{}

	// runCtx is Run's context while it runs; accepting tells whether
	// Reserve may set workers aside (Run has not begun to stop). Under
	// runMu.
	runMu     sync.Mutex
	runCtx    context.Context
	accepting bool
}

// pendingRecord is an attempt waiting to be stored. A worker that wants
// to go on (its dispatcher still runs) sets more; the batch that stores it
// may then claim a delivery for it, next, leased to nextOwner.
type pendingRecord struct {
	rec       store.AttemptRecord
	more      bool
	updated   bool
	err       error
	next      *store.Claim
	nextOwner string
	done      chan struct{}
}

// Stats are what a dispatcher did since it started, for metrics. Other
// nodes count their own.
type Stats struct {
	// AttemptsSucceeded and AttemptsFailed count this process's attempts by
	// outcome (a 2xx answer, or anything else).
	AttemptsSucceeded, AttemptsFailed int64
	// AttemptSeconds is the time those attempts took, in all.
	AttemptSeconds float64
	// DeliveriesFailed counts deliveries whose last attempt failed here, so
	// that no attempt follows.
	DeliveriesFailed int64
	// InFlight is how many attempts are under way now.
	InFlight int
	// HandedOver counts the deliveries claimed for this dispatcher by the
	// transactions that created them (store.Claimer).
	HandedOver int64
	// Idle is how many workers are free now: neither making an attempt nor
	// set aside for a claim under way.
	Idle int
}

// Stats returns the dispatcher's counts.
func (d *Dispatcher) Stats() Stats {
	return Stats{
		AttemptsSucceeded: d.counts.succeeded.Load(),
		AttemptsFailed:    d.counts.failed.Load(),
		AttemptSeconds:    float64(d.counts.micros.Load()) / 1e6,
		DeliveriesFailed:  d.counts.gaveUp.Load(),
		InFlight:          int(d.inFlight.Load()),
		HandedOver:        d.handedOver.Load(),
		Idle:              cap(d.sem) - len(d.sem),
	}
}

// New returns a dispatcher; Run starts it.
func New(cfg Config) *Dispatcher {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 32
	}
	if cfg.PerEndpoint <= 0 {
		cfg.PerEndpoint = 4
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 60 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	return &Dispatcher{
		cfg:    cfg,
		node:   checkout.NewID("node_", 8),
		wake:   make(chan struct{}, 1),
		freed:  make(chan struct{}, 1),
		sem:    make(chan struct{}, cfg.Workers),
		queued: make(chan struct{}),
	}
}

// Wake tells the dispatcher new deliveries may be due. It never blocks.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run dispatches until ctx ends, then waits for the attempts in flight to
// finish (each is bounded by Timeout) and returns.
func (d *Dispatcher) Run(ctx context.Context) {
	tick := time.NewTicker(d.cfg.Poll)
	defer tick.Stop()
	d.runMu.Lock()
	d.runCtx, d.accepting = ctx, true
	d.runMu.Unlock()
	// Deferred calls run last first: no more reservations, then the
	// attempts (and reservations) under way end, then runCtx goes.
	defer func() {
		d.runMu.Lock()
		d.runCtx = nil
		d.runMu.Unlock()
	}()
	defer d.wg.Wait()
	defer func() {
		d.runMu.Lock()
		d.accepting = false
		d.runMu.Unlock()
	}()
	more := false // the last claim filled every free worker
	for {
		// A claim sets aside every free worker until it commits: asked for
		// nothing due (a wake-up whose delivery its transaction handed over,
		// an attempt's end with nothing left), it kept the transactions
		// that insert deliveries from claiming them for those workers (claim
		// in create), and their first attempts waited for the next claim.
		// A read says first whether there is anything to claim.
		if free := cap(d.sem) - len(d.sem); free > 0 && (more || d.claimable(ctx)) {
			n, err := d.dispatch(ctx, free)
			if err != nil && ctx.Err() == nil {
				d.cfg.Logger.Error("claim webhook deliveries", "err", err)
			}
			if more = n == free && ctx.Err() == nil; more {
				continue // there may be more due right now
			}
		}
		more = false
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-d.freed:
			d.gatherFreeSlots(ctx)
		case <-tick.C:
		}
	}
}

// claimable reports whether a claim now would find a delivery due. When
// the read fails it says yes: the claim then reports the error.
func (d *Dispatcher) claimable(ctx context.Context) bool {
	ok, err := d.cfg.Store.DeliveryClaimable(ctx, d.cfg.Now(), d.cfg.PerEndpoint)
	return ok || err != nil
}

// claimGather is how long the loop waits, after an attempt ends, for more
// to end before it claims again.
const claimGather = 2 * time.Millisecond

// gatherFreeSlots waits up to claimGather for a quarter of the workers to be
// free, unless a new event wakes the dispatcher first. A claim reads little
// (a few index entries per endpoint with pending deliveries, whatever the
// backlog), but it is a write transaction and a commit: run once per ended
// attempt under load, its commits would cost more than the attempts, and
// claiming many at a time costs about as much as one.
func (d *Dispatcher) gatherFreeSlots(ctx context.Context) {
	enough := max(cap(d.sem)/4, 1)
	if cap(d.sem)-len(d.sem) >= enough {
		return
	}
	timer := time.NewTimer(claimGather)
	defer timer.Stop()
	for cap(d.sem)-len(d.sem) < enough {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		case <-d.wake:
			return
		case <-d.freed:
		}
	}
}

// RunOnce claims and attempts every delivery due now, waits for the
// attempts, and returns how many it made. Tests call it with a fake clock
// instead of running the loop.
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	before := d.started.Load()
	for {
		n, err := d.dispatch(ctx, d.cfg.Workers)
		d.wg.Wait()
		if err != nil || n == 0 {
			return int(d.started.Load() - before), err
		}
	}
}

// newOwner returns the owner of a new claim's leases: this process and the
// claim's number, so that a record is checked against the claim it came
// from.
func (d *Dispatcher) newOwner() string {
	return d.node + "-" + strconv.FormatUint(d.claims.Add(1), 10)
}

// dispatch claims up to limit due deliveries and starts their attempts.
func (d *Dispatcher) dispatch(ctx context.Context, limit int) (int, error) {
	n := d.reserve(limit)
	if n == 0 {
		return 0, nil
	}
	owner := d.newOwner()
	now := d.cfg.Now()
	claims, err := d.cfg.Store.DeliveryClaim(ctx, store.ClaimParams{
		Owner:       owner,
		Now:         now,
		LeaseUntil:  now.Add(d.cfg.Lease),
		Limit:       n,
		PerEndpoint: d.cfg.PerEndpoint,
	})
	if err != nil {
		d.unreserve(n)
		return 0, err
	}
	d.start(ctx, owner, claims)
	d.unreserve(n - len(claims))
	return len(claims), nil
}

// reserve sets aside up to n free workers, without waiting, and returns
// how many.
func (d *Dispatcher) reserve(n int) int {
	for i := range n {
		select {
		case d.sem <- struct{}{}:
		default:
			return i
		}
	}
	return n
}

// unreserve frees n workers set aside and not used. Unlike an attempt's
// end, it does not signal freed: the claim that set them aside found
// nothing more for them, and Run would claim again at once, for ever.
func (d *Dispatcher) unreserve(n int) {
	for range n {
		<-d.sem
	}
}

// start runs the attempts of claims, leased to owner, each on a worker
// reserved for it.
func (d *Dispatcher) start(ctx context.Context, owner string, claims []*store.Claim) {
	d.posting.Add(int64(len(claims)))
	for _, c := range claims {
		d.wg.Add(1)
		d.inFlight.Add(1)
		go func() {
			defer d.wg.Done()
			defer func() {
				d.inFlight.Add(-1)
				<-d.sem
				select {
				case d.freed <- struct{}{}:
				default:
				}
			}()
			d.work(ctx, owner, c)
		}()
	}
}

// Reserve is store.Claimer's: a transaction that inserts deliveries claims
// for up to max of the free workers, which stay set aside until its Take.
// None while Run is not running.
func (d *Dispatcher) Reserve(max int) store.ClaimParams {
	d.runMu.Lock()
	defer d.runMu.Unlock()
	if !d.accepting || d.runCtx.Err() != nil {
		return store.ClaimParams{}
	}
	n := d.reserve(max)
	if n == 0 {
		return store.ClaimParams{}
	}
	d.wg.Add(1) // Run waits for the Take
	now := d.cfg.Now()
	return store.ClaimParams{Owner: d.newOwner(), Now: now, LeaseUntil: now.Add(d.cfg.Lease), Limit: n, PerEndpoint: d.cfg.PerEndpoint}
}

// Take is store.Claimer's: it starts the attempts of the claims a
// transaction made for p, once committed, and frees the workers they do
// not use.
func (d *Dispatcher) Take(p store.ClaimParams, claims []*store.Claim) {
	defer d.wg.Done()
	d.runMu.Lock()
	ctx := d.runCtx // still set: Run waits for this Take
	d.runMu.Unlock()
	d.handedOver.Add(int64(len(claims)))
	d.start(ctx, p.Owner, claims)
	d.unreserve(p.Limit - len(claims))
}

var _ store.Claimer = (*Dispatcher)(nil)

// work makes the attempt of claim c, leased to owner, and then of each
// delivery that the transaction recording the one before claimed for it
// (claim in record): a worker keeps its slot from one delivery to the next
// with one commit between, not two (the record's and a claim's), and no
// wait for other slots to free. It stops when a record brings no claim
// (none due, or the endpoints' caps reached; the loop in Run claims for
// the free slots then) or ctx ends (its last attempt is still recorded).
func (d *Dispatcher) work(ctx context.Context, owner string, c *store.Claim) {
	for c != nil {
		d.started.Add(1)
		c, owner = d.attempt(ctx, owner, c)
	}
}

// attempt sends one claimed delivery and records the outcome. It runs on a
// context of its own, so a shutdown lets it finish. It returns the next
// delivery to attempt, claimed with the record, and its lease's owner.
func (d *Dispatcher) attempt(ctx context.Context, owner string, c *store.Claim) (*store.Claim, string) {
	a := Send(d.cfg.Client, c, d.cfg.Now())
	if a.Succeeded() {
		d.counts.succeeded.Add(1)
	} else {
		d.counts.failed.Add(1)
	}
	d.counts.micros.Add(a.Duration.Microseconds())
	c.Delivery.Record(a, d.cfg.Now())
	p := d.record(store.AttemptRecord{Owner: owner, Attempt: a, Delivery: c.Delivery}, ctx.Err() == nil)
	if p.err != nil {
		// The lease runs out and the delivery is attempted again: at least
		// once still holds.
		d.cfg.Logger.Error("record webhook attempt", "delivery", c.Delivery.ID, "err", p.err)
		return nil, ""
	}
	if p.updated && c.Delivery.Status == checkout.DeliveryFailed {
		d.counts.gaveUp.Add(1)
	}
	return p.next, p.nextOwner
}

// record stores a finished attempt with those that finished beside it, in
// one transaction, which also claims a next delivery for each worker that
// wants one (more). On SQLite, where every commit waits for the disk, this
// is what lets deliveries go faster than one commit each.
func (d *Dispatcher) record(r store.AttemptRecord, more bool) *pendingRecord {
	p := &pendingRecord{rec: r, more: more, done: make(chan struct{})}
	d.recMu.Lock()
	d.recQueue = append(d.recQueue, p)
	d.posting.Add(-1)
	if d.recorders < recordLanes {
		d.recorders++
		go d.recordLoop()
	}
	close(d.queued)
	d.queued = make(chan struct{})
	d.recMu.Unlock()
	<-p.done
	return p
}

// recordLanes bounds the batches of records being written at once. Two:
// while one batch's transaction runs, the workers it does not hold finish
// their attempts and are written by the other, rather than wait for its
// commit; on PostgreSQL the two run side by side (their claims take turns,
// Dialect.ClaimLock), on SQLite the group commit takes them in turn.
const recordLanes = 2

// recordLoop writes the queued records, batch after batch, until none
// waits.
func (d *Dispatcher) recordLoop() {
	for {
		d.gatherRecords()
		d.recMu.Lock()
		batch := d.recQueue
		d.recQueue = nil
		if len(batch) == 0 {
			d.recorders--
			d.recMu.Unlock()
			return
		}
		d.recMu.Unlock()
		d.store(batch)
	}
}

// recordGather bounds how long a batch of records waits for the attempts
// still under way. 2 ms, not 1: bigger batches, fewer transactions taking
// turns for the claim lock; PostgreSQL's drain of 16,000 went from 3,840 to
// 4,190 a second (means of ten alternating runs of the bench), SQLite's did
// not change. A first attempt does not wait for it: its record does.
const recordGather = 2 * time.Millisecond

// gatherRecords waits up to recordGather for the attempts under way (not
// in a batch being written) to end and queue their records, so that they
// join the next batch rather than wait for its commit and make a batch of
// their own after it: a drain's workers would otherwise split into groups
// that take turns, each waiting for the other's transaction.
func (d *Dispatcher) gatherRecords() {
	timer := time.NewTimer(recordGather)
	defer timer.Stop()
	for {
		d.recMu.Lock()
		if d.posting.Load() == 0 {
			d.recMu.Unlock()
			return
		}
		queued := d.queued
		d.recMu.Unlock()
		select {
		case <-timer.C:
			return
		case <-queued:
		}
	}
}

// store writes a batch of records in one transaction, with the claim of a
// next delivery for each record that wants one; when that fails, one by
// one and with no claim, so that one record's failure is not every
// record's (and what the failed transaction claimed was never leased).
func (d *Dispatcher) store(batch []*pendingRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rs := make([]store.AttemptRecord, len(batch))
	var want []*pendingRecord
	for i, p := range batch {
		rs[i] = p.rec
		if p.more {
			want = append(want, p)
		}
	}
	var next store.ClaimParams
	if len(want) > 0 {
		now := d.cfg.Now()
		next = store.ClaimParams{Owner: d.newOwner(), Now: now, LeaseUntil: now.Add(d.cfg.Lease),
			Limit: len(want), PerEndpoint: d.cfg.PerEndpoint}
	}
	updated, claims, err := d.cfg.Store.DeliveryRecordAll(ctx, rs, next)
	d.posting.Add(int64(len(claims)))
	for i, c := range claims {
		want[i].next, want[i].nextOwner = c, next.Owner
	}
	for i, p := range batch {
		if err == nil {
			p.updated = updated[i]
		} else if len(batch) == 1 {
			p.err = err
		} else {
			p.updated, p.err = d.cfg.Store.DeliveryRecord(ctx, p.rec.Owner, p.rec.Attempt, p.rec.Delivery)
		}
		close(p.done)
	}
}

// Send makes one attempt of a claimed delivery at now: the event as the
// body, the headers of SPEC.md, signed afresh with the endpoint's current
// secret and, while a roll's overlap lasts at now, its previous one too
// (one v1= each, the current first).
func Send(client *http.Client, c *store.Claim, now time.Time) *checkout.Attempt {
	body, err := c.Event.Payload()
	if err != nil {
		return &checkout.Attempt{DeliveryID: c.Delivery.ID, Number: c.Delivery.Attempts + 1, StartedAt: now, Error: "encode event: " + err.Error()}
	}
	return Post(client, c.Endpoint.URL, &Message{
		DeliveryID: c.Delivery.ID,
		Attempt:    c.Delivery.Attempts + 1,
		EventID:    c.Event.ID,
		EventType:  c.Event.Type,
		Signature:  checkout.SignWebhookSecrets(c.Endpoint.SigningSecrets(now), now, body),
		Body:       body,
	}, now)
}

// Message is one attempt of a delivery as it goes out: what Post sends.
type Message struct {
	DeliveryID string
	// Attempt is the attempt's number, from 1 (Service-Delivery-Attempt).
	Attempt   int
	EventID   string
	EventType string
	// Signature is the Service-Webhook-Signature of Body.
	Signature string
	Body      []byte
}

// Post sends m to url at now, with the headers of SPEC.md, and returns the
// attempt: the receiver's answer or why none came. The dispatcher posts to
// HTTPS endpoints through the guarded client; `checkoutd listen` posts
// what its stream sends to the developer's local URL.
func Post(client *http.Client, url string, m *Message, now time.Time) *checkout.Attempt {
	a := &checkout.Attempt{DeliveryID: m.DeliveryID, Number: m.Attempt, StartedAt: now}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(m.Body))
	if err != nil {
		a.Error = "invalid endpoint URL"
		return a
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["User-Agent"] = []string{UserAgent}
	h["Service-Webhook-Signature"] = []string{m.Signature}
	h["Service-Event-Id"] = []string{m.EventID}
	h["Service-Event-Type"] = []string{m.EventType}
	h["Service-Delivery-Id"] = []string{m.DeliveryID}
	h["Service-Delivery-Attempt"] = []string{strconv.Itoa(m.Attempt)}

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		a.Duration = time.Since(start)
		a.Error = describe(err)
		return a
	}
	// A body that breaks off after the status line still counts: the
	// receiver answered.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, checkout.MaxAttemptResponse))
	resp.Body.Close()
	a.Duration = time.Since(start)
	a.StatusCode = resp.StatusCode
	a.ResponseBody = truncateUTF8(checkout.StorableText(string(b)), checkout.MaxAttemptResponse)
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		a.Error = fmt.Sprintf("redirect (%d) not followed", resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" {
			a.Error += " to " + truncate(loc, 200)
		}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		a.Error = fmt.Sprintf("receiver answered %d; only 2xx counts as delivered", resp.StatusCode)
	}
	return a
}

// describe says why an attempt got no response, without the URL (a
// merchant's URL may carry a token in its query).
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "no response in time: the receiver must answer within 10 seconds"
	}
	return checkout.StorableText(truncate(err.Error(), 500))
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
