// Package listen is the client side of checkoutd listen (docs/webhooks.md,
// Local development): it registers a listener of a store, holds the
// listener's stream of server-sent events open, posts each delivery to a
// local URL signed as a webhook, and reports the local answer, which
// finishes the delivery. Deliveries made while it is away wait for it (24
// hours), so none is lost; one is forwarded again only when its answer was
// never reported.
package listen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// silence is how long a stream may stay silent before the client takes
// it for dead and reconnects: the server pings every 15 seconds.
const silence = 45 * time.Second

// maxBackoff bounds the wait between reconnections.
const maxBackoff = 30 * time.Second

// Config says what to listen to and where to forward it.
type Config struct {
	// BaseURL is the service's API (http or https), Store the store, and
	// Secret a test-mode bearer key's secret with checkouts:read.
	BaseURL, Store, Secret string
	// Name names the listener within the store; listening again under it
	// resumes the listener, its secret and the deliveries that waited.
	Name string
	// Events are the event types to receive, or [checkout.AllEvents].
	Events []string
	// ForwardTo is the local URL each delivery is posted to.
	ForwardTo string
	// Log receives what a person running listen should read: connections,
	// disconnections, refused results. Discarded when nil.
	Log io.Writer
	// Forwarded is called before each forward (with a nil attempt) and
	// after it, with the local answer. It may be nil.
	Forwarded func(m *api.StreamMessage, a *checkout.Attempt)
	// Client talks to the service (no timeout: streams last); Local posts
	// to ForwardTo (10 s, redirects not followed). Those when nil.
	Client, Local *http.Client
}

// Listener is one run of checkoutd listen.
type Listener struct {
	cfg Config
	api string // .../v1/stores/{id}/listeners
	id  string
}

// New returns a listener of cfg; Register, then Run.
func New(cfg Config) *Listener {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Forwarded == nil {
		cfg.Forwarded = func(*api.StreamMessage, *checkout.Attempt) {}
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Local == nil {
		cfg.Local = &http.Client{
			Timeout:       10 * time.Second, // a webhook receiver's budget
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &Listener{cfg: cfg, api: strings.TrimSuffix(cfg.BaseURL, "/") + "/v1/stores/" + url.PathEscape(cfg.Store) + "/listeners"}
}

// fatalError ends Run: reconnecting would not help.
type fatalError struct{ error }

// Register creates or resumes the listener and returns it, with its
// signing secret.
func (l *Listener) Register(ctx context.Context) (*checkout.ListenerView, error) {
	body, _ := json.Marshal(map[string]any{"name": l.cfg.Name, "events": l.cfg.Events})
	var v checkout.ListenerView
	if err := l.call(ctx, l.api, body, &v); err != nil {
		return nil, fmt.Errorf("register the listener: %w", err)
	}
	l.id = v.ID
	return &v, nil
}

// call posts body to u and decodes the envelope's data into data.
func (l *Listener) call(ctx context.Context, u string, body []byte, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.cfg.Secret)
	req.Header.Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := l.cfg.Client.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return DecodeEnvelope(resp, data)
}

// APIError is an error answer of the API.
type APIError struct {
	Status        int
	Code, Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("%s (%s, %d)", e.Message, e.Code, e.Status) }

// retryable reports whether the same request may succeed later.
func (e *APIError) retryable() bool { return e.Status == http.StatusTooManyRequests || e.Status >= 500 }

// decodeEnvelope reads an answer of the API into data, or its error.
func DecodeEnvelope(resp *http.Response, data any) error {
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&env); err != nil {
		return &APIError{Status: resp.StatusCode, Code: "no_envelope", Message: "the answer is not the API's envelope: is --base-url the API?"}
	}
	if !env.OK || env.Error != nil {
		if env.Error == nil {
			return &APIError{Status: resp.StatusCode, Code: "unknown", Message: "the API answered " + resp.Status}
		}
		return &APIError{Status: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message}
	}
	if data == nil {
		return nil
	}
	return json.Unmarshal(env.Data, data)
}

// Run holds the listener's stream open and forwards its deliveries until
// ctx ends (then it returns nil), reconnecting with backoff after a
// failure. It returns an error when reconnecting would not help: another
// run took the listener over, or the service refuses the key.
func (l *Listener) Run(ctx context.Context) error {
	if l.id == "" {
		return errors.New("listen: Run before Register")
	}
	backoff := time.Second
	for {
		connected, err := l.stream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var fatal fatalError
		if errors.As(err, &fatal) {
			return fatal.error
		}
		if connected {
			backoff = time.Second
		}
		fmt.Fprintf(l.cfg.Log, "Disconnected (%v); reconnecting in %s.\n", err, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// stream reads one stream until it ends, forwarding each delivery. It
// reports whether the stream was established.
func (l *Listener) stream(ctx context.Context) (connected bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.api+"/"+url.PathEscape(l.id)+"/stream", nil)
	if err != nil {
		return false, fatalError{err}
	}
	req.Header.Set("Authorization", "Bearer "+l.cfg.Secret)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := l.cfg.Client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := DecodeEnvelope(resp, nil)
		var ae *APIError
		if errors.As(err, &ae) && !ae.retryable() {
			return false, fatalError{fmt.Errorf("the stream was refused: %w", err)}
		}
		return false, fmt.Errorf("the stream was refused: %w", err)
	}
	// A stream silent past the watchdog is dead (the server pings).
	watchdog := time.AfterFunc(silence, cancel)
	defer watchdog.Stop()
	r := bufio.NewReader(resp.Body)
	var event string
	var data strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if ctx.Err() != nil && !connected {
				return connected, ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the service closed the stream")
			}
			return connected, err
		}
		watchdog.Reset(silence)
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, ":"): // a comment: the server's ping
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "":
			ev, payload := event, data.String()
			event = ""
			data.Reset()
			switch ev {
			case "ready":
				if connected {
					continue
				}
				connected = true
				fmt.Fprintln(l.cfg.Log, "Connected; waiting for events.")
			case "delivery":
				var m api.StreamMessage
				if err := json.Unmarshal([]byte(payload), &m); err != nil {
					return connected, fmt.Errorf("a delivery the stream sent is not JSON: %w", err)
				}
				watchdog.Stop() // forwarding and reporting have their own timeouts
				if err := l.forward(ctx, &m); err != nil {
					return connected, err
				}
				watchdog.Reset(silence)
			case "replaced":
				return connected, fatalError{errors.New("another checkoutd listen took over this listener (same store and --name), or it was deleted; this one stops")}
			case "error":
				return connected, errors.New("the service's stream failed")
			}
		}
	}
}

// forward posts one delivery to the local URL, prints it, and reports the
// local answer. The report is retried until it lands (or the stream
// ends): a delivery whose answer is not reported is sent again.
func (l *Listener) forward(ctx context.Context, m *api.StreamMessage) error {
	l.cfg.Forwarded(m, nil)
	a := webhook.Post(l.cfg.Local, l.cfg.ForwardTo, &webhook.Message{
		DeliveryID: m.DeliveryID, Attempt: m.Attempt, EventID: m.EventID, EventType: m.EventType,
		Signature: m.Signature, Body: []byte(m.Body),
	}, time.Now())
	l.cfg.Forwarded(m, a)
	body, _ := json.Marshal(map[string]any{
		"status_code": a.StatusCode, "duration_ms": a.Duration.Milliseconds(), "error": a.Error, "response_body": a.ResponseBody,
	})
	// A stop (Ctrl-C) after the local answer still reports it, briefly, so
	// that the event is not forwarded again on the next run.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	defer context.AfterFunc(ctx, func() { time.AfterFunc(5*time.Second, cancel) })()
	u := l.api + "/" + url.PathEscape(l.id) + "/deliveries/" + url.PathEscape(m.DeliveryID)
	wait := 250 * time.Millisecond
	for {
		err := l.call(rctx, u, body, nil)
		var ae *APIError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ae) && !ae.retryable():
			fmt.Fprintf(l.cfg.Log, "The service refused the result of delivery %s: %v\n", m.DeliveryID, err)
			return nil
		case rctx.Err() != nil:
			return fmt.Errorf("report the result of delivery %s: %w", m.DeliveryID, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-rctx.Done():
			t.Stop()
			return fmt.Errorf("report the result of delivery %s: %w", m.DeliveryID, err)
		case <-t.C:
		}
		wait = min(wait*2, 5*time.Second)
	}
}
