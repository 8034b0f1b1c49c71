package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

func (h *harness) listenersPath() string { return "/v1/stores/" + h.store.ID + "/listeners" }

// listen registers a listener named name through the API.
func (h *harness) listen(name string, events ...string) checkout.ListenerView {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name})
	if len(events) > 0 {
		body, _ = json.Marshal(map[string]any{"name": name, "events": events})
	}
	r := h.do(request{method: "POST", path: h.listenersPath(), secret: h.secret, body: string(body)})
	if r.Status != http.StatusOK {
		h.t.Fatalf("listen %q = %d %s", name, r.Status, r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		h.t.Errorf("the listener's answer, which carries its secret, has Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	var env struct{ Data checkout.ListenerView }
	r.decode(h.t, &env)
	return env.Data
}

// deliveriesTo returns the deliveries made for endpoint id.
func (h *harness) deliveriesTo(id string) []*checkout.Delivery {
	h.t.Helper()
	ds, err := h.db.DeliveryList(context.Background(), checkout.DeliveryListParams{EndpointID: id})
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

// TestListenerRegister: the rules of POST /v1/stores/{storeId}/listeners,
// each on both sides of its bound.
func TestListenerRegister(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		l := h.listen("laptop", checkout.EventCheckoutCompleted)
		if l.Object != "listener" || l.Mode != checkout.ModeTest || l.Name != "laptop" || !strings.HasPrefix(l.Secret, checkout.WebhookSecretPrefix) ||
			len(l.Events) != 1 || l.Events[0] != checkout.EventCheckoutCompleted {
			t.Errorf("listener = %+v", l)
		}
		// Again under the name: the same listener and secret, new events.
		again := h.listen("  laptop ")
		if again.ID != l.ID || again.Secret != l.Secret || again.Events[0] != checkout.AllEvents {
			t.Errorf("listening again = %+v; want listener %s resumed with every event", again, l.ID)
		}
		// A read key may listen; a live key may not.
		_, read := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		if r := h.do(request{method: "POST", path: h.listenersPath(), secret: read, body: `{"name":"ci"}`}); r.Status != http.StatusOK {
			t.Errorf("a read key's listen = %d %s", r.Status, r.Body)
		}
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		e := wantError(t, h.do(request{method: "POST", path: h.listenersPath(), secret: live, body: `{"name":"laptop"}`}), 403, checkout.EPermissionDenied)
		if !strings.Contains(e.Error.Message, "test-mode") {
			t.Errorf("a live key's refusal says %q", e.Error.Message)
		}
		wantError(t, h.do(request{method: "POST", path: h.listenersPath(), body: `{"name":"laptop"}`}), 401, checkout.EAuthenticationRequired)
		other := h.newStore("Other", "USD")
		wantError(t, h.do(request{method: "POST", path: "/v1/stores/" + other.ID + "/listeners", secret: h.secret, body: `{"name":"laptop"}`}), 404, checkout.EStoreNotFound)
		wantError(t, h.do(request{method: "POST", path: h.listenersPath(), secret: h.secret, body: `{"name":"laptop"}`, headers: map[string]string{"Content-Type": "text/plain"}}),
			415, checkout.EUnsupportedMediaType)

		h.listen(strings.Repeat("n", checkout.MaxListenerNameLen))
		for _, tt := range []struct{ body, param string }{
			{`{}`, "name"},
			{`{"name":""}`, "name"},
			{`{"name":"  "}`, "name"},
			{`{"name":"` + strings.Repeat("n", checkout.MaxListenerNameLen+1) + `"}`, "name"},
			{`{"name":"a\nb"}`, "name"},
			{`{"name":7}`, "name"},
			{`{"name":"x","events":[]}`, "events"},
			{`{"name":"x","events":"all"}`, "events"},
			{`{"name":"x","events":["checkout.paid"]}`, "events"},
			{`{"name":"x","colour":"red"}`, "colour"},
		} {
			e := wantError(t, h.do(request{method: "POST", path: h.listenersPath(), secret: h.secret, body: tt.body}), 400, checkout.EValidationFailed)
			if e.Error.Param != tt.param {
				t.Errorf("listen %s: param %q; want %q", tt.body, e.Error.Param, tt.param)
			}
		}
		wantError(t, h.do(request{method: "POST", path: h.listenersPath(), secret: h.secret, body: `{"name":`}), 400, checkout.EInvalidJSON)
	})
}

// TestListenerLimit: a store has at most 10 listeners; at the limit a new
// name replaces the one idle the longest, once that one has been idle over
// 24 hours, and is refused before.
func TestListenerLimit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		first := h.listen("dev-0")
		h.clock.Advance(time.Minute)
		for i := 1; i < checkout.MaxListenersPerStore; i++ {
			h.listen(fmt.Sprintf("dev-%d", i))
		}
		h.clock.Advance(checkout.ListenerIdleLimit - time.Minute)
		// dev-0 was seen exactly 24 hours ago: it still receives.
		e := wantError(t, h.do(request{method: "POST", path: h.listenersPath(), secret: h.secret, body: `{"name":"dev-new"}`}), 400, checkout.EValidationFailed)
		if e.Error.Details[0].Code != "too_many" {
			t.Errorf("the 11th listener's refusal = %+v", e.Error)
		}
		h.clock.Advance(time.Second)
		h.listen("dev-new")
		if _, err := db.EndpointGet(context.Background(), first.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("the idlest listener after it was replaced: %v; want it gone", err)
		}
		if eps, _ := db.EndpointList(context.Background(), h.store.ID); len(eps) != checkout.MaxListenersPerStore {
			t.Errorf("%d listeners; want %d", len(eps), checkout.MaxListenersPerStore)
		}
	})
}

// TestListenerReceives: which events get a delivery to a listener: the
// store's test-mode events it subscribes to, while connected and for 24
// hours after, never live ones; and the dispatcher never attempts them.
func TestListenerReceives(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		ctx := context.Background()
		l := h.listen("laptop")
		only := h.listen("completed-only", checkout.EventCheckoutCompleted)
		h.mustCreate(swordBody)
		if n := len(h.deliveriesTo(l.ID)); n != 1 {
			t.Fatalf("%d deliveries to the listener after a checkout.created; want 1", n)
		}
		if n := len(h.deliveriesTo(only.ID)); n != 0 {
			t.Errorf("%d deliveries to a listener of checkout.completed only; want 0", n)
		}
		_, live := h.newKey(h.store.ID, checkout.ModeLive, checkout.PermCheckoutsWrite)
		if r := h.do(request{method: "POST", path: "/v1/stores/" + h.store.ID + "/checkouts", secret: live, body: swordBody}); r.Status != 201 {
			t.Fatalf("live create = %d", r.Status)
		}
		if n := len(h.deliveriesTo(l.ID)); n != 1 {
			t.Errorf("%d deliveries to the listener after a live event; want still 1", n)
		}
		// Seen 24 hours ago exactly: it receives; a second later, not.
		h.clock.Advance(checkout.ListenerIdleLimit)
		h.mustCreate(swordBody)
		if n := len(h.deliveriesTo(l.ID)); n != 2 {
			t.Errorf("%d deliveries to a listener seen 24 hours ago; want 2", n)
		}
		h.clock.Advance(time.Second)
		h.mustCreate(swordBody)
		if n := len(h.deliveriesTo(l.ID)); n != 2 {
			t.Errorf("%d deliveries to a listener seen 24 hours and a second ago; want still 2", n)
		}
		// Listening again brings it back at once, its waiting deliveries kept.
		h.listen("laptop")
		h.mustCreate(swordBody)
		ds := h.deliveriesTo(l.ID)
		if len(ds) != 3 {
			t.Errorf("%d deliveries after listening again; want 3", len(ds))
		}
		// The dispatcher never claims them, however late it looks.
		claims, err := db.DeliveryClaim(ctx, store.ClaimParams{Owner: "node", Now: h.clock.Now().AddDate(100, 0, 0),
			LeaseUntil: h.clock.Now().AddDate(100, 0, 1), Limit: 100, PerEndpoint: 100})
		if err != nil || len(claims) != 0 {
			t.Errorf("the dispatcher claimed %d deliveries to listeners (%v); want none", len(claims), err)
		}
		for _, d := range ds {
			if d.Status != checkout.DeliveryPending || d.Attempts != 0 {
				t.Errorf("delivery %s: %s after %d attempts; want pending, unattempted", d.ID, d.Status, d.Attempts)
			}
		}
		// Nor are they in the dispatcher's queue that metrics show.
		if q, err := db.DeliveryCountPending(ctx, h.clock.Now()); err != nil || q.Due+q.Waiting != 0 {
			t.Errorf("the dispatcher's queue = %+v, %v; want the listener's deliveries out of it", q, err)
		}
	})
}

// sseEvent is one event read from a stream.
type sseEvent struct{ name, data string }

// stream is an open listener stream.
type stream struct {
	cancel context.CancelFunc
	resp   *http.Response
	r      *bufio.Reader
}

func (h *harness) openStream(id, secret string) *stream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+h.listenersPath()+"/"+id+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		h.t.Fatal(err)
	}
	s := &stream{cancel: cancel, resp: resp, r: bufio.NewReader(resp.Body)}
	h.t.Cleanup(s.close)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Request-Id") == "" {
		h.t.Fatalf("stream = %d %q", resp.StatusCode, resp.Header)
	}
	return s
}

func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next reads the next event, skipping comments (pings).
func (s *stream) next(t *testing.T) sseEvent {
	t.Helper()
	var e sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			e.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			e.data = strings.TrimPrefix(line, "data: ")
		case line == "" && e.name != "":
			return e
		}
	}
}

// TestListenerStream: a stream sends the listener's deliveries one at a
// time, oldest first, each signed as a webhook; a result finishes each; a
// newer stream replaces an older.
func TestListenerStream(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		l := h.listen("laptop")
		h.mustCreate(swordBody)
		h.mustCreate(swordBody)
		s := h.openStream(l.ID, h.secret)
		if e := s.next(t); e.name != "ready" || !strings.Contains(e.data, l.ID) {
			t.Fatalf("first event = %+v; want ready", e)
		}
		result := func(deliveryID, body string) *response {
			return h.do(request{method: "POST", path: h.listenersPath() + "/" + l.ID + "/deliveries/" + deliveryID, secret: h.secret, body: body})
		}
		var firsts []string
		for range 2 {
			e := s.next(t)
			var m api.StreamMessage
			if e.name != "delivery" || json.Unmarshal([]byte(e.data), &m) != nil {
				t.Fatalf("event = %+v; want a delivery", e)
			}
			if !webhooktest.Verify(m.Signature, []byte(m.Body), l.Secret, h.clock.Now()) || m.Attempt != 1 || m.EventType != checkout.EventCheckoutCreated {
				t.Errorf("message %+v does not verify with the listener's secret", m)
			}
			var ev checkout.Event
			if err := json.Unmarshal([]byte(m.Body), &ev); err != nil || ev.ID != m.EventID {
				t.Errorf("body %s is not event %s", m.Body, m.EventID)
			}
			firsts = append(firsts, m.EventID)
			ok := `{"status_code":200,"duration_ms":12,"response_body":"thanks"}`
			r := result(m.DeliveryID, ok)
			var env struct{ Data checkout.ListenerDeliveryView }
			r.decode(t, &env)
			if r.Status != 200 || env.Data.Status != checkout.DeliverySucceeded || env.Data.Attempts != 1 {
				t.Errorf("result = %d %s", r.Status, r.Body)
			}
			// The same result again changes nothing.
			r = result(m.DeliveryID, ok)
			r.decode(t, &env)
			if r.Status != 200 || env.Data.Attempts != 1 {
				t.Errorf("the result again = %d %s; want the delivery as it was", r.Status, r.Body)
			}
		}
		events, _ := db.EventList(context.Background(), checkout.EventListParams{MerchantID: h.store.ID, Mode: checkout.ModeTest, Limit: 10})
		if len(events) != 2 || firsts[0] != events[1].ID || firsts[1] != events[0].ID {
			t.Errorf("the stream sent %v; want the events oldest first", firsts)
		}

		// A local failure fails the delivery; its attempt keeps the answer.
		h.mustCreate(swordBody)
		e := s.next(t)
		var m api.StreamMessage
		json.Unmarshal([]byte(e.data), &m)
		r := result(m.DeliveryID, `{"status_code":500,"duration_ms":3,"response_body":"boom"}`)
		var env struct{ Data checkout.ListenerDeliveryView }
		r.decode(t, &env)
		if env.Data.Status != checkout.DeliveryFailed || env.Data.StatusCode != 500 {
			t.Errorf("a 500's result = %s", r.Body)
		}
		attempts, _ := db.AttemptList(context.Background(), m.DeliveryID)
		if len(attempts) != 1 || attempts[0].ResponseBody != "boom" || !strings.Contains(attempts[0].Error, "500") {
			t.Errorf("attempts = %+v", attempts)
		}

		// Results, on both sides of each bound.
		for _, tt := range []struct {
			body  string
			param string
		}{
			{`{"duration_ms":1}`, "status_code"},
			{`{"status_code":200}`, "duration_ms"},
			{`{"status_code":1000,"duration_ms":1}`, "status_code"},
			{`{"status_code":99,"duration_ms":1}`, "status_code"},
			{`{"status_code":-1,"duration_ms":1}`, "status_code"},
			{`{"status_code":0,"duration_ms":1}`, "error"},
			{`{"status_code":200,"duration_ms":3600001}`, "duration_ms"},
			{`{"status_code":200,"duration_ms":1,"error":"` + strings.Repeat("e", 1001) + `"}`, "error"},
			{`{"status_code":200,"duration_ms":1,"response_body":"` + strings.Repeat("b", 16385) + `"}`, "response_body"},
			{`{"status_code":200,"duration_ms":1,"extra":1}`, "extra"},
		} {
			e := wantError(t, result(m.DeliveryID, tt.body), 400, checkout.EValidationFailed)
			if e.Error.Param != tt.param {
				t.Errorf("result %.60s: param %q; want %q", tt.body, e.Error.Param, tt.param)
			}
		}
		for _, ok := range []string{
			`{"status_code":0,"duration_ms":3600000,"error":"connection refused"}`,
			`{"status_code":999,"duration_ms":0,"error":"` + strings.Repeat("e", 1000) + `","response_body":"` + strings.Repeat("b", 16384) + `"}`,
			`{"status_code":100,"duration_ms":0}`,
		} {
			if r := result(m.DeliveryID, ok); r.Status != 200 {
				t.Errorf("result %.60s = %d %s", ok, r.Status, r.Body)
			}
		}
		// Another listener's delivery, an unknown one, another store's
		// listener: not found.
		other := h.listen("desktop")
		wantError(t, h.do(request{method: "POST", path: h.listenersPath() + "/" + other.ID + "/deliveries/" + m.DeliveryID, secret: h.secret,
			body: `{"status_code":200,"duration_ms":1}`}), 404, checkout.ENotFound)
		wantError(t, result("whd_unknown", `{"status_code":200,"duration_ms":1}`), 404, checkout.ENotFound)
		h2store := h.newStore("Other", "USD")
		_, otherSecret := h.newKey(h2store.ID, checkout.ModeTest, checkout.PermCheckoutsWrite)
		wantError(t, h.do(request{method: "GET", path: "/v1/stores/" + h2store.ID + "/listeners/" + l.ID + "/stream", secret: otherSecret}), 404, checkout.ENotFound)
		wantError(t, h.do(request{method: "GET", path: h.listenersPath() + "/" + l.ID + "/stream", secret: "ck_test_sk_" + checkout.NewSecret()}), 401, checkout.EInvalidAPIKey)

		// A newer stream replaces this one, and takes its deliveries.
		s2 := h.openStream(l.ID, h.secret)
		if e := s2.next(t); e.name != "ready" {
			t.Fatalf("second stream's first event = %+v", e)
		}
		if e := s.next(t); e.name != "replaced" {
			t.Errorf("the older stream's next event = %+v; want replaced", e)
		}
		h.mustCreate(swordBody)
		if e := s2.next(t); e.name != "delivery" {
			t.Errorf("the newer stream's next event = %+v; want a delivery", e)
		}
	})
}

// A stream outlives the server's read and write timeouts (serve sets
// both), which would otherwise end it, and a shutdown ends it
// (App.CloseStreams) rather than waiting for it.
func TestListenerStreamOutlivesServerTimeouts(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	a := app.New(app.Config{Store: db, Logger: logtest.Logger(t), StreamPing: 10 * time.Millisecond})
	t.Cleanup(a.Close)
	srv := httptest.NewUnstartedServer(a.Handler)
	srv.Config.ReadTimeout = 50 * time.Millisecond
	srv.Config.WriteTimeout = 50 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	ctx := context.Background()
	m, err := a.Service.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme", Currency: "USD"})
	if err != nil {
		t.Fatal(err)
	}
	key, secret, err := a.Service.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := a.Service.Listen(ctx, key, checkout.ListenerParams{Name: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/v1/stores/"+m.ID+"/listeners/"+l.ID+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	// Twenty pings: four times each timeout has passed.
	for pings := 0; pings < 20; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended after %d pings: %v", pings, err)
		}
		if line == ": ping\n" {
			pings++
		}
	}
	create, _ := http.NewRequest("POST", srv.URL+"/v1/stores/"+m.ID+"/checkouts", strings.NewReader(swordBody))
	create.Header.Set("Authorization", "Bearer "+secret)
	create.Header.Set("Content-Type", "application/json")
	cr, err := http.DefaultClient.Do(create)
	if err != nil || cr.StatusCode != 201 {
		t.Fatalf("create = %v, %v", cr, err)
	}
	cr.Body.Close()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before the delivery: %v", err)
		}
		if line == "event: delivery\n" {
			break
		}
	}
	a.CloseStreams()
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Errorf("the stream after CloseStreams: %v; want it ended cleanly", err)
	}
}
