package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Timeout is how long a receiver has to answer (SPEC.md Delivery).
const Timeout = 10 * time.Second

// ClientConfig configures NewClient.
type ClientConfig struct {
	// Guard decides which addresses may be reached; it is consulted at every
	// connection.
	Guard *Guard
	// RootCAs verifies receivers' certificates; the system's roots when nil.
	RootCAs *x509.CertPool
	// Dial makes the TCP connection to an address the guard allowed;
	// Guard.NetDialer() when nil. Tests route it to local receivers.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Timeout bounds an attempt; Timeout (10 s) when zero. Tests shorten it
	// to exercise a receiver that never answers.
	Timeout time.Duration
}

// NewClient returns the HTTP client deliveries use: every connection goes
// through the guard, no proxy is ever used (one would hide the address
// really reached), redirects are not followed, responses are not
// decompressed, and an attempt has Timeout in all.
func NewClient(c ClientConfig) *http.Client {
	dial := c.Dial
	if dial == nil {
		dial = c.Guard.NetDialer()
	}
	if c.Timeout <= 0 {
		c.Timeout = Timeout
	}
	transport := &http.Transport{
		Proxy:               nil,
		DialContext:         c.Guard.DialContext(dial),
		TLSClientConfig:     &tls.Config{RootCAs: c.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: Timeout,
		DisableCompression:  true,
		MaxIdleConns:        256,
		// Many endpoints may share a host (a SaaS receiver serves many
		// merchants), each with its attempts in flight: keep enough
		// connections to it that they are reused, not made again (a TLS
		// handshake each) for every delivery.
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  Timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   c.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// LoadRootCAs returns the system's roots plus the PEM certificates in file:
// extra CAs an operator trusts for internal receivers (--webhook-ca-file).
func LoadRootCAs(file string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if file == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read webhook CA file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("webhook CA file %s holds no PEM certificate", file)
	}
	return pool, nil
}
