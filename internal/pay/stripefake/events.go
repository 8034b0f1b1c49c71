package stripefake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Event is a webhook event the fake made, as Stripe would post it.
type Event struct {
	ID, Type string
	// Object is the id of the object the event is about (pi_, ch_, re_,
	// dp_).
	Object  string
	Created time.Time
	// Body is the event's JSON, as posted.
	Body []byte
}

// emit records an event about obj, made under the lock.
func (f *Fake) emit(typ string, obj map[string]any) {
	now := f.opts.Now()
	ev := Event{ID: newID("evt"), Type: typ, Object: obj["id"].(string), Created: now}
	ev.Body, _ = json.Marshal(map[string]any{
		"id": ev.ID, "object": "event", "api_version": f.apiVersion, "created": now.Unix(),
		"data": map[string]any{"object": obj}, "livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil}, "type": typ,
	})
	f.events = append(f.events, ev)
	f.pending = append(f.pending, ev)
	if f.fwd != nil {
		f.fwd.add(ev)
	}
}

// Events returns the events made so far, in order.
func (f *Fake) Events() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.events...)
}

// EventsOf returns the events of one type about one object ("" for any),
// in order.
func (f *Fake) EventsOf(typ, object string) []Event {
	var out []Event
	for _, ev := range f.Events() {
		if (typ == "" || ev.Type == typ) && (object == "" || ev.Object == object) {
			out = append(out, ev)
		}
	}
	return out
}

// Signature is the Stripe-Signature header of body signed with secret at
// t, as Stripe signs: the HMAC-SHA256 of "t.body" under the endpoint's
// signing secret, in hex.
func Signature(body []byte, secret string, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Header returns the headers Stripe posts ev with, signed with secret at
// t: pass an old t for a late delivery.
func Header(ev Event, secret string, t time.Time) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	h.Set("Stripe-Signature", Signature(ev.Body, secret, t))
	return h
}

// Header is the headers of ev signed with secret at the fake's now.
func (f *Fake) Header(ev Event, secret string) http.Header {
	return Header(ev, secret, f.opts.Now())
}

// Send posts ev to url as Stripe delivers it, signed with secret at the
// fake's now, and returns the status answered. Send it twice for a
// duplicate, events in another order for an out-of-order delivery.
func (f *Fake) Send(ctx context.Context, client *http.Client, url string, ev Event, secret string) (int, error) {
	return SendAt(ctx, client, url, ev, secret, f.opts.Now())
}

// SendAt posts ev signed at t: a late delivery is one signed long ago.
func SendAt(ctx context.Context, client *http.Client, url string, ev Event, secret string, t time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, err
	}
	req.Header = Header(ev, secret, t)
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}
