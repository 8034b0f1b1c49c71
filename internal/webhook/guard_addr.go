package webhook

import (
	"net/netip"
	"strings"
)

// Allowed reports whether deliveries may connect to addr: a public unicast
// address, or one inside AllowCIDRs.
//
// An address with an IPv6 zone is never allowed: zones only make sense for
// link-local addresses, and netip.Prefix.Contains never matches one, so a
// zone would otherwise be a way around AllowCIDRs' intent. An IPv4-mapped
// IPv6 address is the IPv4 address it carries, both for AllowCIDRs and for
// the public test, because that is where the kernel sends it.
//
// AllowCIDRs is the operator's explicit choice and is honoured as given, even
// if it covers loopback or the cloud metadata address.
func (g *Guard) Allowed(addr netip.Addr) bool {
	if !addr.IsValid() || addr.Zone() != "" {
		return false
	}
	if g != nil {
		for _, p := range g.AllowCIDRs {
			if prefixContains(p, addr) {
				return true
			}
		}
	}
	return isPublic(addr)
}

// prefixContains is p.Contains(a) that treats IPv4-mapped IPv6 addresses and
// prefixes as the IPv4 ones they mean, so an operator's 10.0.0.0/8 also covers
// ::ffff:10.1.2.3 and a configured ::ffff:10.0.0.0/104 covers 10.1.2.3.
func prefixContains(p netip.Prefix, a netip.Addr) bool {
	if !p.IsValid() {
		return false
	}
	if pa := p.Addr(); pa.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(pa.Unmap(), p.Bits()-96)
	}
	return p.Contains(a.Unmap())
}

// refusedV4 lists every IPv4 range that is not public unicast: the IANA IPv4
// Special-Purpose Address Registry (RFC 6890 and its updates), multicast and
// the reserved class E. Ranges the registry marks globally reachable but that
// serve a protocol rather than hosts (AS112, AMT, the PCP and TURN anycast
// addresses inside 192.0.0.0/24) are refused too: no webhook receiver lives
// there.
var refusedV4 = prefixes(
	"0.0.0.0/8",       // "this network", unspecified
	"10.0.0.0/8",      // private (RFC 1918)
	"100.64.0.0/10",   // carrier-grade NAT (RFC 6598); also some clouds' metadata (100.100.100.200)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, cloud metadata (169.254.169.254)
	"172.16.0.0/12",   // private (RFC 1918)
	"192.0.0.0/24",    // IETF protocol assignments (RFC 6890)
	"192.0.2.0/24",    // documentation TEST-NET-1
	"192.31.196.0/24", // AS112-v4 (RFC 7535)
	"192.52.193.0/24", // AMT (RFC 7450)
	"192.88.99.0/24",  // deprecated 6to4 relay anycast (RFC 7526)
	"192.168.0.0/16",  // private (RFC 1918)
	"192.175.48.0/24", // AS112 direct delegation (RFC 7534)
	"198.18.0.0/15",   // benchmarking (RFC 2544)
	"198.51.100.0/24", // documentation TEST-NET-2
	"203.0.113.0/24",  // documentation TEST-NET-3
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved class E, including the broadcast 255.255.255.255
)

// refusedV6 lists the special-purpose ranges inside 2000::/3, the only block
// IANA allocates for global unicast; everything outside it (::/128, ::1,
// 100::/64, 5f00::/16, fc00::/7, fe80::/10, fec0::/10, ff00::/8 and the
// unallocated rest) is refused by isPublic without a list. The ranges that
// embed an IPv4 address are judged by that address in isPublic.
var refusedV6 = prefixes(
	"2001::/23",         // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID, AMT, DRIP ...
	"2001:db8::/32",     // documentation
	"2620:4f:8000::/48", // AS112 direct delegation (RFC 7534)
	"3fff::/20",         // documentation (RFC 9637)
)

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	compatible6    = netip.MustParsePrefix("::/96")           // IPv4-compatible (deprecated, RFC 4291)
	translated6    = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (SIIT, RFC 2765)
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")  // local-use NAT64 (RFC 8215)
	sixToFour      = netip.MustParsePrefix("2002::/16")       // 6to4 (RFC 3056)
)

// isPublic reports whether a is public unicast. Addresses that carry an IPv4
// address which a host, a translator or a tunnel would deliver to are judged
// by that IPv4 address, so ::ffff:10.0.0.1 and 64:ff9b::a00:1 are private
// while ::ffff:8.8.8.8 is public.
func isPublic(a netip.Addr) bool {
	if a.Is4() || a.Is4In6() {
		return isPublic4(a.Unmap())
	}
	b := a.As16()
	last4 := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case a.IsUnspecified() || a.IsLoopback():
		return false
	case compatible6.Contains(a), translated6.Contains(a), nat64WellKnown.Contains(a):
		return isPublic4(last4)
	case nat64Local.Contains(a):
		return isPublicNAT64Local(b)
	case sixToFour.Contains(a):
		return isPublic4(netip.AddrFrom4([4]byte(b[2:6])))
	case !globalUnicast6.Contains(a):
		return false
	}
	return !containsAny(refusedV6, a)
}

// isPublicNAT64Local judges an address of the local-use NAT64 prefix
// 64:ff9b:1::/48. Where its IPv4 address sits depends on the prefix length
// the operator's translator uses (RFC 6052 section 2.2 allows /48, /56, /64
// and /96 inside a /48), which checkoutd cannot know, so the address is
// public only if the IPv4 address read under every one of those layouts is.
// That refuses almost all of the range; an operator who runs such a
// translator can allow it with AllowCIDRs.
func isPublicNAT64Local(b [16]byte) bool {
	layouts := [][4]byte{
		{b[6], b[7], b[9], b[10]},    // /48: bits 48-63 and 72-87, skipping the u octet
		{b[7], b[9], b[10], b[11]},   // /56
		{b[9], b[10], b[11], b[12]},  // /64
		{b[12], b[13], b[14], b[15]}, // /96
	}
	for _, v4 := range layouts {
		if !isPublic4(netip.AddrFrom4(v4)) {
			return false
		}
	}
	return true
}

func isPublic4(a netip.Addr) bool { return !containsAny(refusedV4, a) }

func containsAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// endsInNumber reports whether host's last label is a number in some base
// (decimal, 0x hex or 0-prefixed octal). Browsers (the WHATWG URL standard)
// and inet_aton, which getaddrinfo and so Go's cgo resolver use, then read the
// whole host as an IPv4 address, so such a host is never a name: 2130706433,
// 0x7f000001, 0177.0.0.1 and 127.1 all mean 127.0.0.1. No public suffix is
// numeric, so nothing legitimate is lost.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if labels[len(labels)-1] == "" && len(labels) > 1 {
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4Loose parses host the way the WHATWG URL standard's IPv4 parser
// (and, for these inputs, inet_aton) does: one to four dot-separated numbers,
// each decimal, 0x hex or 0-prefixed octal, an optional trailing dot, the last
// number filling the remaining bytes. It is how the guard learns which
// address an oddly written literal really names.
func parseIPv4Loose(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number parses one part of a loose IPv4 address; ok is false when
// s is not a number in its base. A value beyond 32 bits is returned as 1<<32
// (never wrapped), which every caller's range check refuses: the part is
// still a number, so the host is still an (invalid) address, not a name.
// "0x" alone is zero, as in the URL standard.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if n = n*base + d; n > 1<<32 {
			n = 1 << 32
		}
	}
	return n, true
}
