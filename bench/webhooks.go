package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/listen"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// receiver is the merchants' webhook endpoint of the whole run: an HTTPS
// server on loopback that answers 200 at once and notes what arrived when.
// Its certificate is its own root, which the dispatcher trusts as an
// operator's --webhook-ca-file would make it trust an internal CA.
type receiver struct {
	srv *httptest.Server

	mu sync.Mutex
	// deliveries counts each Service-Delivery-Id received: more than one is
	// a delivery sent again.
	deliveries map[string]int
	// firstArrival is when the first delivery of each session's event
	// arrived, by session id.
	firstArrival map[string]time.Time
	total        atomic.Int64
	// distinct counts the keys of deliveries, for the rows that wait for
	// a number of them: reading it costs nothing, where counting the map
	// every millisecond took a share of the two CPUs the drain measures.
	distinct atomic.Int64
}

func newReceiver() *receiver {
	r := &receiver{deliveries: map[string]int{}, firstArrival: map[string]time.Time{}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	r.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.srv.StartTLS()
	return r
}

func (r *receiver) close() { r.srv.Close() }

// roots trusts the receiver's certificate.
func (r *receiver) roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(r.srv.Certificate())
	return pool
}

// url is the address of endpoint i (each endpoint its own path, so that the
// dispatcher's per-endpoint cap applies to each).
func (r *receiver) url(i int) string { return r.srv.URL + "/hook/" + strconv.Itoa(i) }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var ev struct {
		Data struct {
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		} `json:"data"`
	}
	json.Unmarshal(body, &ev)
	r.total.Add(1)
	r.mu.Lock()
	id := req.Header.Get("Service-Delivery-Id")
	r.deliveries[id]++
	if r.deliveries[id] == 1 {
		r.distinct.Add(1)
	}
	if id := ev.Data.Object.ID; id != "" {
		if _, ok := r.firstArrival[id]; !ok {
			r.firstArrival[id] = at
		}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// reset forgets what arrived.
func (r *receiver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.deliveries)
	clear(r.firstArrival)
	r.total.Store(0)
	r.distinct.Store(0)
}

// counts returns the distinct deliveries received and how many arrived more
// than once.
func (r *receiver) counts() (distinct, again int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.deliveries {
		distinct++
		again += n - 1
	}
	return distinct, again
}

func (r *receiver) arrival(sessionID string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.firstArrival[sessionID]
	return at, ok
}

// dispatcherLoop runs a dispatcher's loop, which the drain row stops while
// it queues its backlog.
type dispatcherLoop struct {
	d      *webhook.Dispatcher
	cancel context.CancelFunc
	done   chan struct{}
}

func (l *dispatcherLoop) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		l.d.Run(ctx)
	}()
}

// stop ends the loop and waits for the attempts in flight.
func (l *dispatcherLoop) stop() {
	if l.cancel == nil {
		return
	}
	l.cancel()
	<-l.done
	l.cancel = nil
}

// hookRow is one line of the webhook table.
type hookRow struct {
	Target  string `json:"target"`
	Op      string `json:"op"`
	Skipped string `json:"skipped,omitempty"`
	// Deliveries counts what the receiver got (distinct deliveries; for
	// bare, requests).
	Deliveries int     `json:"deliveries"`
	PerSecond  float64 `json:"per_second"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	// Lost counts deliveries that never arrived; Again those that arrived
	// more than once. Both must be 0.
	Lost  int `json:"lost"`
	Again int `json:"again"`
	// VsBare: deliveries per second over bare's for drain; bare's p50
	// over this row's for first-attempt (how much of the latency is the
	// receiver's round trip).
	VsBare *float64 `json:"vs_bare,omitempty"`
	Note   string   `json:"note,omitempty"`
}

// endpointEvents are what the bench's endpoints subscribe to.
var endpointEvents = []string{checkout.AllEvents}

// measureBareHooks measures the ceiling of deliveries: signed POSTs of an
// event-sized body, straight from a Go client configured as the
// dispatcher's to the same receiver, by as many workers as the dispatcher
// has, then by one worker alone (the round trip of one delivery).
func measureBareHooks(ctx context.Context, cfg *config, rep *report) error {
	now := time.Now()
	m, sess, err := sampleSession(now)
	if err != nil {
		return err
	}
	ev, err := checkout.NewEvent(checkout.EventCheckoutCreated, m.ID, checkout.ModeTest, sess, now)
	if err != nil {
		return err
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	secret := checkout.NewWebhookSecret()
	guard := &webhook.Guard{AllowCIDRs: loopbackOnly}
	client := webhook.NewClient(webhook.ClientConfig{Guard: guard, RootCAs: cfg.receiver.roots()})
	defer client.CloseIdleConnections()
	newRequest := func(w, n int) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.receiver.url(w%cfg.endpoints), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		h := req.Header
		h.Set("Content-Type", "application/json")
		h.Set("User-Agent", webhook.UserAgent)
		h.Set("Service-Webhook-Signature", checkout.SignWebhook(secret, time.Now(), body))
		h.Set("Service-Event-Id", ev.ID)
		h.Set("Service-Event-Type", ev.Type)
		h.Set("Service-Delivery-Id", fmt.Sprintf("whd_bare_%d_%d", w, n))
		h.Set("Service-Delivery-Attempt", "1")
		return req, nil
	}
	for _, row := range []struct {
		op, note string
		workers  int
	}{{"deliver", fmt.Sprintf("%d workers posting back to back", hookWorkers), hookWorkers}, {"one", "one worker posting back to back", 1}} {
		cfg.receiver.reset()
		res, err := runLoad(ctx, client, loadConfig{concurrency: row.workers, warmup: cfg.warmup, duration: cfg.duration}, newRequest)
		if err != nil {
			return err
		}
		rep.addHook(hookRow{Target: "bare", Op: row.op, Deliveries: len(res.latencies), PerSecond: res.rps(),
			P50ms: ms(res.percentile(50)), P99ms: ms(res.percentile(99)), Lost: res.failures,
			Note: row.note})
	}
	return nil
}

// hookWorkers is the dispatcher's worker count (serve's --webhook-workers).
const hookWorkers = 32

// measureHooks measures checkoutd's deliveries on t: the drain of a backlog,
// then the time from an event's commit to its first attempt's arrival.
func measureHooks(ctx context.Context, cfg *config, t *target, rep *report) error {
	if err := measureDrain(ctx, cfg, t, rep); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	if err := measureFirstAttempt(ctx, cfg, t, rep); err != nil {
		return fmt.Errorf("first attempt: %w", err)
	}
	if err := measureFirstAttemptUnderLoad(ctx, cfg, t, rep); err != nil {
		return fmt.Errorf("first attempt under load: %w", err)
	}
	if err := measureListen(ctx, cfg, t, rep); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return nil
}

// listenBacklog bounds the listen row's backlog: a listener forwards one
// delivery at a time.
const listenBacklog = 1000

// measureListen queues a backlog of sessions whose events wait for a
// listener, then runs checkoutd listen's client (package listen, as the
// CLI does) against the service's HTTP API, forwarding to the receiver, and
// times it until the receiver has every event: a stream, a local post and a
// result per delivery, one at a time.
func measureListen(ctx context.Context, cfg *config, t *target, rep *report) error {
	params := storeParams
	params.Name = "Listen Games"
	m, err := t.svc.CreateMerchant(ctx, params)
	if err != nil {
		return err
	}
	key, secret, err := t.svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		return err
	}
	l := listen.New(listen.Config{BaseURL: t.url, Store: m.ID, Secret: secret, Name: "bench", Events: endpointEvents,
		ForwardTo: cfg.receiver.url(checkout.MaxEndpointsPerStore),
		Local:     &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cfg.receiver.roots()}}}})
	if _, err := l.Register(ctx); err != nil {
		return err
	}
	n := min(cfg.backlog, listenBacklog)
	cparams, err := checkout.ParseCreateRequest([]byte(createBody))
	if err != nil {
		return err
	}
	for range n {
		if _, err := t.svc.CreateSession(ctx, service.CreateSessionParams{Key: key, StoreID: m.ID, Params: cparams}); err != nil {
			return err
		}
	}
	cfg.receiver.reset()
	lctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- l.Run(lctx) }()
	deadline := start.Add(5 * time.Minute)
	for {
		if cfg.receiver.distinct.Load() >= int64(n) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	took := time.Since(start)
	stop()
	if err := <-done; err != nil {
		return err
	}
	distinct, again := cfg.receiver.counts()
	rep.addHook(hookRow{Target: t.name, Op: "listen", Deliveries: distinct, PerSecond: float64(distinct) / took.Seconds(),
		Lost: n - distinct, Again: again,
		Note: fmt.Sprintf("checkoutd listen's client forwarding a backlog of %d events, one at a time, in %.2fs (ratio: against one bare worker)", n, took.Seconds())})
	return nil
}

// newHookStore creates a store with n test-mode endpoints on the receiver
// and a write key, through the service (the endpoints' URLs pass the
// guard's check as any merchant's would).
func newHookStore(ctx context.Context, cfg *config, svc *service.Service, name string, n int) (*checkout.Merchant, *checkout.APIKey, error) {
	params := storeParams
	params.Name = name
	m, err := svc.CreateMerchant(ctx, params)
	if err != nil {
		return nil, nil, err
	}
	for i := range n {
		if _, err := svc.CreateEndpoint(ctx, checkout.EndpointParams{MerchantID: m.ID, Mode: checkout.ModeTest, URL: cfg.receiver.url(i), Events: endpointEvents}); err != nil {
			return nil, nil, err
		}
	}
	key, _, err := svc.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	return m, key, err
}

// measureDrain queues a backlog of sessions with the dispatcher stopped,
// each session's checkout.created fanning out to every endpoint, then
// starts the dispatcher and times it until the receiver has every delivery.
func measureDrain(ctx context.Context, cfg *config, t *target, rep *report) error {
	m, key, err := newHookStore(ctx, cfg, t.svc, "Drain Games", cfg.endpoints)
	if err != nil {
		return err
	}
	params, err := checkout.ParseCreateRequest([]byte(createBody))
	if err != nil {
		return err
	}
	t.disp.stop()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for next.Add(1) <= int64(cfg.backlog) {
				if _, err := t.svc.CreateSession(ctx, service.CreateSessionParams{Key: key, StoreID: m.ID, Params: params}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.disp.start()
		return err
	}
	want := cfg.backlog * cfg.endpoints
	cfg.receiver.reset()
	stop, err := profileRow(cfg, t.name, "deliver")
	if err != nil {
		t.disp.start()
		return err
	}
	start := time.Now()
	t.disp.start()
	deadline := start.Add(5 * time.Minute)
	for {
		if cfg.receiver.distinct.Load() >= int64(want) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	took := time.Since(start)
	stop()
	// Let the last attempts be recorded, then check that none is left.
	pending := checkout.PendingDeliveries{}
	for range 5000 {
		if pending, err = t.db.DeliveryCountPending(ctx, time.Now()); err != nil {
			return err
		}
		if pending.Due+pending.Waiting == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	distinct, again := cfg.receiver.counts()
	rep.addHook(hookRow{Target: t.name, Op: "deliver", Deliveries: distinct, PerSecond: float64(distinct) / took.Seconds(),
		Lost: want - distinct, Again: again,
		Note: fmt.Sprintf("a backlog of %d deliveries (%d sessions × %d endpoints) drained in %.2fs; %d still pending after",
			want, cfg.backlog, cfg.endpoints, took.Seconds(), pending.Due+pending.Waiting)})
	return nil
}

// measureFirstAttempt creates sessions at a steady rate (an open loop, so
// that each event meets an idle dispatcher, as in a shop's normal day) for
// a store with one endpoint, and measures from the commit of each
// checkout.created (the moment the service wakes the dispatcher) to the
// arrival of its first attempt at the receiver.
func measureFirstAttempt(ctx context.Context, cfg *config, t *target, rep *report) error {
	row, err := firstAttempt(ctx, cfg, t)
	if err != nil {
		return err
	}
	row.Note = fmt.Sprintf("%.0f events a second, each from its commit to its arrival", cfg.eventRate)
	rep.addHook(*row)
	return nil
}

// measureFirstAttemptUnderLoad measures as measureFirstAttempt does while
// the create row's load runs beside it: cfg.concurrency workers creating
// sessions back to back through the API, for the target's own store (which
// has no endpoint), so that the events measured meet a database at its
// peak of writes (issue 13: the first attempt's p99 under 5 ms then).
func measureFirstAttemptUnderLoad(ctx context.Context, cfg *config, t *target, rep *report) error {
	client := newClient(cfg.concurrency)
	var load *result
	var loadErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		load, loadErr = runLoad(ctx, client, loadConfig{concurrency: cfg.concurrency, warmup: cfg.warmup, duration: cfg.duration},
			func(int, int) (*http.Request, error) { return t.createRequest(ctx) })
	}()
	stop, err := profileRow(cfg, t.name, "peak")
	if err != nil {
		<-done
		return err
	}
	row, err := firstAttempt(ctx, cfg, t)
	stop()
	<-done
	if err != nil {
		return err
	}
	if loadErr != nil {
		return loadErr
	}
	row.Op = "first-attempt, creates at peak"
	row.Note = fmt.Sprintf("%.0f events a second while %d workers create %.0f sessions a second back to back (%d failed)",
		cfg.eventRate, cfg.concurrency, load.rps(), load.failures)
	rep.addHook(*row)
	return nil
}

// firstAttempt creates sessions at cfg.eventRate for a store with one
// endpoint and returns the row of their first attempts' latencies.
func firstAttempt(ctx context.Context, cfg *config, t *target) (*hookRow, error) {
	m, key, err := newHookStore(ctx, cfg, t.svc, "Latency Games", 1)
	if err != nil {
		return nil, err
	}
	params, err := checkout.ParseCreateRequest([]byte(createBody))
	if err != nil {
		return nil, err
	}
	cfg.receiver.reset()
	type sent struct {
		id        string
		committed time.Time
		measured  bool
	}
	var created []sent
	interval := time.Duration(float64(time.Second) / cfg.eventRate)
	from := time.Now().Add(cfg.warmup)
	to := from.Add(cfg.duration)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for now := time.Now(); now.Before(to); now = <-tick.C {
		res, err := t.svc.CreateSession(ctx, service.CreateSessionParams{Key: key, StoreID: m.ID, Params: params})
		if err != nil {
			return nil, err
		}
		// The service wakes the dispatcher after the commit and before it
		// returns; the commit is over by the time this is read, so the
		// latency measured is at most the real one plus the return. A
		// delivery handed over by its transaction (claim in create) may
		// be sent before the return: then its commit's time is the
		// handover's.
		committed := time.Now()
		var s struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(res.Data, &s); err != nil {
			return nil, err
		}
		if at, ok := t.handed.committed(s.ID); ok && at.Before(committed) {
			committed = at
		}
		created = append(created, sent{id: s.ID, committed: committed, measured: !now.Before(from)})
	}
	// Wait for the stragglers, at most 15 seconds (an attempt's time-out and
	// some): an event that has not arrived by then is lost.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := cfg.receiver.arrival(created[len(created)-1].id); ok {
			if distinct, _ := cfg.receiver.counts(); distinct >= len(created) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	var lat []time.Duration
	lost := 0
	for _, s := range created {
		at, ok := cfg.receiver.arrival(s.id)
		switch {
		case !ok:
			lost++
		case s.measured:
			lat = append(lat, max(at.Sub(s.committed), 0))
		}
	}
	slices.Sort(lat)
	res := &result{latencies: lat, window: cfg.duration}
	_, again := cfg.receiver.counts()
	return &hookRow{Target: t.name, Op: "first-attempt", Deliveries: len(lat), PerSecond: res.rps(),
		P50ms: ms(res.percentile(50)), P99ms: ms(res.percentile(99)), Lost: lost, Again: again}, nil
}

// loopbackOnly is the bench's --webhook-allow-cidr: the receiver's address.
var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
