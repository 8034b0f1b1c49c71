package main

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
	"os"
	"strings"
	"sync"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// listen receives a store's test-mode events on a developer's machine
// (docs/webhooks.md, Local development): it registers a listener under a
// name (the host name unless --name), holds the listener's stream open,
// forwards each delivery to --forward-to signed as a webhook, and reports
// the local answer, which finishes the delivery. Deliveries made while it is
// away wait for it (24 hours), so none is lost; each is forwarded again only
// when its answer was never reported.

// listenWatchdog is how long a stream may stay silent before the client
// takes it for dead and reconnects: the server pings every 15 seconds.
const listenWatchdog = 45 * time.Second

// maxListenBackoff bounds the wait between reconnections.
const maxListenBackoff = 30 * time.Second

// listenLine is what listen prints of each forward with --format json.
type listenLine struct {
	EventID    string          `json:"event_id"`
	EventType  string          `json:"event_type"`
	DeliveryID string          `json:"delivery_id"`
	StatusCode int             `json:"status_code"`
	Error      string          `json:"error,omitempty"`
	DurationMS int64           `json:"duration_ms"`
	Event      json.RawMessage `json:"event"`
}

func listenCmd(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "listen", "listen --forward-to URL --store ID [--base-url URL] [--events TYPES] [--name NAME] [--format text|json] [--print-secret]  (the test key's secret in CHECKOUTD_SECRET)")
	var l listener
	var baseURL, events, format string
	var printSecret bool
	fs.StringVar(&l.forwardTo, "forward-to", "", "the local URL each event is posted to, such as http://localhost:3000/webhooks (required)")
	fs.StringVar(&l.store, "store", "", "the store whose test-mode events to receive (required)")
	fs.StringVar(&baseURL, "base-url", "http://127.0.0.1:8080", "address of the running service's API")
	fs.StringVar(&l.secret, "secret", "", "a test-mode key's secret with checkouts:read; better given as CHECKOUTD_SECRET, which other users cannot see")
	fs.StringVar(&events, "events", "all", "the event types to receive, comma-separated, or all")
	fs.StringVar(&l.name, "name", "", "the listener's name (default: this machine's host name); listening again under a name resumes it, with its secret and the events that waited")
	fs.StringVar(&format, "format", "text", "text, or json for one JSON object per event")
	fs.BoolVar(&printSecret, "print-secret", false, "print the listener's signing secret and exit")
	if _, err := parseFlags(fs, e, args); err != nil {
		return err
	}
	switch {
	case l.store == "":
		return usageError{"listen needs --store (the store id)"}
	case l.secret == "":
		return usageError{"listen needs a test-mode key's secret in CHECKOUTD_SECRET (or --secret)"}
	case !strings.HasPrefix(l.secret, "ck_test_sk_"):
		return usageError{"listen works in test mode only, with a test-mode bearer key (ck_test_sk_...): live events go to HTTPS endpoints, never to a listener"}
	case format != "text" && format != "json":
		return usageError{fmt.Sprintf("--format must be text or json, not %q", format)}
	case l.forwardTo == "" && !printSecret:
		return usageError{"listen needs --forward-to: the local URL to post events to, such as http://localhost:3000/webhooks"}
	}
	if !printSecret {
		if u, err := url.Parse(l.forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError{fmt.Sprintf("--forward-to %q is not an http(s) URL", l.forwardTo)}
		}
	}
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return usageError{fmt.Sprintf("--base-url %q is not an http(s) URL", baseURL)}
	}
	l.api = base.String() + "/v1/stores/" + url.PathEscape(l.store) + "/listeners"
	if l.name == "" {
		if l.name, _ = os.Hostname(); l.name == "" {
			l.name = "checkoutd-listen"
		}
	}
	l.events = checkout.ParseEvents(events)
	l.json = format == "json"
	l.e = e
	l.client = &http.Client{} // streams last; each request has a context
	l.local = &http.Client{
		Timeout:       10 * time.Second, // a webhook receiver's budget
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	v, err := l.register(ctx)
	if err != nil {
		return err
	}
	if printSecret {
		fmt.Fprintln(e.stdout, v.Secret)
		return nil
	}
	fmt.Fprintf(e.stderr, "Ready: forwarding the test-mode events of store %s (%s) to %s.\n", l.store, strings.Join(v.Events, ", "), l.forwardTo)
	fmt.Fprintf(e.stderr, "Your receiver verifies them with the signing secret %s (listener %s, named %q). Ctrl-C stops.\n", v.Secret, v.ID, v.Name)
	l.id = v.ID
	return l.run(ctx)
}

// listener is one run of checkoutd listen.
type listener struct {
	store, secret, name, forwardTo string
	events                         []string
	json                           bool
	api                            string // .../v1/stores/{id}/listeners
	id                             string
	client, local                  *http.Client
	e                              env
	out                            sync.Mutex
}

// fatalError ends listen: reconnecting would not help.
type fatalError struct{ error }

// register creates or resumes the listener.
func (l *listener) register(ctx context.Context) (*checkout.ListenerView, error) {
	body, _ := json.Marshal(map[string]any{"name": l.name, "events": l.events})
	var v checkout.ListenerView
	if err := l.call(ctx, l.api, body, &v); err != nil {
		return nil, fmt.Errorf("register the listener: %w", err)
	}
	return &v, nil
}

// call posts body to u and decodes the envelope's data into data.
func (l *listener) call(ctx context.Context, u string, body []byte, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.secret)
	req.Header.Set("Content-Type", "application/json")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := l.client.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeEnvelope(resp, data)
}

// apiError is an error answer of the API.
type apiError struct {
	status        int
	code, message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%s, %d)", e.message, e.code, e.status) }

// retryable reports whether the same request may succeed later.
func (e *apiError) retryable() bool { return e.status == http.StatusTooManyRequests || e.status >= 500 }

// decodeEnvelope reads an answer of the API into data, or its error.
func decodeEnvelope(resp *http.Response, data any) error {
	var env struct {
		OK    bool            `json:"ok"`
		Data  json.RawMessage `json:"data"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&env); err != nil {
		return &apiError{status: resp.StatusCode, code: "no_envelope", message: "the answer is not the API's envelope: is --base-url the API?"}
	}
	if !env.OK || env.Error != nil {
		if env.Error == nil {
			return &apiError{status: resp.StatusCode, code: "unknown", message: "the API answered " + resp.Status}
		}
		return &apiError{status: resp.StatusCode, code: env.Error.Code, message: env.Error.Message}
	}
	if data == nil {
		return nil
	}
	return json.Unmarshal(env.Data, data)
}

// run holds the stream open until ctx ends, reconnecting with backoff
// after a failure.
func (l *listener) run(ctx context.Context) error {
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
		fmt.Fprintf(l.e.stderr, "Disconnected (%v); reconnecting in %s.\n", err, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, maxListenBackoff)
	}
}

// stream reads one stream until it ends, forwarding each delivery. It
// reports whether the stream was established.
func (l *listener) stream(ctx context.Context) (connected bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.api+"/"+url.PathEscape(l.id)+"/stream", nil)
	if err != nil {
		return false, fatalError{err}
	}
	req.Header.Set("Authorization", "Bearer "+l.secret)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := l.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := decodeEnvelope(resp, nil)
		var ae *apiError
		if errors.As(err, &ae) && !ae.retryable() {
			return false, fatalError{fmt.Errorf("the stream was refused: %w", err)}
		}
		return false, fmt.Errorf("the stream was refused: %w", err)
	}
	// A stream silent past the watchdog is dead (the server pings).
	watchdog := time.AfterFunc(listenWatchdog, cancel)
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
		watchdog.Reset(listenWatchdog)
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
				fmt.Fprintln(l.e.stderr, "Connected; waiting for events.")
			case "delivery":
				var m api.StreamMessage
				if err := json.Unmarshal([]byte(payload), &m); err != nil {
					return connected, fmt.Errorf("a delivery the stream sent is not JSON: %w", err)
				}
				watchdog.Stop() // forwarding and reporting have their own timeouts
				if err := l.forward(ctx, &m); err != nil {
					return connected, err
				}
				watchdog.Reset(listenWatchdog)
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
func (l *listener) forward(ctx context.Context, m *api.StreamMessage) error {
	l.print(m, nil)
	a := webhook.Post(l.local, l.forwardTo, &webhook.Message{
		DeliveryID: m.DeliveryID, Attempt: m.Attempt, EventID: m.EventID, EventType: m.EventType,
		Signature: m.Signature, Body: []byte(m.Body),
	}, time.Now())
	l.print(m, a)
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
		var ae *apiError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ae) && !ae.retryable():
			fmt.Fprintf(l.e.stderr, "The service refused the result of delivery %s: %v\n", m.DeliveryID, err)
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

// print shows a delivery on its way (a nil) and then its local answer.
func (l *listener) print(m *api.StreamMessage, a *checkout.Attempt) {
	l.out.Lock()
	defer l.out.Unlock()
	if l.json {
		if a == nil {
			return
		}
		line := listenLine{EventID: m.EventID, EventType: m.EventType, DeliveryID: m.DeliveryID, StatusCode: a.StatusCode,
			Error: a.Error, DurationMS: a.Duration.Milliseconds(), Event: json.RawMessage(m.Body)}
		json.NewEncoder(l.e.stdout).Encode(line)
		return
	}
	at := time.Now().Format("2006-01-02 15:04:05")
	if a == nil {
		fmt.Fprintf(l.e.stdout, "%s  --> %s [%s]\n", at, m.EventType, m.EventID)
		return
	}
	status := fmt.Sprint(a.StatusCode)
	if a.StatusCode == 0 {
		status = "ERR"
	}
	line := fmt.Sprintf("%s  <-- [%s] POST %s [%s] %d ms", at, status, l.forwardTo, m.EventID, a.Duration.Milliseconds())
	if a.Error != "" {
		line += ": " + a.Error
	}
	fmt.Fprintln(l.e.stdout, line)
}
