package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// localService is checkoutd in this process behind a real HTTP server, with a
// store: what trigger and listen talk to.
type localService struct {
	app   *app.App
	srv   *httptest.Server
	base  string
	store *checkout.Merchant
	// clock is the service's: tests move it to make what is due happen
	// (then run the payments job: app.Service.ProcessAllDuePayments).
	clock *clock.Fake
}

func startService(t *testing.T, db *store.DB) *localService {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	clk := clock.NewFake(time.Now())
	a := app.New(app.Config{Store: db, Logger: logtest.Logger(t), BaseURL: base, CheckoutBaseURL: base, Now: clk.Now,
		Processors: pay.Registry{Test: pay.Simulators()}})
	t.Cleanup(a.Close)
	srv.Config.Handler = a.Handler
	srv.Start()
	t.Cleanup(srv.Close)
	m, err := a.Service.CreateMerchant(context.Background(), checkout.MerchantParams{Name: "Acme", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	return &localService{app: a, srv: srv, base: base, store: m, clock: clk}
}

// key makes a bearer key of the store and returns its secret.
func (s *localService) key(t *testing.T, mode checkout.Mode, perm checkout.Permission) string {
	t.Helper()
	_, secret, err := s.app.Service.CreateAPIKey(context.Background(), checkout.APIKeyParams{MerchantID: s.store.ID, Mode: mode,
		Type: checkout.KeyBearer, Permissions: []checkout.Permission{perm}})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// running is a checkoutd command running in this process until stopped.
type running struct {
	cancel      context.CancelFunc
	done        chan error
	out, errOut *logtest.Buffer
}

func startCLI(e vars, args ...string) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), out: &logtest.Buffer{}, errOut: &logtest.Buffer{}}
	go func() { r.done <- run(ctx, args, e.getenv, r.out, r.errOut) }()
	return r
}

// stop interrupts the command (Ctrl-C) and waits for it to end.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("checkoutd ended with %v\nstderr: %s", err, r.errOut.String())
	}
}

// localReceiver is a developer's webhook receiver on their own machine: it
// verifies each request with the listener's secret, as docs/webhooks.md
// tells a receiver to, and keeps what came in order.
type localReceiver struct {
	*httptest.Server
	secret string
	mu     sync.Mutex
	got    []receivedEvent
	status int
}

type receivedEvent struct {
	ID, Type, Session string
	Verified          bool
	Headers           http.Header
}

func newLocalReceiver(t *testing.T, secret string) *localReceiver {
	r := &localReceiver{secret: secret, status: http.StatusOK}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var e struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				Object struct {
					ID        string `json:"id"`
					SessionID string `json:"checkout_session_id"`
				} `json:"object"`
			} `json:"data"`
		}
		json.Unmarshal(body, &e)
		session := e.Data.Object.ID
		if strings.HasPrefix(e.Type, "payment.") {
			session = e.Data.Object.SessionID
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, receivedEvent{ID: e.ID, Type: e.Type, Session: session, Headers: req.Header.Clone(),
			Verified: webhooktest.Verify(req.Header.Get("Service-Webhook-Signature"), body, r.secret, time.Now())})
		w.WriteHeader(r.status)
		io.WriteString(w, `{"received":true}`)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *localReceiver) events() []receivedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (r *localReceiver) setStatus(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = code
}

// listen end to end: a developer's checkoutd listen forwards the store's
// test-mode events to a local URL, signed, each once, in the order they
// were made: those made while it runs, while it is stopped, and while its
// stream is cut.
func TestListen(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		svc := startService(t, db)
		srv, base, m, ctx := svc.srv, svc.base, svc.store, context.Background()
		secret := svc.key(t, checkout.ModeTest, checkout.PermCheckoutsWrite)
		env := vars{"CHECKOUTD_SECRET": secret}
		flags := []string{"--store", m.ID, "--base-url", base, "--name", "laptop"}

		// --print-secret registers the listener and prints its secret.
		whsec := strings.TrimSpace(mustCLI(t, env, append([]string{"listen", "--print-secret"}, flags...)...))
		if !strings.HasPrefix(whsec, checkout.WebhookSecretPrefix) {
			t.Fatalf("listen --print-secret printed %q; want a whsec_ secret", whsec)
		}
		local := newLocalReceiver(t, whsec)
		listenArgs := func(format string) []string {
			return append([]string{"listen", "--forward-to", local.URL + "/hooks", "--format", format}, flags...)
		}
		received := func(n int) {
			t.Helper()
			waitFor(t, fmt.Sprintf("the local receiver to have %d events", n), 20*time.Second, func() bool { return len(local.events()) >= n })
		}
		createSession := func() {
			t.Helper()
			var s struct{ ID string }
			tr, err := newTriggerer(base, m.ID, secret)
			if err != nil {
				t.Fatal(err)
			}
			// Its own connection: the test cuts the service's connections.
			tr.client.Transport = &http.Transport{DisableKeepAlives: true}
			if err := tr.api(ctx, http.MethodPost, "/checkouts", `{"items":[{"name":"Sword","amount":1500}]}`, &s); err != nil {
				t.Fatal(err)
			}
		}

		// Events made while it runs: a session, and one paid by trigger
		// (three events of one session).
		l := startCLI(env, listenArgs("json")...)
		waitFor(t, "listen to connect", 20*time.Second, func() bool { return strings.Contains(l.errOut.String(), "Connected") })
		if !strings.Contains(l.errOut.String(), whsec) {
			t.Errorf("listen's stderr does not show the signing secret:\n%s", l.errOut.String())
		}
		createSession()
		mustCLI(t, env, "trigger", "checkout.completed", "--store", m.ID, "--base-url", base)
		received(4)
		l.stop(t)
		var lines []listenLine
		dec := json.NewDecoder(strings.NewReader(l.out.String()))
		for dec.More() {
			var line listenLine
			if err := dec.Decode(&line); err != nil {
				t.Fatalf("listen --format json printed %q: %v", l.out.String(), err)
			}
			lines = append(lines, line)
		}
		if len(lines) != 4 || lines[0].StatusCode != 200 || lines[0].EventType != checkout.EventCheckoutCreated || len(lines[0].Event) == 0 {
			t.Errorf("listen --format json printed %+v; want 4 lines, the first a checkout.created answered 200", lines)
		}

		// Events made while it is stopped wait for it.
		createSession()
		createSession()
		l = startCLI(env, listenArgs("text")...)
		received(6)
		if !strings.Contains(l.out.String(), "<-- [200] POST "+local.URL+"/hooks") {
			t.Errorf("listen's text output:\n%s", l.out.String())
		}

		// The stream cut under it: it reconnects, and what was made
		// meanwhile arrives.
		srv.CloseClientConnections()
		createSession()
		received(7)
		// A local answer that is not 2xx fails the delivery at once: it is
		// not forwarded again.
		local.setStatus(http.StatusInternalServerError)
		createSession()
		received(8)
		local.setStatus(http.StatusOK)
		createSession()
		received(9)
		l.stop(t)

		// Each event once, in the order made, each verified.
		got := local.events()
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
			if !e.Verified {
				t.Errorf("event %s failed the receiver's signature check", e.ID)
			}
			for _, h := range []string{"Service-Event-Id", "Service-Event-Type", "Service-Delivery-Id", "Service-Delivery-Attempt"} {
				if e.Headers.Get(h) == "" {
					t.Errorf("event %s came without %s", e.ID, h)
				}
			}
		}
		events, err := db.EventList(ctx, checkout.EventListParams{MerchantID: m.ID, Mode: checkout.ModeTest, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, e := range slices.Backward(events) {
			want = append(want, e.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("the receiver got %v; want every event once, in the order made: %v", ids, want)
		}

		// The service recorded each forward as the listener's delivery.
		eps, err := db.EndpointList(ctx, m.ID)
		if err != nil || len(eps) != 1 || !eps[0].IsListener() {
			t.Fatalf("endpoints = %v, %v; want the listener alone", eps, err)
		}
		ds, err := db.DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: eps[0].ID})
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, d := range ds {
			if d.Attempts != 1 || !d.Finished() {
				t.Errorf("delivery %s: %d attempts, %s; want one attempt, finished", d.ID, d.Attempts, d.Status)
			}
			if d.Status == checkout.DeliveryFailed {
				failed++
			}
		}
		if len(ds) != 9 || failed != 1 {
			t.Errorf("%d deliveries to the listener, %d failed; want 9, the one answered 500 failed", len(ds), failed)
		}
	})
}

// listen's mistakes are usage errors that say what to do; a key the
// service refuses ends it with the service's words.
func TestListenRefusals(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	svc := startService(t, db)
	base, m, ctx := svc.base, svc.store, context.Background()
	secret := svc.key(t, checkout.ModeTest, checkout.PermCheckoutsRead)
	env := vars{"CHECKOUTD_SECRET": secret}
	to := []string{"--forward-to", "http://localhost:3000/hooks"}
	for _, tt := range []struct {
		args  []string
		env   vars
		usage bool
		want  string
	}{
		{[]string{"--store", m.ID}, env, true, "--forward-to"},
		{append(to, "--base-url", base), env, true, "--store"},
		{append(to, "--store", m.ID), vars{}, true, "CHECKOUTD_SECRET"},
		{append(to, "--store", m.ID), vars{"CHECKOUTD_SECRET": "ck_live_sk_" + checkout.NewSecret()}, true, "test mode only"},
		{[]string{"--forward-to", "localhost:3000", "--store", m.ID}, env, true, "not an http(s) URL"},
		{append(to, "--store", m.ID, "--format", "yaml"), env, true, "--format"},
		{append(to, "--store", m.ID, "--base-url", "ftp://x"), env, true, "--base-url"},
		{append(to, "--store", m.ID, "--base-url", base, "--events", "checkout.paid"), env, false, "checkout.paid"},
		{append(to, "--store", m.ID, "--base-url", base), vars{"CHECKOUTD_SECRET": "ck_test_sk_" + checkout.NewSecret()}, false, "invalid_api_key"},
	} {
		_, _, err := cli(t, tt.env, append([]string{"listen"}, tt.args...)...)
		_, isUsage := err.(usageError)
		if err == nil || isUsage != tt.usage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("listen %q = %v; want a %s error saying %q", tt.args, err, map[bool]string{true: "usage", false: "plain"}[tt.usage], tt.want)
		}
	}

	// webhooks list shows the listener for what it is.
	mustCLI(t, env, "listen", "--print-secret", "--store", m.ID, "--base-url", base, "--name", "laptop")
	eps, err := db.EndpointList(ctx, m.ID)
	if err != nil || len(eps) != 1 {
		t.Fatalf("endpoints = %v, %v", eps, err)
	}
	j := toEndpointJSON(eps[0], false)
	if j.Kind != "listener" || j.ListenerName != "laptop" || j.URL != "" {
		t.Errorf("the listener as the CLI lists it: %+v", j)
	}
}

// listen against real processes: the service stops (its stream ends at
// once, without holding up the shutdown) and starts again on the same
// database, and listen, still running, reconnects and gets what was made
// meanwhile.
func TestListenAcrossServiceRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	db := filepath.Join(t.TempDir(), "checkoutd.db")
	var st struct{ ID string }
	cliJSON(t, &st, "stores", "create", "--database", db, "--name", "Acme Games", "--currency", "USD")
	var key struct{ Secret string }
	cliJSON(t, &key, "keys", "create", "--database", db, "--store", st.ID, "--mode", "test")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := []string{"--database", db, "--addr", addr, "--shutdown-timeout", "5m", "--rate-limit", "0"}
	p := startProcess(t, args...)
	env := vars{"CHECKOUTD_SECRET": key.Secret}
	flags := []string{"--store", st.ID, "--base-url", "http://" + addr}
	whsec := strings.TrimSpace(mustCLI(t, env, append([]string{"listen", "--print-secret"}, flags...)...))
	local := newLocalReceiver(t, whsec)
	l := startCLI(env, append([]string{"listen", "--forward-to", local.URL}, flags...)...)
	defer l.stop(t)
	waitFor(t, "listen to connect", 30*time.Second, func() bool { return strings.Contains(l.errOut.String(), "Connected") })
	createSessions(t, p, st.ID, key.Secret, 1)
	waitFor(t, "the first event", 30*time.Second, func() bool { return len(local.events()) == 1 })
	// listen reports the local answer to the service after it; stopped
	// before the report lands, the service leaves listen retrying the
	// report (for up to a minute, so that the event is not forwarded
	// again), not reconnecting yet.
	reported := regexp.MustCompile(`msg=request method=POST path=\S+/deliveries/whd_\S+ status=200`)
	waitFor(t, "listen to report the first event's result", 30*time.Second, func() bool { return reported.MatchString(p.log.String()) })

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// With a 5-minute shutdown timeout, a stream left open would hold the
	// process past this wait.
	waitFor(t, "serve to stop", 60*time.Second, func() bool {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	})
	if err := p.wait(); err != nil {
		t.Fatalf("serve exited with %v", err)
	}
	waitFor(t, "listen to notice", 30*time.Second, func() bool { return strings.Contains(l.errOut.String(), "reconnecting") })

	p = startProcess(t, args...)
	createSessions(t, p, st.ID, key.Secret, 2)
	waitFor(t, "the events made after the restart", 60*time.Second, func() bool { return len(local.events()) == 3 })
	for _, e := range local.events() {
		if !e.Verified {
			t.Errorf("event %s failed the receiver's signature check", e.ID)
		}
	}
}
