package webhook

// TEMPORARY STUB: replaced by the real guard (branch ssrf) at merge.

import (
	"context"
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
func (g *Guard) Allowed(addr netip.Addr) bool                             { return true }
func (g *Guard) DialContext(dial func(ctx context.Context, network, address string) (net.Conn, error)) func(ctx context.Context, network, address string) (net.Conn, error) {
	return dial
}
func (g *Guard) NetDialer() func(ctx context.Context, network, address string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext
}
