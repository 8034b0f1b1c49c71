package webhook

// TEMPORARY STUB: replaced by the real guard (branch ssrf) at merge.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

type Guard struct {
	Resolver   Resolver
	AllowCIDRs []netip.Prefix
}

func (g *Guard) CheckURL(ctx context.Context, raw string) (string, error) { return raw, nil }
func (g *Guard) Allowed(addr netip.Addr) bool {
	for _, p := range g.AllowCIDRs {
		if p.Contains(addr) {
			return true
		}
	}
	return addr.IsGlobalUnicast() && !addr.IsPrivate()
}
func (g *Guard) DialContext(dial func(ctx context.Context, network, address string) (net.Conn, error)) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(address)
		var r Resolver = net.DefaultResolver
		if g.Resolver != nil {
			r = g.Resolver
		}
		if a, err := netip.ParseAddr(host); err == nil {
			return dial(ctx, network, net.JoinHostPort(a.String(), port))
		}
		addrs, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if !g.Allowed(a) {
				return nil, fmt.Errorf("refused: %s resolves to a private address", host)
			}
		}
		return dial(ctx, network, net.JoinHostPort(addrs[0].String(), port))
	}
}
func (g *Guard) NetDialer() func(ctx context.Context, network, address string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext
}
