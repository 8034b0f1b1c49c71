// Package webhooktest provides real HTTPS webhook receivers for tests, on a
// fake internet: a test CA signs each receiver's certificate for the
// hostname it serves, a Resolver maps hostnames to public-looking addresses,
// and a Dial function routes those addresses to the receivers' loopback
// listeners. Deliveries then go through the production guard and client
// unchanged; only name resolution and the final TCP dial are injected.
package webhooktest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// Network is a fake internet of HTTPS receivers.
type Network struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	pool   *x509.CertPool
	mu     sync.Mutex
	hosts  map[string][]netip.Addr
	routes map[netip.Addr]string // public address → loopback listener
	next   int
}

// NewNetwork returns an empty network with a fresh CA.
func NewNetwork(t testing.TB) *Network {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "checkoutd test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &Network{
		ca: ca, caKey: key, pool: pool,
		caPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		hosts:  map[string][]netip.Addr{},
		routes: map[netip.Addr]string{},
	}
}

// RootCAs trusts the network's CA.
func (n *Network) RootCAs() *x509.CertPool { return n.pool }

// CAPEM is the CA certificate in PEM, for --webhook-ca-file.
func (n *Network) CAPEM() []byte { return n.caPEM }

// Certificate issues a certificate for the names (DNS names or IPs).
func (n *Network) Certificate(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, name := range names {
		if ip := net.ParseIP(name); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, n.ca, &key.PublicKey, n.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// SetAddrs makes host resolve to addrs from now on (to test rebinding).
func (n *Network) SetAddrs(host string, addrs ...netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hosts[host] = addrs
}

// LookupNetIP resolves a host of the network; an unknown host fails as DNS
// would. It satisfies webhook.Resolver.
func (n *Network) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(host, ".") // absolute names, as the guard asks for them
	n.mu.Lock()
	defer n.mu.Unlock()
	addrs, ok := n.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

// Dial connects to a receiver by its public address (port 443). Any other
// address fails: nothing leaves the machine.
func (n *Network) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, fmt.Errorf("webhooktest: dial %s: not an ip:port", address)
	}
	n.mu.Lock()
	target, ok := n.routes[ap.Addr()]
	n.mu.Unlock()
	if !ok || ap.Port() != 443 {
		return nil, fmt.Errorf("webhooktest: dial %s: connection refused", address)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", target)
}

// Request is one request a receiver got.
type Request struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// Receiver is an HTTPS server of the network.
type Receiver struct {
	// URL is https://<host>/hook.
	URL  string
	Host string
	Addr netip.Addr

	mu       sync.Mutex
	requests []Request
	handler  http.HandlerFunc
	notify   chan Request
}

// Receiver starts an HTTPS receiver for host at a fresh public address. It
// answers 200 until SetHandler says otherwise.
func (n *Network) Receiver(t testing.TB, host string) *Receiver {
	t.Helper()
	n.mu.Lock()
	n.next++
	addr := netip.AddrFrom4([4]byte{93, 184, byte(n.next / 250), byte(1 + n.next%250)})
	n.mu.Unlock()
	r := &Receiver{URL: "https://" + host + "/hook", Host: host, Addr: addr, notify: make(chan Request, 4096)}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{n.Certificate(t, host)}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	n.mu.Lock()
	n.hosts[host] = []netip.Addr{addr}
	n.routes[addr] = srv.Listener.Addr().String()
	n.mu.Unlock()
	return r
}

// SetHandler answers requests with h (after recording them; h can read
// the body again).
func (r *Receiver) SetHandler(h http.HandlerFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handler = h
}

// Status makes the receiver answer every request with code.
func (r *Receiver) Status(code int) {
	r.SetHandler(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) })
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	rec := Request{Header: req.Header.Clone(), Body: body, At: time.Now()}
	r.mu.Lock()
	r.requests = append(r.requests, rec)
	h := r.handler
	r.mu.Unlock()
	select {
	case r.notify <- rec:
	default:
	}
	if h != nil {
		// The handler reads the body as a receiver would, to verify it.
		req.Body = io.NopCloser(bytes.NewReader(body))
		h(w, req)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// Requests returns what the receiver got so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Next waits up to timeout for the next request and reports whether one
// came. Tests use it to wait for an event, never for a schedule.
func (r *Receiver) Next(timeout time.Duration) (Request, bool) {
	select {
	case req := <-r.notify:
		return req, true
	case <-time.After(timeout):
		return Request{}, false
	}
}
