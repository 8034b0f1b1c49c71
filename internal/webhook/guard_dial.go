package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// connectTimeout bounds the TCP connect of one delivery attempt; the attempt
// as a whole has its own 10 s budget (DESIGN.md section 8).
const connectTimeout = 10 * time.Second

// DialContext returns a dial function for http.Transport.DialContext. It
// resolves the host of address with the Resolver, refuses the connection (an
// error that says why, naming the host but nothing secret) when ANY resolved
// address is not Allowed, and otherwise dials "ip:port" of an allowed address
// with dial (trying each in turn). The check runs at every connection, so a
// name that resolved public at registration and private now (DNS rebinding)
// is refused. An IP-literal host is checked directly.
//
// Refusing when any address is private, rather than skipping that address,
// leaves an attacker who controls a name's records no way to make a private
// address win. The host itself never reaches dial, so nothing below resolves
// it again (which would reopen the rebinding window). A host written in one
// of the loose IPv4 notations (2130706433, 0x7f000001, 127.1) is read as the
// address it names, as getaddrinfo would, never handed to the resolver.
//
// The transport using it must not use a proxy (Proxy: nil): through a proxy
// the guard would check the proxy's address, not the endpoint's.
func (g *Guard) DialContext(dial func(ctx context.Context, network, address string) (net.Conn, error)) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		var ipNetwork string
		switch network {
		case "tcp":
			ipNetwork = "ip"
		case "tcp4":
			ipNetwork = "ip4"
		case "tcp6":
			ipNetwork = "ip6"
		default:
			return nil, &dialError{msg: fmt.Sprintf("webhook: refusing to dial network %q", network)}
		}
		hostname, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, &dialError{msg: fmt.Sprintf("webhook: invalid address %q", address), err: err}
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return nil, &dialError{msg: fmt.Sprintf("webhook: invalid port in address %q", address)}
		}
		addrs, err := g.dialAddrs(ctx, ipNetwork, hostname)
		if err != nil {
			return nil, err
		}
		var first error
		for _, a := range addrs {
			c, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, first
	}
}

// dialAddrs returns the addresses DialContext may dial for hostname, or why
// it may dial none.
func (g *Guard) dialAddrs(ctx context.Context, ipNetwork, hostname string) ([]netip.Addr, error) {
	if hostname == "" {
		return nil, &dialError{msg: "webhook: refusing to connect: empty host"}
	}
	if a, err := netip.ParseAddr(hostname); err == nil {
		return g.literal(hostname, a)
	}
	if endsInNumber(hostname) {
		a, ok := parseIPv4Loose(hostname)
		if !ok {
			return nil, &dialError{msg: fmt.Sprintf("webhook: refusing to connect to %s: not a valid host name or IP address", hostname)}
		}
		return g.literal(hostname, a)
	}
	addrs, err := g.resolve(ctx, ipNetwork, hostname)
	if err != nil {
		return nil, &dialError{msg: fmt.Sprintf("webhook: could not resolve %s: %s", hostname, lookupReason(err)), err: err}
	}
	seen := make(map[netip.Addr]bool, len(addrs))
	unique := addrs[:0:0]
	for _, a := range addrs {
		if !g.Allowed(a) {
			return nil, &dialError{
				msg: fmt.Sprintf("webhook: refusing to connect to %s: it resolves to a private or reserved address", hostname),
				err: errRefused,
			}
		}
		if !seen[a] {
			seen[a] = true
			unique = append(unique, a)
		}
	}
	return unique, nil
}

func (g *Guard) literal(hostname string, a netip.Addr) ([]netip.Addr, error) {
	if !g.Allowed(a) {
		return nil, &dialError{
			msg: fmt.Sprintf("webhook: refusing to connect to %s: not a public address", hostname),
			err: errRefused,
		}
	}
	return []netip.Addr{a}, nil
}

// NetDialer returns the production base dial function: a net.Dialer with a
// 10 s connect timeout whose Control hook checks, with Allowed, the exact
// address the socket is about to connect to (defence in depth under
// DialContext).
//
// Control runs after every resolution, just before connect(2), so even a
// caller that bypasses DialContext, or a hostname resolved here, cannot
// connect to a refused address.
func (g *Guard) NetDialer() func(ctx context.Context, network, address string) (net.Conn, error) {
	d := &net.Dialer{
		Timeout: connectTimeout,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !g.Allowed(ap.Addr()) {
				// The address is left out: it may be what a merchant's
				// name resolves to inside the operator's network.
				return &dialError{msg: "webhook: refusing to connect to a private or reserved address", err: errRefused}
			}
			return nil
		},
	}
	return d.DialContext
}

// errRefused is the cause of every refusal for a non-public address, so a
// the dispatcher, in this package, can tell a refusal (errors.Is) from a
// network failure.
var errRefused = errors.New("address not allowed")

// dialError is an error of DialContext or NetDialer. Its text names the host
// and the reason but not the cause, which may hold resolved addresses or the
// resolver's error (the DNS server's address): the dispatcher records
// delivery errors where merchants see them. Unwrap still gives the cause.
type dialError struct {
	msg string
	err error
}

func (e *dialError) Error() string { return e.msg }
func (e *dialError) Unwrap() error { return e.err }
