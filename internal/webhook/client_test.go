package webhook

import (
	"net/http"
	"testing"
	"time"
)

// The production client gives a receiver 10 seconds (SPEC.md Delivery) for
// the whole attempt, follows no redirect and uses no proxy. Tests of a
// receiver that never answers shorten Timeout instead of waiting 10 s; this
// checks the value they replace.
func TestNewClientDefaults(t *testing.T) {
	if Timeout != 10*time.Second {
		t.Fatalf("Timeout = %s; want 10s", Timeout)
	}
	c := NewClient(ClientConfig{Guard: &Guard{}})
	if c.Timeout != 10*time.Second {
		t.Errorf("client Timeout = %s; want 10s", c.Timeout)
	}
	tr := c.Transport.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the client uses a proxy: the guard would check the proxy's address, not the receiver's")
	}
	if tr.ResponseHeaderTimeout > Timeout || tr.TLSHandshakeTimeout > Timeout {
		t.Errorf("transport timeouts %s, %s; want at most %s", tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout, Timeout)
	}
	if !tr.DisableCompression {
		t.Error("the client asks for compressed responses: the recorded 4 KiB would be of the decoded body, and an Accept-Encoding header is sent")
	}
	req, _ := http.NewRequest("POST", "https://hooks.example.com/", nil)
	if err := c.CheckRedirect(req, []*http.Request{req}); err != http.ErrUseLastResponse {
		t.Errorf("CheckRedirect = %v; want http.ErrUseLastResponse (redirects are not followed)", err)
	}
	if got := NewClient(ClientConfig{Guard: &Guard{}, Timeout: time.Second}).Timeout; got != time.Second {
		t.Errorf("client Timeout with ClientConfig.Timeout 1s = %s", got)
	}
}
