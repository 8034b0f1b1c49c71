package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pgcluster"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/postgres"
)

// TestFailoverStorm runs two checkoutd serve nodes on a pg_auto_failover
// cluster, through its multi-host URL, and storms them with creates and
// card payments while the primary changes (issue 30): first in a planned
// switchover, then by a SIGKILL of the primary's whole process group. Each
// storm has a store of its own, with an endpoint on a local HTTPS receiver.
// After each:
//
//   - every create answered 201 exists, under its Idempotency-Key alone;
//   - every create answered otherwise (or not at all) left no session, or
//     the one it left is what the same Idempotency-Key answers again;
//   - a refusal is 503 service_unavailable with Retry-After, never a 500;
//   - every session has one checkout.created event, every complete one one
//     checkout.completed, and no session two captured payments, also once
//     the buyers whose payment was cut have tried again;
//   - every event reaches the receiver;
//   - both nodes, never restarted, create again;
//   - /healthz answers 200 all along, and /readyz 503 while no node takes
//     writes after the kill.
//
// It logs the time from the kill (or the switchover's start) to the first
// create answered 201, and the longest time without one.
//
// Node 0 waits out the failover (the default budget); node 1, with a
// budget of 3 s, answers 503 to the creates and payments it cannot
// write in time.
func TestFailoverStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster and real processes")
	}
	c := pgcluster.Start(t)
	db := c.URI()
	r := newEventReceiver(t, false)
	// The same two nodes live through both storms: they must come back by
	// themselves each time. Node 0 waits out a failover (the default
	// budget, a minute); node 1 gives up after 3 s and answers 503, so
	// that the creates answered with an error, and the COMMITs left
	// unresolved, are checked too.
	nodes := []*proc{
		startProcess(t, serveArgs(db, r)...),
		startProcess(t, append(serveArgs(db, r), "--database-failover-budget", "3s")...),
	}
	ctx := context.Background()
	for _, sc := range []struct {
		name string
		// event makes the primary change, and returns when it began and
		// from when creates are counted as made after it.
		event func() (began, after time.Time)
	}{
		{"switchover", func() (time.Time, time.Time) {
			began := time.Now()
			c.Switchover() // returns once the new primary is in place
			return began, time.Now()
		}},
		{"kill", func() (time.Time, time.Time) {
			_, at := c.KillPrimary()
			return at, at
		}},
	} {
		// The next storm begins on a whole cluster: after the switchover,
		// the old primary back as a synchronous standby.
		if err := c.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
		runStorm(t, sc.name, db, nodes, r, sc.event)
	}
}

// Sizes of a storm: how many creates are answered 201 before the primary
// changes and after it takes writes again, how many card payments
// succeed in each part.
const (
	stormCreatesBefore = 200
	stormCreatesAfter  = 300
	stormPaidBefore    = 3
	stormPaidAfter     = 3
	stormCreators      = 6
	stormPayers        = 2
	// stormRequestTimeout bounds one request: longer than a failover and
	// the retries of a write across it.
	stormRequestTimeout = 90 * time.Second
	// stormPause is how long a worker waits after a refusal, which comes
	// at once while no node takes writes, rather than spin.
	stormPause = 100 * time.Millisecond
)

// runStorm runs one storm on a store of its own: creates and payments
// before event, across it and after it (until stormCreatesAfter creates
// sent after it were answered 201), then checks what was answered against
// what the database holds.
func runStorm(t *testing.T, name, db string, nodes []*proc, r *eventReceiver, event func() (time.Time, time.Time)) {
	t.Helper()
	storeID, secret := setupWebhooks(t, db, r)
	s := newStorm(name, nodes, storeID, secret)
	logStart := make([]int, len(nodes))
	before := make([]storeFailoverStats, len(nodes))
	for i, p := range nodes {
		logStart[i] = len(p.log.String())
		before[i] = failoverStats(t, p)
	}
	began := time.Now()
	s.start()
	defer s.stop()

	s.waitFor(t, "before the primary changes", time.Time{}, stormCreatesBefore, stormPaidBefore, 2*time.Minute)
	at, after := event()
	s.waitFor(t, "after the primary changed", after, stormCreatesAfter, stormPaidAfter, pgcluster.FailoverTimeout+time.Minute)
	s.stop()
	t.Logf("%s: storm of %v; %s", name, time.Since(began).Round(time.Millisecond), s.summary(at))
	s.checkProbes(t, at, name == "kill")

	st := openStore(t, db)
	s.checkCreates(t, st)
	s.settlePayments(t)
	s.checkEvents(t, st, r)
	s.checkNodes(t)
	for i, p := range nodes {
		st := failoverStats(t, p)
		t.Logf("%s: node %d: %v write transactions run again on a new connection; COMMITs lost with their connection: %v committed, %v rolled back, %v unresolved",
			name, i, st.reconnects-before[i].reconnects, st.committed-before[i].committed, st.rolledBack-before[i].rolledBack, st.unresolved-before[i].unresolved)
		if errs := errorKinds(p.log.String()[logStart[i]:]); errs != "" {
			t.Logf("%s: node %d logged these errors:\n%s", name, i, errs)
		}
	}
	t.Logf("%s: storm and checks took %v", name, time.Since(began).Round(time.Millisecond))
}

// storm sends creates and card payments to the nodes, alternating between
// them, from several goroutines, and records every answer.
type storm struct {
	name    string
	nodes   []*proc
	storeID string
	secret  string
	client  *http.Client

	mu      sync.Mutex
	creates []*createAnswer
	pays    []*payAnswer
	probes  []probe
	changed chan struct{} // closed and replaced at each answer recorded

	toPay chan string // sessions answered 201, for the payers
	quit  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// probe is what a node's /readyz or /healthz answered during a storm.
type probe struct {
	node       int
	path       string
	at         time.Time
	status     int // 0: no answer
	code       string
	retryAfter string
}

// createAnswer is what one create was answered.
type createAnswer struct {
	key        string
	node       int
	sent, got  time.Time
	status     int    // 0: no answer
	code       string // the error envelope's code
	retryAfter string
	id         string // the session, on 201
	err        error  // why there was no (whole) answer
}

// acked reports whether the create was answered 201 with its session.
func (a *createAnswer) acked() bool {
	return a.status == http.StatusCreated && a.err == nil && a.id != ""
}

func (a *createAnswer) String() string {
	if a.err != nil {
		return fmt.Sprintf("create %s on node %d: %d %v", a.key, a.node, a.status, a.err)
	}
	return fmt.Sprintf("create %s on node %d: %d %s (Retry-After %q)", a.key, a.node, a.status, a.code, a.retryAfter)
}

// payAnswer is what one card payment on the payment page was answered:
// the page's GET, or when that showed the form, the form's POST.
type payAnswer struct {
	session   string
	node      int
	sent, got time.Time
	stage     string // "page" or "card"
	status    int    // 0: no answer
	location  string // of a redirect
	err       error
}

// paid reports whether the card form was answered with the receipt: the
// page of the session, with no decline or failure in its query.
func (a *payAnswer) paid() bool {
	return a.stage == "card" && a.err == nil && a.status == http.StatusSeeOther && a.location == "/invoice/"+a.session
}

func (a *payAnswer) String() string {
	return fmt.Sprintf("payment of %s on node %d: %s answered %d %q %v", a.session, a.node, a.stage, a.status, a.location, a.err)
}

func newStorm(name string, nodes []*proc, storeID, secret string) *storm {
	return &storm{
		name: name, nodes: nodes, storeID: storeID, secret: secret,
		client:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: stormRequestTimeout},
		changed: make(chan struct{}),
		toPay:   make(chan string, stormPayers),
		quit:    make(chan struct{}),
	}
}

func (s *storm) start() {
	for w := range stormCreators {
		s.wg.Go(func() { s.creator(w) })
	}
	for w := range stormPayers {
		s.wg.Go(func() { s.payer(w) })
	}
	s.wg.Go(s.prober)
}

// prober asks the nodes' /readyz and /healthz, in turn, every stormPause,
// as a load balancer would, and records their answers.
func (s *storm) prober() {
	for i := 0; s.pause(); i++ {
		node, path := i%len(s.nodes), []string{"/readyz", "/healthz"}[i/len(s.nodes)%2]
		pr := probe{node: node, path: path, at: time.Now()}
		resp, err := s.client.Get("http://" + s.nodes[node].addr + path)
		if err == nil {
			var env struct {
				Error struct{ Code string } `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&env)
			resp.Body.Close()
			pr.status, pr.code, pr.retryAfter = resp.StatusCode, env.Error.Code, resp.Header.Get("Retry-After")
		}
		s.record(func() { s.probes = append(s.probes, pr) })
	}
}

// checkProbes checks that /healthz answered 200 all along and, when
// outage is set, that /readyz answered 503 service_unavailable with
// Retry-After between at and the first create answered 201 after it,
// while no node took writes.
func (s *storm) checkProbes(t *testing.T, at time.Time, outage bool) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var back time.Time // the first 201 to a create sent after at
	for _, a := range s.creates {
		if a.acked() && !a.sent.Before(at) && (back.IsZero() || a.got.Before(back)) {
			back = a.got
		}
	}
	unready := 0
	for _, p := range s.probes {
		switch {
		case p.path == "/healthz" && p.status != http.StatusOK:
			t.Errorf("%s: node %d: /healthz answered %d at %v; want 200 all along", s.name, p.node, p.status, p.at.Sub(at).Round(time.Millisecond))
		case p.path == "/readyz" && p.at.After(at) && p.at.Before(back) && p.status == http.StatusServiceUnavailable:
			if p.code != checkout.EUnavailable || p.retryAfter == "" {
				t.Errorf("%s: node %d: /readyz answered 503 %q, Retry-After %q; want service_unavailable with Retry-After", s.name, p.node, p.code, p.retryAfter)
			}
			unready++
		}
	}
	if outage && unready == 0 {
		t.Errorf("%s: /readyz never answered 503 while no node took writes (%v)", s.name, back.Sub(at).Round(time.Millisecond))
	}
	t.Logf("%s: /readyz answered 503 %d times while no node took writes; %d probes in all", s.name, unready, len(s.probes))
}

// stop stops the workers and waits for the requests in flight.
func (s *storm) stop() {
	s.once.Do(func() { close(s.quit) })
	s.wg.Wait()
}

// pause waits stormPause, or less when the storm stops; it reports whether
// the storm goes on.
func (s *storm) pause() bool {
	select {
	case <-s.quit:
		return false
	case <-time.After(stormPause):
		return true
	}
}

func (s *storm) stopped() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

func (s *storm) creator(w int) {
	for i := 0; !s.stopped(); i++ {
		a := s.create((w+i)%len(s.nodes), fmt.Sprintf("%s-%d-%d", s.name, w, i))
		s.record(func() { s.creates = append(s.creates, a) })
		if a.acked() {
			if i%4 == 0 {
				select {
				case s.toPay <- a.id:
				default: // the payers are busy: this one stays unpaid
				}
			}
			continue
		}
		if !s.pause() {
			return
		}
	}
}

func (s *storm) payer(w int) {
	for i := 0; ; i++ {
		select {
		case <-s.quit:
			return
		case id := <-s.toPay:
			a := s.pay((w+i)%len(s.nodes), id)
			s.record(func() { s.pays = append(s.pays, a) })
			if !a.paid() && !s.pause() {
				return
			}
		}
	}
}

func (s *storm) record(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
}

// stormBody is the create sent with Idempotency-Key key: the key is in its
// metadata too, so that the sessions a key made can be found.
func stormBody(key string) string {
	return `{"items":[{"name":"Sword","amount":1500}],"metadata":{"storm_key":"` + key + `"}}`
}

// create sends the create of key to node.
func (s *storm) create(node int, key string) *createAnswer {
	a := &createAnswer{key: key, node: node, sent: time.Now()}
	defer func() { a.got = time.Now() }()
	req, _ := http.NewRequest("POST", "http://"+s.nodes[node].addr+"/v1/stores/"+s.storeID+"/checkouts", strings.NewReader(stormBody(key)))
	req.Header.Set("Authorization", "Bearer "+s.secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := s.client.Do(req)
	if err != nil {
		a.err = err
		return a
	}
	defer resp.Body.Close()
	a.status, a.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	var env struct {
		Data  struct{ ID string }
		Error struct{ Code string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		a.err = fmt.Errorf("read the answer: %w", err)
		return a
	}
	a.id, a.code = env.Data.ID, env.Error.Code
	return a
}

// pay pays session with the test card that succeeds, on node's payment
// page, as a buyer's browser would: the page, then its card form with the
// page's token. Redirects are not followed: where the form sends the buyer
// says how the payment went.
func (s *storm) pay(node int, session string) *payAnswer {
	a := &payAnswer{session: session, node: node, sent: time.Now(), stage: "page"}
	defer func() { a.got = time.Now() }()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Transport: s.client.Transport, Timeout: stormRequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	origin := "http://" + s.nodes[node].addr
	page := origin + "/invoice/" + session
	resp, err := client.Get(page)
	if err != nil {
		a.err = err
		return a
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.status = resp.StatusCode
	if err != nil {
		a.err = err
		return a
	}
	m := csrfInput.FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		return a // no card form: an error page, or the receipt
	}
	form := url.Values{"csrf_token": {html.UnescapeString(string(m[1]))}, "number": {"4242424242424242"},
		"expiry": {"12/" + time.Now().AddDate(2, 0, 0).Format("06")}, "cvc": {"123"}, "name": {"Storm Buyer"}}
	req, _ := http.NewRequest("POST", page+"/card", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	a.stage, a.status = "card", 0
	resp, err = client.Do(req)
	if err != nil {
		a.err = err
		return a
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	a.status, a.location = resp.StatusCode, resp.Header.Get("Location")
	return a
}

// counts returns how many creates sent at or after since were answered
// 201, and how many payments sent then were answered with the receipt.
func (s *storm) counts(since time.Time) (created, paid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.creates {
		if a.acked() && !a.sent.Before(since) {
			created++
		}
	}
	for _, a := range s.pays {
		if a.paid() && !a.sent.Before(since) {
			paid++
		}
	}
	return created, paid
}

// waitFor waits until creates sent from since were answered 201 and
// payments sent from since were paid, each as many as wanted.
func (s *storm) waitFor(t *testing.T, what string, since time.Time, creates, paid int, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		c, p := s.counts(since)
		if c >= creates && p >= paid {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s: %s: %d creates answered 201 and %d payments paid in %v; want %d and %d; %s",
				s.name, what, c, p, timeout, creates, paid, s.summary(since))
		}
	}
}

// summary describes the answers: how many of each, and how long creates
// went unanswered 201 from at.
func (s *storm) summary(at time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	kinds := map[string]int{}
	var first time.Time
	var acks []time.Time
	for _, a := range s.creates {
		switch {
		case a.acked():
			kinds["201"]++
			acks = append(acks, a.got)
			if !a.sent.Before(at) && (first.IsZero() || a.got.Before(first)) {
				first = a.got
			}
		case a.status == 0:
			kinds["no answer"]++
		default:
			kinds[fmt.Sprintf("%d %s", a.status, a.code)]++
		}
	}
	slices.SortFunc(acks, func(a, b time.Time) int { return a.Compare(b) })
	var gap time.Duration
	for i := 1; i < len(acks); i++ {
		if acks[i].After(at) {
			gap = max(gap, acks[i].Sub(acks[i-1]))
		}
	}
	pays := map[string]int{}
	for _, a := range s.pays {
		switch {
		case a.paid():
			pays["paid"]++
		case a.status == 0:
			pays[a.stage+" no answer"]++
		default:
			pays[fmt.Sprintf("%s %d", a.stage, a.status)]++
		}
	}
	firstAfter := "none"
	if !first.IsZero() {
		firstAfter = first.Sub(at).Round(time.Millisecond).String()
	}
	return fmt.Sprintf("first create answered 201 %s after the primary began to change; longest time without a 201: %v; creates: %s; payments: %s",
		firstAfter, gap.Round(time.Millisecond), describeCounts(kinds), describeCounts(pays))
}

func describeCounts(m map[string]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// openStore opens the cluster's database as checkoutd does, for the checks.
func openStore(t *testing.T, db string) *store.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := postgres.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// sessionsByKey returns the store's sessions by their storm_key.
func (s *storm) sessionsByKey(t *testing.T, st *store.DB) map[string][]*checkout.Session {
	t.Helper()
	out := map[string][]*checkout.Session{}
	p := checkout.SessionListParams{MerchantID: s.storeID, Mode: checkout.ModeTest, Limit: 1000}
	for {
		page, err := st.SessionList(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, sess := range page {
			k := sess.Metadata["storm_key"]
			out[k] = append(out[k], sess)
		}
		if len(page) < p.Limit {
			return out
		}
		last := page[len(page)-1]
		p.After = checkout.Cursor{At: last.CreatedAt, ID: last.ID}
	}
}

// checkCreates checks every create's answer against the sessions there
// are: a 201's session is there, alone under its key; any other answer
// left nothing, or the same key answers the session it left; a refusal is
// a 503 service_unavailable with Retry-After.
func (s *storm) checkCreates(t *testing.T, st *store.DB) {
	t.Helper()
	byKey := s.sessionsByKey(t, st)
	var bad []string
	fail := func(format string, args ...any) {
		bad = append(bad, fmt.Sprintf(format, args...))
	}
	var acked []*createAnswer
	var leftNothing, foundByKey int
	for _, a := range s.creates {
		found := byKey[a.key]
		if len(found) > 1 {
			fail("%v: %d sessions under its key", a, len(found))
			continue
		}
		if a.acked() {
			acked = append(acked, a)
			if len(found) != 1 || found[0].ID != a.id {
				fail("%v %s: not in the database after the failover (%d sessions under its key)", a, a.id, len(found))
			}
			continue
		}
		if a.status != 0 && (a.status != http.StatusServiceUnavailable || a.code != checkout.EUnavailable || a.retryAfter == "") {
			fail("%v: want 201, or 503 service_unavailable with Retry-After", a)
		}
		if len(found) == 0 {
			leftNothing++
			continue
		}
		again := s.create(a.node, a.key)
		if !again.acked() || again.id != found[0].ID {
			fail("%v left session %s; the same key answers %v %s", a, found[0].ID, again, again.id)
			continue
		}
		foundByKey++
	}
	for _, m := range bad[:min(len(bad), 20)] {
		t.Errorf("%s: %s", s.name, m)
	}
	if len(bad) > 20 {
		t.Errorf("%s: and %d more", s.name, len(bad)-20)
	}
	// And through the API, on both nodes.
	missing := s.getAll(acked)
	for _, m := range missing[:min(len(missing), 20)] {
		t.Errorf("%s: %s", s.name, m)
	}
	t.Logf("%s: %d creates: %d answered 201 and there; of the others %d left nothing, %d left the session their key answers again",
		s.name, len(s.creates), len(acked), leftNothing, foundByKey)
}

// getAll reads the sessions of acked through the API, four at a time,
// alternating between the nodes, and returns what was not answered as
// created.
func (s *storm) getAll(acked []*createAnswer) []string {
	var mu sync.Mutex
	var missing []string
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range next {
				a := acked[i]
				req, _ := http.NewRequest("GET", "http://"+s.nodes[i%len(s.nodes)].addr+"/v1/stores/"+s.storeID+"/checkouts/"+a.id, nil)
				req.Header.Set("Authorization", "Bearer "+s.secret)
				var env struct{ Data struct{ ID string } }
				resp, err := s.client.Do(req)
				if err == nil {
					err = json.NewDecoder(resp.Body).Decode(&env)
					resp.Body.Close()
					if err == nil && (resp.StatusCode != http.StatusOK || env.Data.ID != a.id) {
						err = fmt.Errorf("%s, session %q", resp.Status, env.Data.ID)
					}
				}
				if err != nil {
					mu.Lock()
					missing = append(missing, fmt.Sprintf("GET %s (created by %v): %v", a.id, a, err))
					mu.Unlock()
				}
			}
		})
	}
	for i := range acked {
		next <- i
	}
	close(next)
	wg.Wait()
	return missing
}

// settlePayments has every buyer whose payment was not answered with the
// receipt try again, as a buyer would, until the session is paid: an
// answer cut by the failover must not have charged the card unless the
// session is complete, nor may trying again charge it twice (checkEvents
// counts the captured payments).
func (s *storm) settlePayments(t *testing.T) {
	t.Helper()
	paid := map[string]bool{}
	for _, a := range s.pays {
		if a.paid() {
			paid[a.session] = true
		}
		if a.status >= 500 && a.status != http.StatusServiceUnavailable {
			t.Errorf("%s: %v; want the receipt, or 503", s.name, a)
		}
	}
	sessions := s.paidSessions()
	// A payment whose charge was made but whose outcome was not written
	// holds its session until the payments job asks the processor, once
	// the charge would have timed out: the buyer waits that long at worst.
	began := time.Now()
	deadline := began.Add(checkout.CardChargeTimeout + 30*time.Second)
	retried := 0
	var waited time.Duration
	for _, id := range sessions {
		if paid[id] {
			continue
		}
		retried++
		for {
			if s.sessionStatus(id) == string(checkout.StatusComplete) {
				break
			}
			a := s.pay(retried%len(s.nodes), id)
			if a.paid() {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s: session %s not paid %v after the storm; the last try: %v", s.name, id, time.Since(began).Round(time.Second), a)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		waited = time.Since(began)
	}
	t.Logf("%s: %d sessions paid by card, %d of them after the buyer tried again, the last %v after the storm",
		s.name, len(sessions), retried, waited.Round(time.Millisecond))
}

// paidSessions returns the sessions the storm paid by card, once each.
func (s *storm) paidSessions() []string {
	var out []string
	for _, a := range s.pays {
		if !slices.Contains(out, a.session) {
			out = append(out, a.session)
		}
	}
	return out
}

// sessionStatus reads a session's status through the API ("" when that
// fails).
func (s *storm) sessionStatus(id string) string {
	req, _ := http.NewRequest("GET", "http://"+s.nodes[0].addr+"/v1/stores/"+s.storeID+"/checkouts/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+s.secret)
	resp, err := s.client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var env struct{ Data struct{ Status string } }
	json.NewDecoder(resp.Body).Decode(&env)
	return env.Data.Status
}

// checkEvents checks the store's events and payments: one checkout.created
// a session, one checkout.completed a complete session and none for
// another, at most one captured payment a session and one for each session
// paid; then waits for every event at the receiver.
func (s *storm) checkEvents(t *testing.T, st *store.DB, r *eventReceiver) {
	t.Helper()
	ctx := context.Background()
	sessions := map[string]*checkout.Session{}
	for _, list := range s.sessionsByKey(t, st) {
		for _, sess := range list {
			sessions[sess.ID] = sess
		}
	}
	var events []*checkout.Event
	p := checkout.EventListParams{MerchantID: s.storeID, Mode: checkout.ModeTest, Limit: 1000}
	for {
		page, err := st.EventList(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, page...)
		if len(page) < p.Limit {
			break
		}
		last := page[len(page)-1]
		p.After = checkout.Cursor{At: last.CreatedAt, ID: last.ID}
	}
	perSession := map[string]map[string]int{} // type, then session id
	for _, e := range events {
		var obj struct {
			ID         string
			CheckoutID string `json:"checkout_id"`
		}
		if err := json.Unmarshal(e.Object, &obj); err != nil {
			t.Fatalf("event %s: %v", e.ID, err)
		}
		id := obj.ID
		if strings.HasPrefix(e.Type, "payment.") {
			id = obj.CheckoutID
		}
		if perSession[e.Type] == nil {
			perSession[e.Type] = map[string]int{}
		}
		perSession[e.Type][id]++
	}
	var payments []*checkout.Payment
	pp := checkout.PaymentListParams{MerchantID: s.storeID, Mode: checkout.ModeTest, Limit: 1000}
	for {
		page, err := st.PaymentList(ctx, pp)
		if err != nil {
			t.Fatal(err)
		}
		payments = append(payments, page...)
		if len(page) < pp.Limit {
			break
		}
		last := page[len(page)-1]
		pp.After = checkout.Cursor{At: last.CreatedAt, ID: last.ID}
	}
	captured := map[string]int{}
	for _, pay := range payments {
		if pay.Status != checkout.PaymentProcessing && pay.Status != checkout.PaymentFailed {
			captured[pay.SessionID]++
		}
	}
	complete := 0
	for id, sess := range sessions {
		wantCompleted := 0
		if sess.Status == checkout.StatusComplete {
			wantCompleted = 1
			complete++
		}
		if n := perSession[checkout.EventCheckoutCreated][id]; n != 1 {
			t.Errorf("%s: session %s (%s) has %d checkout.created events; want 1", s.name, id, sess.Metadata["storm_key"], n)
		}
		if n := perSession[checkout.EventCheckoutCompleted][id]; n != wantCompleted {
			t.Errorf("%s: session %s, %s, has %d checkout.completed events; want %d", s.name, id, sess.Status, n, wantCompleted)
		}
		if n := captured[id]; n != wantCompleted {
			t.Errorf("%s: session %s, %s, has %d captured payments; want %d", s.name, id, sess.Status, n, wantCompleted)
		}
	}
	for id := range perSession[checkout.EventCheckoutCreated] {
		if sessions[id] == nil {
			t.Errorf("%s: a checkout.created event of session %s, which is not there", s.name, id)
		}
	}
	for _, id := range s.paidSessions() {
		if sess := sessions[id]; sess == nil || sess.Status != checkout.StatusComplete {
			t.Errorf("%s: session %s, paid by card, is not complete", s.name, id)
		}
	}
	var notReceived []string
	received := func() bool {
		counts := r.counts()
		notReceived = notReceived[:0]
		for _, e := range events {
			if counts[e.ID] == 0 {
				notReceived = append(notReceived, e.ID+" "+e.Type)
			}
		}
		return len(notReceived) == 0
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !received() {
		if time.Now().After(deadline) {
			t.Errorf("%s: %d of %d events not at the receiver two minutes after the storm, such as %v",
				s.name, len(notReceived), len(events), notReceived[:min(len(notReceived), 5)])
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s: %d sessions, %d complete, %d payments, %d events, all at the receiver: %v", s.name, len(sessions), complete, len(payments), len(events), len(notReceived) == 0)
}

// checkNodes checks that each node, never restarted, is ready and creates.
func (s *storm) checkNodes(t *testing.T) {
	t.Helper()
	for i, p := range s.nodes {
		select {
		case <-p.done:
			t.Errorf("%s: node %d exited: %v", s.name, i, p.err)
			continue
		default:
		}
		resp, err := s.client.Get("http://" + p.addr + "/readyz")
		if err != nil {
			t.Errorf("%s: node %d: /readyz: %v", s.name, i, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: node %d: /readyz = %d after the storm; want 200", s.name, i, resp.StatusCode)
		}
		if a := s.create(i, fmt.Sprintf("%s-after-%d", s.name, i)); !a.acked() {
			t.Errorf("%s: node %d after the storm: %v; want 201", s.name, i, a)
		}
	}
}

// storeFailoverStats are a node's counts of writes that met a failover.
type storeFailoverStats struct {
	reconnects, committed, rolledBack, unresolved float64
}

func failoverStats(t *testing.T, p *proc) storeFailoverStats {
	t.Helper()
	m := scrapeServe(t, "http://"+p.addr+"/metrics")
	const ambiguous = "checkoutd_db_ambiguous_commits_total"
	return storeFailoverStats{
		reconnects: m.Value("checkoutd_db_reconnects_total"),
		committed:  m.Value(ambiguous, "outcome", "committed"),
		rolledBack: m.Value(ambiguous, "outcome", "rolled_back"),
		unresolved: m.Value(ambiguous, "outcome", "unresolved"),
	}
}

// errorKinds sums up the lines of a checkoutd log at level ERROR: how many
// of each message and error code, and the first of each.
func errorKinds(log string) string {
	count := map[string]int{}
	var kinds, first []string
	for line := range strings.Lines(log) {
		if !strings.Contains(line, "level=ERROR") {
			continue
		}
		var kind string
		for _, re := range errorKind {
			if m := re.FindString(line); m != "" {
				kind += strings.TrimSpace(m) + " "
			}
		}
		kind = strings.TrimSpace(kind)
		if count[kind] == 0 {
			kinds = append(kinds, kind)
			first = append(first, strings.TrimSpace(line))
		}
		count[kind]++
	}
	var b strings.Builder
	for i, k := range kinds {
		fmt.Fprintf(&b, "%d × %s, such as\n\t%s\n", count[k], k, first[i])
	}
	return b.String()
}

// errorKind picks what makes a log line's kind: its message, its job, and
// the code its error begins with.
var errorKind = []*regexp.Regexp{
	regexp.MustCompile(`msg=("[^"]*"|\S+)`),
	regexp.MustCompile(`code=\S+`),
	regexp.MustCompile(`job=\S+`),
	regexp.MustCompile(` err="?[a-z_]+`),
}
