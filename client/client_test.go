package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// The client's tests against a real checkoutd (sessions created and
// retrieved, refusals, retries the server sees, webhooks the dispatcher
// delivers) are in the server's module, internal/clienttest: this module
// depends on nothing. These need the standard library alone.

func sword() CreateParams {
	return CreateParams{Items: []ItemParams{{Name: "Sword", Amount: 1500}}}
}

// transport is a RoundTripper of a function.
type transport func(*http.Request) (*http.Response, error)

func (f transport) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A network error is wrapped: errors.Is finds the transport's error.
func TestNetworkErrorWrapped(t *testing.T) {
	refused := errors.New("connection refused (injected)")
	c := New("http://api.example.test", "s", WithMaxAttempts(1), WithHTTPClient(&http.Client{Transport: transport(func(*http.Request) (*http.Response, error) { return nil, refused })}))
	_, err := c.Get(context.Background(), "cs_x")
	var e *Error
	if !errors.Is(err, refused) || errors.As(err, &e) {
		t.Errorf("Get = %v; want the transport's error wrapped", err)
	}
}
