package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/web"
)

// The doors of `checkoutd listen` (docs/webhooks.md, Local development):
// register or resume a listener, hold its stream of deliveries
// (server-sent events), and report each delivery's local answer.

// HandleListen serves POST /v1/stores/{storeId}/listeners.
func HandleListen(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := listenerKey(r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		p, err := checkout.ParseListenRequest(body)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		ep, err := svc.Listen(r.Context(), key, p)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store") // it carries the signing secret
		web.WriteData(w, http.StatusOK, checkout.ViewListener(ep))
	})
}

// HandleListenerResult serves POST
// /v1/stores/{storeId}/listeners/{listenerId}/deliveries/{deliveryId}.
func HandleListenerResult(svc *service.Service) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := listenerKey(r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		res, err := checkout.ParseListenerResult(body)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		d, err := svc.ListenerResult(r.Context(), key, r.PathValue("listenerId"), r.PathValue("deliveryId"), res)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		web.WriteData(w, http.StatusOK, checkout.ViewListenerDelivery(d))
	})
}

// StreamConfig tunes listeners' streams.
type StreamConfig struct {
	// Done ends every stream when closed: the server is shutting down, and
	// streams, which never end by themselves, must not hold it up. Clients
	// reconnect.
	Done <-chan struct{}
	// Poll is how often a stream looks for deliveries made by other
	// processes (default 1 s); those of its own process wake it at once.
	Poll time.Duration
	// Ping is how often an idle stream sends a comment, so that proxies
	// keep it and the client knows it lives (default 15 s).
	Ping time.Duration
}

// StreamMessage is the data of a stream's "delivery" event: one delivery
// for `checkoutd listen` to forward as it is, headers and all.
type StreamMessage struct {
	DeliveryID string `json:"delivery_id"`
	Attempt    int    `json:"attempt"`
	EventID    string `json:"event_id"`
	EventType  string `json:"event_type"`
	// Signature is the Service-Webhook-Signature header to send, made with
	// the listener's secrets as the dispatcher makes an endpoint's.
	Signature string `json:"signature"`
	// Body is the request body to send, byte for byte.
	Body string `json:"body"`
}

// HandleListenerStream serves GET
// /v1/stores/{storeId}/listeners/{listenerId}/stream: server-sent events.
// First "ready" ({"listener_id": ...}); then each pending delivery of the
// listener, oldest first, one at a time, as a "delivery" event
// (StreamMessage): the next is sent once the listener's result for the one
// before is recorded. A delivery not answered when the stream ends is sent
// again on the next stream. "replaced" ends a stream whose listener a newer
// stream took over, or was deleted.
func HandleListenerStream(svc *service.Service, cfg StreamConfig) http.Handler {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Ping <= 0 {
		cfg.Ping = 15 * time.Second
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := listenerKey(r)
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		ctx := r.Context()
		st, err := svc.ConnectListener(ctx, key, r.PathValue("listenerId"))
		if err != nil {
			web.WriteError(w, r, err)
			return
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := st.Close(cctx); err != nil {
				web.Logger(ctx).Error("close listener stream", "listener", st.ID, "err", err)
			}
		}()
		s := &sse{w: w, rc: http.NewResponseController(w)}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no") // proxies that buffer would hold events back
		w.WriteHeader(http.StatusOK)
		if !s.send("ready", map[string]string{"listener_id": st.ID}) {
			return
		}
		poll := time.NewTicker(cfg.Poll)
		defer poll.Stop()
		ping := time.NewTicker(cfg.Ping)
		defer ping.Stop()
		sent := ""
		for {
			changed := svc.DeliveriesChanged() // before reading, so no change is missed
			l, err := st.Next(ctx)
			switch {
			case errors.Is(err, service.ErrListenerReplaced):
				s.send("replaced", map[string]string{"message": "Another checkoutd listen took over this listener, or it was deleted."})
				return
			case err != nil:
				if ctx.Err() == nil {
					web.Logger(ctx).Error("listener stream", "listener", st.ID, "err", err)
					s.send("error", map[string]string{"message": "The stream failed; reconnect."})
				}
				return
			case l != nil && l.Delivery.ID != sent:
				m, err := message(ctx, st, l)
				if err != nil {
					web.Logger(ctx).Error("listener stream", "listener", st.ID, "err", err)
					return
				}
				if !s.send("delivery", m) {
					return
				}
				sent = l.Delivery.ID
			}
			select {
			case <-ctx.Done():
				return
			case <-cfg.Done:
				return
			case <-changed:
			case <-poll.C:
			case <-ping.C:
				if !s.comment("ping") {
					return
				}
			}
		}
	})
}

// message makes the stream's message of l, signed now.
func message(ctx context.Context, st *service.ListenerStream, l *checkout.Listened) (*StreamMessage, error) {
	body, err := json.Marshal(l.Event)
	if err != nil {
		return nil, err
	}
	sig, _, err := st.Sign(ctx, body)
	if err != nil {
		return nil, err
	}
	return &StreamMessage{
		DeliveryID: l.Delivery.ID, Attempt: l.Delivery.Attempts + 1, EventID: l.Event.ID, EventType: l.Event.Type,
		Signature: sig, Body: string(body),
	}, nil
}

// listenerKey checks a listener request's path and key: the key's store, a
// key with checkouts:read (the events carry sessions and payments).
func listenerKey(r *http.Request) (*checkout.APIKey, error) {
	key := KeyFrom(r.Context())
	storeID, err := pathParams(r, false)
	if err != nil {
		return nil, err
	}
	if err := requireStore(key, storeID); err != nil {
		return nil, err
	}
	if err := requirePermission(key, checkout.PermCheckoutsRead); err != nil {
		return nil, err
	}
	return key, nil
}

// sse writes server-sent events, each flushed at once and each with a
// write deadline of its own (the server's WriteTimeout would end a stream
// that outlives it).
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s *sse) send(event string, data any) bool {
	b, err := json.Marshal(data)
	if err != nil {
		return false
	}
	return s.write("event: " + event + "\ndata: " + string(b) + "\n\n")
}

func (s *sse) comment(text string) bool { return s.write(": " + text + "\n\n") }

func (s *sse) write(p string) bool {
	s.rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := s.w.Write([]byte(p)); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}
