package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/listen"
)

// listen receives a store's test-mode events on a developer's machine
// (docs/webhooks.md, Local development), through package listen, under a
// name (the host name unless --name), and prints each forward.

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
	var cfg listen.Config
	var events, format string
	var printSecret bool
	fs.StringVar(&cfg.ForwardTo, "forward-to", "", "the local URL each event is posted to, such as http://localhost:3000/webhooks (required)")
	fs.StringVar(&cfg.Store, "store", "", "the store whose test-mode events to receive (required)")
	fs.StringVar(&cfg.BaseURL, "base-url", "http://127.0.0.1:8080", "address of the running service's API")
	fs.StringVar(&cfg.Secret, "secret", "", "a test-mode key's secret with checkouts:read; better given as CHECKOUTD_SECRET, which other users cannot see")
	fs.StringVar(&events, "events", "all", "the event types to receive, comma-separated, or all")
	fs.StringVar(&cfg.Name, "name", "", "the listener's name (default: this machine's host name); listening again under a name resumes it, with its secret and the events that waited")
	fs.StringVar(&format, "format", "text", "text, or json for one JSON object per event")
	fs.BoolVar(&printSecret, "print-secret", false, "print the listener's signing secret and exit")
	if _, err := parseFlags(fs, e, args); err != nil {
		return err
	}
	switch {
	case cfg.Store == "":
		return usageError{"listen needs --store (the store id)"}
	case cfg.Secret == "":
		return usageError{"listen needs a test-mode key's secret in CHECKOUTD_SECRET (or --secret)"}
	case !strings.HasPrefix(cfg.Secret, "ck_test_sk_"):
		return usageError{"listen works in test mode only, with a test-mode bearer key (ck_test_sk_...): live events go to HTTPS endpoints, never to a listener"}
	case format != "text" && format != "json":
		return usageError{fmt.Sprintf("--format must be text or json, not %q", format)}
	case cfg.ForwardTo == "" && !printSecret:
		return usageError{"listen needs --forward-to: the local URL to post events to, such as http://localhost:3000/webhooks"}
	}
	if !printSecret {
		if u, err := url.Parse(cfg.ForwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError{fmt.Sprintf("--forward-to %q is not an http(s) URL", cfg.ForwardTo)}
		}
	}
	if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError{fmt.Sprintf("--base-url %q is not an http(s) URL", cfg.BaseURL)}
	}
	if cfg.Name == "" {
		if cfg.Name, _ = os.Hostname(); cfg.Name == "" {
			cfg.Name = "checkoutd-listen"
		}
	}
	cfg.Events = checkout.ParseEvents(events)
	cfg.Log = e.stderr
	p := &listenPrinter{out: e.stdout, json: format == "json", forwardTo: cfg.ForwardTo}
	cfg.Forwarded = p.print
	l := listen.New(cfg)

	v, err := l.Register(ctx)
	if err != nil {
		return err
	}
	if printSecret {
		fmt.Fprintln(e.stdout, v.Secret)
		return nil
	}
	fmt.Fprintf(e.stderr, "Ready: forwarding the test-mode events of store %s (%s) to %s.\n", cfg.Store, strings.Join(v.Events, ", "), cfg.ForwardTo)
	fmt.Fprintf(e.stderr, "Your receiver verifies them with the signing secret %s (listener %s, named %q). Ctrl-C stops.\n", v.Secret, v.ID, v.Name)
	return l.Run(ctx)
}

// listenPrinter prints each forward: as text, or as JSON lines.
type listenPrinter struct {
	out       io.Writer
	json      bool
	forwardTo string
}

// print shows a delivery on its way (a nil) and then its local answer.
func (p *listenPrinter) print(m *api.StreamMessage, a *checkout.Attempt) {
	if p.json {
		if a == nil {
			return
		}
		line := listenLine{EventID: m.EventID, EventType: m.EventType, DeliveryID: m.DeliveryID, StatusCode: a.StatusCode,
			Error: a.Error, DurationMS: a.Duration.Milliseconds(), Event: json.RawMessage(m.Body)}
		json.NewEncoder(p.out).Encode(line)
		return
	}
	at := time.Now().Format("2006-01-02 15:04:05")
	if a == nil {
		fmt.Fprintf(p.out, "%s  --> %s [%s]\n", at, m.EventType, m.EventID)
		return
	}
	status := fmt.Sprint(a.StatusCode)
	if a.StatusCode == 0 {
		status = "ERR"
	}
	line := fmt.Sprintf("%s  <-- [%s] POST %s [%s] %d ms", at, status, p.forwardTo, m.EventID, a.Duration.Milliseconds())
	if a.Error != "" {
		line += ": " + a.Error
	}
	fmt.Fprintln(p.out, line)
}
