package web

import (
	"net"
	"net/netip"
)

// ClientOf returns the client a request comes from, for limits: the TCP
// peer's address, an IPv6 one by its /64 (the block one host is usually
// given). Headers such as X-Forwarded-For are not read: any client can write
// them. Behind a proxy, every client of the proxy is one client here.
func ClientOf(remoteAddr string) netip.Prefix {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{} // all unparsable peers are one client
	}
	addr = addr.Unmap().WithZone("")
	bits := 32
	if addr.Is6() {
		bits = 64
	}
	p, _ := addr.Prefix(bits)
	return p
}
