package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	// The runtime that oapi-codegen's clients import. This import keeps it
	// in go.mod, go.sum and the module cache (go mod download), so that
	// TestOpenAPIGeneratedGoClient builds its client without a network.
	_ "github.com/oapi-codegen/runtime"

	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// merchantProgram is what a merchant writes against a client generated from
// the document: a create without quantity, and the fields of an error read
// as the types the generator gives them.
const merchantProgram = `package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"

	"example.com/merchant/checkoutapi"
)

type report struct {
	Sent            json.RawMessage
	Status          string
	Quantity        int
	Code            string
	Message         string
	Param           string
	RequestID       string
	RequestIDHeader string
	Details         []checkoutapi.Violation
	NotFoundCode    string
}

func main() {
	base, storeID, secret := os.Args[1], os.Args[2], os.Args[3]
	ctx := context.Background()
	var store checkoutapi.StoreId
	must(store.UnmarshalText([]byte(storeID)))
	c, err := checkoutapi.NewClientWithResponses(base, checkoutapi.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+secret)
		return nil
	}))
	must(err)
	var out report

	// quantity is optional: a create without it type-checks, and is sent
	// without it.
	body := checkoutapi.CreateCheckoutRequest{Items: []checkoutapi.ItemInput{{Name: "Sword", Amount: 1500}}}
	out.Sent, err = json.Marshal(body)
	must(err)
	created, err := c.CreateCheckoutSessionWithResponse(ctx, store, nil, body)
	must(err)
	if created.JSON201 == nil {
		fail("create: " + created.Status() + " " + string(created.Body))
	}
	var status checkoutapi.CheckoutSessionStatus = created.JSON201.Data.Status
	out.Status = string(status)
	out.Quantity = created.JSON201.Data.Items[0].Quantity

	// An error keeps every field, typed, and its code narrowed to the
	// status's codes.
	zero := 0
	bad := checkoutapi.CreateCheckoutRequest{Items: []checkoutapi.ItemInput{{Name: "Sword", Amount: 1500, Quantity: &zero}}}
	refused, err := c.CreateCheckoutSessionWithResponse(ctx, store, nil, bad)
	must(err)
	if refused.JSON400 == nil {
		fail("bad create: " + refused.Status() + " " + string(refused.Body))
	}
	var e checkoutapi.BadRequestError = refused.JSON400.Error
	var code checkoutapi.BadRequestErrorCode = e.Code
	var message string = e.Message
	var param *string = e.Param
	var requestID string = e.RequestId
	var details *[]checkoutapi.Violation = e.Details
	out.Code, out.Message, out.RequestID = string(code), message, requestID
	out.RequestIDHeader = refused.HTTPResponse.Header.Get("Request-Id")
	if param != nil {
		out.Param = *param
	}
	if details != nil {
		out.Details = *details
	}

	missing, err := c.GetCheckoutSessionWithResponse(ctx, store, "cs_0000000000000000000000000000000000000000000000000000000000000000")
	must(err)
	if missing.JSON404 == nil {
		fail("get: " + missing.Status() + " " + string(missing.Body))
	}
	var notFound checkoutapi.NotFoundErrorCode = missing.JSON404.Error.Code
	out.NotFoundCode = string(notFound)

	must(json.NewEncoder(os.Stdout).Encode(out))
}

func must(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	os.Stderr.WriteString(msg + "\n")
	os.Exit(1)
}
`

// A real generator reads the served document: oapi-codegen (the version
// pinned by go.mod's tool directive) generates types and a client from
// /v1/openapi.json into a module of its own, where a merchant's program is
// built and run against the server. The module uses checkoutd's go.mod
// requirements and the module cache, never the network (GOPROXY=off).
// Nothing generated is kept.
func TestOpenAPIGeneratedGoClient(t *testing.T) {
	h := newHarness(t, storetest.Open(t, "sqlite"))
	doc := h.do(request{method: "GET", path: "/v1/openapi.json"})
	if doc.Status != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json = %d", doc.Status)
	}

	goBin := goCommand(t)
	root := filepath.Dir(goOutput(t, goBin, ".", "env", "GOMOD"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), doc.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "checkoutapi"), 0o755); err != nil {
		t.Fatal(err)
	}
	// skip-prune: oapi-codegen prunes the schemas that no path refers to,
	// and does not look at webhooks, so without it Event, Payment and
	// WebhookTest are left out while the webhook code refers to Event
	// (docs/api.md says so).
	config := "package: checkoutapi\n" +
		"output: " + filepath.Join(dir, "checkoutapi", "checkoutapi.gen.go") + "\n" +
		"generate:\n  models: true\n  client: true\n" +
		"output-options:\n  skip-prune: true\n"
	if err := os.WriteFile(filepath.Join(dir, "oapi-codegen.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// The generator itself may come from the module proxy (a fresh machine
	// has an empty cache): go.sum pins what it downloads.
	goOutputOnline(t, goBin, root, "tool", "oapi-codegen", "-config", filepath.Join(dir, "oapi-codegen.yaml"), filepath.Join(dir, "openapi.json"))

	// The merchant's module: checkoutd's requirements (so the generated
	// code's imports are in the module cache), another module path, no
	// tools, and the replacement of checkoutd's client module (./client)
	// pointing into checkoutd's tree, so that the module graph is whole.
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod = regexp.MustCompile(`(?m)^module .*$`).ReplaceAll(mod, []byte("module example.com/merchant"))
	mod = regexp.MustCompile(`(?m)^tool .*$`).ReplaceAll(mod, nil)
	mod = regexp.MustCompile(`(?m)=> \./`).ReplaceAllLiteral(mod, []byte("=> "+filepath.ToSlash(root)+"/"))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": mod, "go.sum": sum, "main.go": []byte(merchantProgram)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "merchant")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	goOutput(t, goBin, dir, "build", "-o", exe, ".")

	run := exec.Command(exe, h.srv.URL, h.store.ID, h.secret)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("the merchant's program: %v\n%s", err, stderr.String())
	}
	var got struct {
		Sent            map[string][]map[string]any
		Status          string
		Quantity        int
		Code            string
		Message         string
		Param           string
		RequestID       string
		RequestIDHeader string
		Details         []struct{ Code, Param, Message string }
		NotFoundCode    string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the program's report %s: %v", out, err)
	}
	if _, sent := got.Sent["items"][0]["quantity"]; sent {
		t.Errorf("the generated client sent quantity: %v; want it left out", got.Sent)
	}
	if got.Status != "open" || got.Quantity != 1 {
		t.Errorf("created status %q, quantity %d; want open and 1", got.Status, got.Quantity)
	}
	if got.Code != "validation_failed" || got.Message == "" || got.Param != "items[0].quantity" ||
		got.RequestID == "" || got.RequestID != got.RequestIDHeader ||
		len(got.Details) != 1 || got.Details[0].Code != "out_of_range" || got.Details[0].Param != "items[0].quantity" || got.Details[0].Message == "" {
		t.Errorf("the error as the generated client read it: %+v", got)
	}
	if got.NotFoundCode != "checkout_not_found" {
		t.Errorf("404 code = %q; want checkout_not_found", got.NotFoundCode)
	}
}

// goCommand returns the go command of the toolchain running the tests (go
// test puts its GOROOT/bin first on the PATH).
func goCommand(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	return p
}

// goOutput runs the go command in dir, offline, and returns its output.
func goOutput(t *testing.T, goBin, dir string, args ...string) string {
	t.Helper()
	return runGo(t, goBin, dir, []string{"GOPROXY=off"}, args...)
}

// goOutputOnline runs the go command in dir with the module proxy of the
// environment.
func goOutputOnline(t *testing.T, goBin, dir string, args ...string) string {
	t.Helper()
	return runGo(t, goBin, dir, nil, args...)
}

func runGo(t *testing.T, goBin, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "GOFLAGS=-mod=readonly -buildvcs=false", "GOWORK=off", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}
