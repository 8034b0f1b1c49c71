package stripefake

import (
	"context"
	"net/http"
)

// Delivery is one event Forward posted, and what the endpoint answered.
type Delivery struct {
	Event  Event
	Status int   // 0 when no answer came
	Err    error // why no answer came
}

// forwarder posts events to a webhook endpoint, in order, one at a time.
type forwarder struct {
	client      *http.Client
	url, secret string
	queue       []Event // made and not yet delivered, oldest first
	deliveries  []Delivery
	wake        chan struct{}
	// changed is closed, and replaced, when a delivery ends.
	changed chan struct{}
}

// Forward makes the fake deliver every event made from now on to url,
// signed with secret at the fake's now, as Stripe delivers them: after
// the request that made them, from elsewhere (a goroutine of the fake's),
// one at a time and in order. A failed delivery is not sent again; a test
// sends it again with Send. WaitDelivered waits until the queue is empty.
func (f *Fake) Forward(client *http.Client, url, secret string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fw := &forwarder{client: client, url: url, secret: secret, wake: make(chan struct{}, 1), changed: make(chan struct{})}
	f.fwd = fw
	go f.forward(fw)
}

// forward delivers fw's queue until the fake ends.
func (f *Fake) forward(fw *forwarder) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-f.done; cancel() }()
	for {
		select {
		case <-fw.wake:
		case <-f.done:
			return
		}
		for {
			f.mu.Lock()
			if len(fw.queue) == 0 {
				f.mu.Unlock()
				break
			}
			ev := fw.queue[0]
			f.mu.Unlock()
			status, err := SendAt(ctx, fw.client, fw.url, ev, fw.secret, f.opts.Now())
			f.mu.Lock()
			fw.queue = fw.queue[1:]
			fw.deliveries = append(fw.deliveries, Delivery{Event: ev, Status: status, Err: err})
			close(fw.changed)
			fw.changed = make(chan struct{})
			f.mu.Unlock()
		}
	}
}

// add queues an event to the forwarder's queue, under the lock.
func (fw *forwarder) add(ev Event) {
	fw.queue = append(fw.queue, ev)
	select {
	case fw.wake <- struct{}{}:
	default:
	}
}

// WaitDelivered waits until every event made so far was delivered (or
// ctx ends); at once when Forward was not called.
func (f *Fake) WaitDelivered(ctx context.Context) error {
	for {
		f.mu.Lock()
		fw := f.fwd
		if fw == nil || len(fw.queue) == 0 {
			f.mu.Unlock()
			return nil
		}
		changed := fw.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Deliveries returns what Forward delivered so far, in order.
func (f *Fake) Deliveries() []Delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fwd == nil {
		return nil
	}
	return append([]Delivery(nil), f.fwd.deliveries...)
}
