package stripepay

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"testing"
)

// adapterRun is what the adapter did in one scenario of
// testdata/adapter_harness.js.
type adapterRun struct {
	Calls       [][]any `json:"calls"`
	Message     string  `json:"message"`
	ReadyBefore bool    `json:"readyBefore"`
	Disabled    bool    `json:"disabled"`
	Label       string  `json:"label"`
}

// runAdapter runs adapter.js in Node against stand-ins of the page, the
// start door and Stripe.js. The page's browser test runs it in Chromium;
// this one checks its logic where Node is installed.
func runAdapter(t *testing.T, scenario map[string]any) adapterRun {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipping: the adapter's test runs it in Node, which is not installed")
	}
	arg, _ := json.Marshal(scenario)
	out, err := exec.Command(node, "testdata/adapter_harness.js", "adapter.js", string(arg)).Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	var run adapterRun
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return run
}

// calls returns the adapter's calls of one name.
func (r adapterRun) calls(name string) [][]any {
	var out [][]any
	for _, c := range r.Calls {
		if c[0] == name {
			out = append(out, c)
		}
	}
	return out
}

func TestAdapterPays(t *testing.T) {
	run := runAdapter(t, map[string]any{"start": map[string]any{"ok": true, "data": map[string]any{"client_secret": "pi_1_secret_x", "payment_id": "pay_1"}}})
	want := [][]any{
		{"Stripe", "pk_live_123"},
		{"elements", map[string]any{"mode": "payment", "amount": 1500.0, "currency": "eur", "paymentMethodTypes": []any{"card"}}},
		{"create", "payment"},
		{"mount", true},
		{"preventDefault"},
		{"submit"},
		{"fetch", "http://checkoutd.test/invoice/cs_1/card/start", "POST", "csrf_token=tok", "application/json"},
		{"confirmPayment", "pi_1_secret_x", "http://checkoutd.test/invoice/cs_1/card/return", true},
	}
	if !reflect.DeepEqual(run.Calls, want) {
		t.Fatalf("calls\n%v\nwant\n%v", run.Calls, want)
	}
	if !run.ReadyBefore || !run.Disabled || run.Label != "Processing…" || run.Message != "" {
		t.Fatalf("page %+v", run)
	}
}

func TestAdapterDeclined(t *testing.T) {
	run := runAdapter(t, map[string]any{
		"start":   map[string]any{"ok": true, "data": map[string]any{"client_secret": "pi_1_secret_x"}},
		"confirm": map[string]any{"error": map[string]any{"type": "card_error", "message": "Your card was declined."}},
	})
	// checkoutd looks the payment up on the return, and says why.
	if a := run.calls("assign"); len(a) != 1 || a[0][1] != "http://checkoutd.test/invoice/cs_1/card/return" {
		t.Fatalf("calls %v", run.Calls)
	}
}

func TestAdapterSessionDeclines(t *testing.T) {
	run := runAdapter(t, map[string]any{"start": map[string]any{"ok": true, "data": map[string]any{"error": "This session is paid.", "redirect": "/invoice/cs_1?method=card&decline=paid"}}})
	if a := run.calls("assign"); len(a) != 1 || a[0][1] != "/invoice/cs_1?method=card&decline=paid" || len(run.calls("confirmPayment")) != 0 {
		t.Fatalf("calls %v", run.Calls)
	}
}

func TestAdapterProblems(t *testing.T) {
	for name, c := range map[string]struct {
		scenario map[string]any
		message  string
		fetched  bool
	}{
		"start refused": {map[string]any{"start": map[string]any{"ok": false, "error": map[string]any{"code": "service_unavailable", "message": "The card processor did not answer. Try again."}}},
			"The card processor did not answer. Try again.", true},
		"not JSON": {map[string]any{"start": "html"}, "The payment could not be started. Try again.", true},
		"card incomplete": {map[string]any{"submit": map[string]any{"error": map[string]any{"message": "Your card number is incomplete."}}},
			"Your card number is incomplete.", false},
	} {
		t.Run(name, func(t *testing.T) {
			run := runAdapter(t, c.scenario)
			if run.Message != c.message || run.Disabled || run.Label != "Pay €15.00" || len(run.calls("confirmPayment")) != 0 ||
				(len(run.calls("fetch")) == 1) != c.fetched || len(run.calls("assign")) != 0 {
				t.Fatalf("%+v", run)
			}
		})
	}
}

func TestAdapterWithoutStripeJS(t *testing.T) {
	run := runAdapter(t, map[string]any{"noStripe": true})
	if len(run.Calls) != 0 || run.Message == "" || !run.Disabled {
		t.Fatalf("%+v", run)
	}
}
