package web

import (
	"net"
	"net/netip"
)

// AddressOf returns the TCP peer's address of a request, without its
// port: what the audit trail records of where a change came from. Headers
// such as X-Forwarded-For are not read (ClientOf says why); an unparsable
// address is returned as it is.
func AddressOf(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.Unmap().String()
	}
	return host
}

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
