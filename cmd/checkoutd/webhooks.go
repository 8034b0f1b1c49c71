package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/webhook"
)

// webhookFlags are the operator's webhook options, shared by serve and
// webhooks create.
type webhookFlags struct {
	allowCIDR string
	caFile    string
}

func (w *webhookFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.allowCIDR, "webhook-allow-cidr", "", "comma-separated private networks webhook endpoints may reach (off by default; e.g. 10.0.0.0/8)")
	fs.StringVar(&w.caFile, "webhook-ca-file", "", "PEM file of extra CA certificates trusted for webhook receivers (internal TLS)")
}

// guard returns the webhook guard the options describe. The CA file is
// loaded too, though registering an endpoint makes no TLS connection, so
// that a command given the environment of serve fails as serve would.
func (w *webhookFlags) guard() (*webhook.Guard, error) {
	if _, err := webhook.LoadRootCAs(w.caFile); err != nil {
		return nil, usageError{"--webhook-ca-file: " + err.Error()}
	}
	g := &webhook.Guard{}
	for _, s := range strings.Split(w.allowCIDR, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, usageError{fmt.Sprintf("--webhook-allow-cidr: %q is not a CIDR such as 10.0.0.0/8", s)}
		}
		g.AllowCIDRs = append(g.AllowCIDRs, p.Masked())
	}
	return g, nil
}

func webhooksCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "webhooks", args, map[string]func(context.Context, env, []string) error{
		"create":      webhooksCreate,
		"update":      webhooksUpdate,
		"list":        webhooksList,
		"disable":     func(ctx context.Context, e env, args []string) error { return webhooksSetEnabled(ctx, e, args, false) },
		"enable":      func(ctx context.Context, e env, args []string) error { return webhooksSetEnabled(ctx, e, args, true) },
		"delete":      webhooksDelete,
		"roll-secret": webhooksRollSecret,
		"send-test":   webhooksSendTest,
		"deliveries":  webhooksDeliveries,
		"resend":      webhooksResend,
	})
}

// endpointJSON is an endpoint as the commands print it. Secret is set only
// when the endpoint is created or its secret rolled.
type endpointJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	StoreID string `json:"store_id"`
	Mode    string `json:"mode"`
	// Kind is https, or listener for checkoutd listen (whose url is "" and
	// listener_name the machine's).
	Kind         string   `json:"kind"`
	URL          string   `json:"url"`
	ListenerName string   `json:"listener_name,omitempty"`
	Events       []string `json:"events"`
	Description  string   `json:"description"`
	Enabled      bool     `json:"enabled"`
	Secret       string   `json:"secret,omitempty"`
	// PreviousSecretExpiresAt is set by roll-secret --keep: until then the
	// replaced secret signs beside the new one.
	PreviousSecretExpiresAt *int64 `json:"previous_secret_expires_at,omitempty"`
	CreatedAt               int64  `json:"created_at"`
}

func toEndpointJSON(ep *checkout.Endpoint, withSecret bool) endpointJSON {
	j := endpointJSON{ID: ep.ID, Object: "webhook_endpoint", StoreID: ep.MerchantID, Mode: string(ep.Mode), Kind: string(ep.Kind), URL: ep.URL,
		ListenerName: ep.ListenerName, Events: ep.Events,
		Description: ep.Description, Enabled: ep.Enabled, CreatedAt: ep.CreatedAt.Unix()}
	if withSecret {
		j.Secret = ep.Secret
		if ep.PreviousSecret != "" {
			t := ep.PreviousSecretExpiresAt.Unix()
			j.PreviousSecretExpiresAt = &t
		}
	}
	return j
}

func printEndpoint(w io.Writer, ep *checkout.Endpoint) {
	events := strings.Join(ep.Events, ",")
	if ep.SubscribesAll() {
		events = "all"
	}
	fmt.Fprintf(w, "id:\t%s\nstore:\t%s\nmode:\t%s\nurl:\t%s\nevents:\t%s\nenabled:\t%t\n", ep.ID, ep.MerchantID, ep.Mode, ep.URL, events, ep.Enabled)
	if ep.Description != "" {
		fmt.Fprintf(w, "description:\t%s\n", ep.Description)
	}
}

func webhooksCreate(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "webhooks create", "webhooks create --store ID --mode test|live --url URL --events all|type,type [--description TEXT] [--json]")
	var store, mode, url, events, description string
	var wf webhookFlags
	a.fs.StringVar(&store, "store", "", "the store whose events the endpoint receives (required)")
	a.fs.StringVar(&mode, "mode", "test", "test or live: the endpoint receives only that mode's events")
	a.fs.StringVar(&url, "url", "", "the endpoint's https URL, on the default port, with a public hostname (required)")
	a.fs.StringVar(&events, "events", "all", "all (every type, those added later included), or a comma-separated list: "+strings.Join(checkout.SubscribableEventTypes(), ","))
	a.fs.StringVar(&description, "description", "", fmt.Sprintf("what the endpoint is for, at most %d characters on one line", checkout.MaxEndpointDescriptionLen))
	wf.register(a.fs)
	a.withGuard = wf.guard
	a.check = func(rest []string) error {
		return required("webhooks create", rest, map[string]string{"store": store, "url": url})
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		ep, err := svc.CreateEndpoint(ctx, checkout.EndpointParams{
			MerchantID: store, Mode: checkout.Mode(mode), URL: url, Events: checkout.ParseEvents(events), Description: description,
		})
		if err != nil {
			return describe(err)
		}
		return a.print(toEndpointJSON(ep, true), func(w io.Writer) {
			printEndpoint(w, ep)
			fmt.Fprintf(w, "secret:\t%s\n\nVerify every request's Service-Webhook-Signature with this secret.\n", ep.Secret)
		})
	})
}

func webhooksList(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "webhooks list", "webhooks list --store ID [--json]")
	var store string
	a.fs.StringVar(&store, "store", "", "the store whose endpoints to list (required)")
	a.check = func(rest []string) error { return required("webhooks list", rest, map[string]string{"store": store}) }
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if _, err := svc.Store().MerchantGet(ctx, store); err != nil {
			return err
		}
		eps, err := svc.Store().EndpointList(ctx, store)
		if err != nil {
			return err
		}
		out := make([]endpointJSON, len(eps))
		for i, ep := range eps {
			out[i] = toEndpointJSON(ep, false)
		}
		return a.print(newList(out), func(w io.Writer) {
			fmt.Fprintln(w, "ID\tMODE\tENABLED\tEVENTS\tURL")
			for _, ep := range eps {
				events := strings.Join(ep.Events, ",")
				if ep.SubscribesAll() {
					events = "all"
				}
				fmt.Fprintf(w, "%s\t%s\t%t\t%s\t%s\n", ep.ID, ep.Mode, ep.Enabled, events, ep.URL)
			}
		})
	})
}

// required fails with a usage error when a command that takes flags only
// got positional arguments rest, or naming the flags of flags (name to
// value) that were not given.
func required(cmd string, rest []string, flags map[string]string) error {
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("%s takes no arguments, only flags; got %q", cmd, rest)}
	}
	var missing []string
	for _, name := range sortedKeys(flags) {
		if strings.TrimSpace(flags[name]) == "" {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return usageError{fmt.Sprintf("%s needs %s", cmd, strings.Join(missing, " and "))}
}

func webhooksSetEnabled(ctx context.Context, e env, args []string, enabled bool) error {
	verb := map[bool]string{true: "enable", false: "disable"}[enabled]
	synopsis := "webhooks " + verb + " ENDPOINT_ID [--json]"
	a := newAdmin(e, "webhooks "+verb, synopsis)
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		ep, canceled, err := svc.SetEndpointEnabled(ctx, id, enabled)
		if err != nil {
			return err
		}
		return a.print(toEndpointJSON(ep, false), func(w io.Writer) {
			printEndpoint(w, ep)
			if !enabled {
				fmt.Fprintf(w, "\n%d queued deliveries canceled.\n", canceled)
			}
		})
	})
}

func webhooksDelete(ctx context.Context, e env, args []string) error {
	synopsis := "webhooks delete ENDPOINT_ID [--json]"
	a := newAdmin(e, "webhooks delete", synopsis)
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		if err := svc.DeleteEndpoint(ctx, id); err != nil {
			return err
		}
		return a.print(map[string]any{"id": id, "object": "webhook_endpoint", "deleted": true}, func(w io.Writer) {
			fmt.Fprintf(w, "endpoint %s deleted, with its deliveries\n", id)
		})
	})
}

// webhooksUpdate changes an endpoint's URL, events or description by the
// rules of create (the same guard, with the same operator options); what is
// not given stays.
func webhooksUpdate(ctx context.Context, e env, args []string) error {
	synopsis := "webhooks update ENDPOINT_ID [--url URL] [--events all|type,type] [--description TEXT] [--json]"
	a := newAdmin(e, "webhooks update", synopsis)
	var url, events, description optionalString
	var wf webhookFlags
	a.fs.Var(&url, "url", "the new https URL, checked as at create (command line only)")
	a.fs.Var(&events, "events", "the new events (command line only): all, or a comma-separated list: "+strings.Join(checkout.SubscribableEventTypes(), ","))
	a.fs.Var(&description, "description", fmt.Sprintf("the new description, at most %d characters on one line; \"\" removes it (command line only)", checkout.MaxEndpointDescriptionLen))
	wf.register(a.fs)
	a.withGuard = wf.guard
	a.check = func([]string) error {
		if !url.set && !events.set && !description.set {
			return usageError{"webhooks update needs at least one of --url, --events and --description"}
		}
		return nil
	}
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		u := checkout.EndpointUpdate{URL: url.ptr(), Description: description.ptr()}
		if events.set {
			u.Events = checkout.ParseEvents(events.value)
			if u.Events == nil {
				u.Events = []string{} // refused, as at create, rather than left as it is
			}
		}
		scope, err := endpointScope(ctx, svc, id)
		if err != nil {
			return err
		}
		ep, err := svc.UpdateEndpoint(ctx, scope, id, u)
		if err != nil {
			return describe(err)
		}
		return a.print(toEndpointJSON(ep, false), func(w io.Writer) { printEndpoint(w, ep) })
	})
}

// endpointScope returns the store and mode of an endpoint: the scope the
// dashboard's operations take, which an operator naming an endpoint by its
// id on the command line holds whatever it is.
func endpointScope(ctx context.Context, svc *service.Service, id string) (checkout.Scope, error) {
	ep, err := svc.Store().EndpointGet(ctx, id)
	if err != nil {
		return checkout.Scope{}, err
	}
	return checkout.Scope{MerchantID: ep.MerchantID, Mode: ep.Mode}, nil
}

func webhooksRollSecret(ctx context.Context, e env, args []string) error {
	synopsis := "webhooks roll-secret ENDPOINT_ID [--keep DURATION] [--json]"
	a := newAdmin(e, "webhooks roll-secret", synopsis)
	var keepFlag optionalString
	a.fs.Var(&keepFlag, "keep", "keep the old secret valid beside the new one this long (at most 24h, e.g. 2h), so that the receiver can switch without refusing a request; without it the old secret stops at once (command line only)")
	var keep time.Duration
	a.check = func([]string) error {
		if !keepFlag.set {
			return nil
		}
		var err error
		if keep, err = time.ParseDuration(keepFlag.value); err != nil {
			return usageError{fmt.Sprintf("--keep: %q is not a duration such as 30m or 24h", keepFlag.value)}
		}
		return nil
	}
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		var ep *checkout.Endpoint
		var err error
		if keep == 0 {
			ep, err = svc.RollEndpointSecret(ctx, id)
		} else {
			var scope checkout.Scope
			if scope, err = endpointScope(ctx, svc, id); err == nil {
				ep, err = svc.RollEndpointSecretIn(ctx, scope, id, keep)
			}
		}
		if err != nil {
			return describe(err)
		}
		return a.print(toEndpointJSON(ep, true), func(w io.Writer) {
			printEndpoint(w, ep)
			fmt.Fprintf(w, "secret:\t%s\n\n", ep.Secret)
			if ep.PreviousSecret == "" {
				fmt.Fprintln(w, "The new secret signs every request from now on, retries included.")
				return
			}
			fmt.Fprintf(w, "Until %s every request carries a v1= signature with each secret, the new one first;\n"+
				"switch your receiver to the new secret before then.\n", ep.PreviousSecretExpiresAt.UTC().Format(time.RFC3339))
		})
	})
}

// deliveryJSON is a delivery as the commands print it, with its attempts.
type deliveryJSON struct {
	ID             string        `json:"id"`
	Object         string        `json:"object"`
	EventID        string        `json:"event_id"`
	EndpointID     string        `json:"endpoint_id"`
	Status         string        `json:"status"`
	Attempts       int           `json:"attempts"`
	NextAttemptAt  *int64        `json:"next_attempt_at"`
	LastStatusCode int           `json:"last_status_code"`
	LastError      string        `json:"last_error"`
	CreatedAt      int64         `json:"created_at"`
	AttemptList    []attemptJSON `json:"attempt_list,omitempty"`
}

type attemptJSON struct {
	Number       int    `json:"number"`
	StartedAt    int64  `json:"started_at"`
	DurationMS   int64  `json:"duration_ms"`
	StatusCode   int    `json:"status_code"`
	Error        string `json:"error"`
	ResponseBody string `json:"response_body"`
}

func toDeliveryJSON(d *checkout.Delivery, attempts []*checkout.Attempt) deliveryJSON {
	j := deliveryJSON{ID: d.ID, Object: "webhook_delivery", EventID: d.EventID, EndpointID: d.EndpointID, Status: string(d.Status),
		Attempts: d.Attempts, LastStatusCode: d.LastStatusCode, LastError: d.LastError, CreatedAt: d.CreatedAt.Unix()}
	if !d.Finished() {
		t := d.NextAttemptAt.Unix()
		j.NextAttemptAt = &t
	}
	for _, a := range attempts {
		j.AttemptList = append(j.AttemptList, attemptJSON{a.Number, a.StartedAt.Unix(), a.Duration.Milliseconds(), a.StatusCode, a.Error, a.ResponseBody})
	}
	return j
}

func webhooksSendTest(ctx context.Context, e env, args []string) error {
	synopsis := "webhooks send-test ENDPOINT_ID [--json]"
	a := newAdmin(e, "webhooks send-test", synopsis)
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		ev, d, err := svc.SendTestEvent(ctx, id)
		if err != nil {
			return err
		}
		return a.print(toDeliveryJSON(d, nil), func(w io.Writer) {
			fmt.Fprintf(w, "event:\t%s\ndelivery:\t%s\n\nA running checkoutd serve delivers it within a second; see checkoutd webhooks deliveries --endpoint %s.\n", ev.ID, d.ID, id)
		})
	})
}

func webhooksResend(ctx context.Context, e env, args []string) error {
	synopsis := "webhooks resend DELIVERY_ID [--json]"
	a := newAdmin(e, "webhooks resend", synopsis)
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		d, err := svc.Resend(ctx, id)
		if err != nil {
			return err
		}
		return a.print(toDeliveryJSON(d, nil), func(w io.Writer) {
			fmt.Fprintf(w, "delivery:\t%s (a new delivery of event %s)\n", d.ID, d.EventID)
		})
	})
}

func webhooksDeliveries(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "webhooks deliveries", "webhooks deliveries --endpoint ID [--limit N] [--json]")
	var endpoint string
	var limit int
	a.fs.StringVar(&endpoint, "endpoint", "", "the endpoint whose deliveries to list (required)")
	a.fs.IntVar(&limit, "limit", 20, "how many of the newest deliveries to show")
	a.check = func(rest []string) error {
		if limit < 1 {
			return usageError{"--limit must be 1 or more"}
		}
		return required("webhooks deliveries", rest, map[string]string{"endpoint": endpoint})
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if _, err := svc.Store().EndpointGet(ctx, endpoint); err != nil {
			return err
		}
		ds, err := svc.Store().DeliveryList(ctx, checkout.DeliveryListParams{EndpointID: endpoint, Limit: limit})
		if err != nil {
			return err
		}
		out := make([]deliveryJSON, len(ds))
		for i, d := range ds {
			attempts, err := svc.Store().AttemptList(ctx, d.ID)
			if err != nil {
				return err
			}
			out[i] = toDeliveryJSON(d, attempts)
		}
		return a.print(newList(out), func(w io.Writer) {
			fmt.Fprintln(w, "ID\tEVENT\tSTATUS\tATTEMPTS\tLAST STATUS\tLAST ERROR\tCREATED")
			for _, d := range ds {
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", d.ID, d.EventID, d.Status, d.Attempts, d.LastStatusCode, d.LastError,
					d.CreatedAt.UTC().Format(time.RFC3339))
			}
		})
	})
}
