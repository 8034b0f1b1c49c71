package webhook

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
)

// fakeResolver answers from a table and never touches the network. A name
// asked with a trailing dot (the absolute form the guard uses) is the same
// name. Unknown names are not found, like NXDOMAIN.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]netip.Addr
	errs  map[string]error
	asked []string
}

func newResolver() *fakeResolver {
	return &fakeResolver{hosts: map[string][]netip.Addr{}, errs: map[string]error{}}
}

// set makes name resolve to addrs from now on.
func (r *fakeResolver) set(name string, addrs ...string) *fakeResolver {
	r.mu.Lock()
	defer r.mu.Unlock()
	as := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		as[i] = netip.MustParseAddr(a)
	}
	r.hosts[name] = as
	return r
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, network+" "+host)
	name := strings.TrimSuffix(host, ".")
	if err := r.errs[name]; err != nil {
		return nil, err
	}
	addrs, ok := r.hosts[name]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.0.0.2:53", IsNotFound: true}
	}
	var out []netip.Addr
	for _, a := range addrs {
		if network == "ip" || (network == "ip4") == (a.Is4() || a.Is4In6()) {
			out = append(out, a)
		}
	}
	return out, nil
}

// recordingDialer is a base dial function that records what it was asked to
// dial and never connects: it hands back one end of a pipe. Addresses in
// fail are refused like a closed port.
type recordingDialer struct {
	mu    sync.Mutex
	asked []string
	fail  map[string]bool
}

func (d *recordingDialer) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, address)
	if d.fail[address] {
		return nil, fmt.Errorf("dial %s %s: connection refused", network, address)
	}
	c, peer := net.Pipe()
	peer.Close()
	return c, nil
}

func (d *recordingDialer) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.asked)
}

// dialThrough dials address through g.DialContext over a recording dialer
// and returns the error and what reached the base dialer.
func dialThrough(g *Guard, network, address string) (error, []string) {
	d := &recordingDialer{}
	c, err := g.DialContext(d.dial)(context.Background(), network, address)
	if c != nil {
		c.Close()
	}
	return err, d.dialed()
}

// wantURLError checks that err is the validation error of CheckURL with a
// first violation of code whose message contains msg.
func wantURLError(t *testing.T, call string, err error, code, msg string) {
	t.Helper()
	var e *checkout.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: err = %v (%T); want *checkout.Error", call, err, err)
		return
	}
	if e.Code != checkout.EValidationFailed || e.Param != "url" || len(e.Details) == 0 {
		t.Errorf("%s: err = {Code: %q, Param: %q, Details: %v}; want validation_failed on url with details", call, e.Code, e.Param, e.Details)
		return
	}
	for _, d := range e.Details {
		if d.Param != "url" || d.Message == "" {
			t.Errorf("%s: detail %+v; want Param url and a message", call, d)
		}
	}
	if got := e.Details[0].Code; got != code {
		t.Errorf("%s: detail code = %q (%s); want %q", call, got, e.Message, code)
	}
	if !strings.Contains(e.Message, msg) {
		t.Errorf("%s: message = %q; want it to contain %q", call, e.Message, msg)
	}
}

// refusedRanges are the address ranges deliveries may never reach, with
// addresses at their edges and in the middle.
var refusedRanges = []struct {
	name  string
	addrs []string
}{
	{"unspecified 0.0.0.0/8", []string{"0.0.0.0", "0.1.2.3", "0.255.255.255"}},
	{"private 10/8", []string{"10.0.0.0", "10.0.0.1", "10.1.2.3", "10.255.255.255"}},
	{"CGNAT 100.64/10", []string{"100.64.0.0", "100.100.100.200", "100.127.255.255"}},
	{"loopback 127/8", []string{"127.0.0.1", "127.0.0.0", "127.1.2.3", "127.255.255.255"}},
	{"link-local 169.254/16", []string{"169.254.169.254", "169.254.0.1", "169.254.170.2", "169.254.255.255"}},
	{"private 172.16/12", []string{"172.16.0.0", "172.16.0.1", "172.20.10.5", "172.31.255.255"}},
	{"IETF protocol assignments 192.0.0/24", []string{"192.0.0.0", "192.0.0.9", "192.0.0.170", "192.0.0.255"}},
	{"documentation 192.0.2/24", []string{"192.0.2.0", "192.0.2.1", "192.0.2.255"}},
	{"AS112 192.31.196/24", []string{"192.31.196.1"}},
	{"AMT 192.52.193/24", []string{"192.52.193.1"}},
	{"6to4 relay 192.88.99/24", []string{"192.88.99.0", "192.88.99.1", "192.88.99.255"}},
	{"private 192.168/16", []string{"192.168.0.0", "192.168.1.1", "192.168.255.255"}},
	{"AS112 direct 192.175.48/24", []string{"192.175.48.1"}},
	{"benchmarking 198.18/15", []string{"198.18.0.0", "198.18.0.1", "198.19.255.255"}},
	{"documentation 198.51.100/24", []string{"198.51.100.0", "198.51.100.7", "198.51.100.255"}},
	{"documentation 203.0.113/24", []string{"203.0.113.0", "203.0.113.99", "203.0.113.255"}},
	{"multicast 224/4", []string{"224.0.0.0", "224.0.0.1", "233.1.2.3", "239.255.255.250", "239.255.255.255"}},
	{"reserved 240/4", []string{"240.0.0.0", "240.0.0.1", "250.1.2.3", "255.255.255.254"}},
	{"broadcast", []string{"255.255.255.255"}},

	{"unspecified ::", []string{"::"}},
	{"loopback ::1", []string{"::1"}},
	{"IPv4-mapped, private IPv4", []string{"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0", "::ffff:255.255.255.255"}},
	{"IPv4-compatible, private IPv4", []string{"::127.0.0.1", "::10.0.0.1", "::169.254.169.254", "::0.0.0.2"}},
	{"IPv4-translated, private IPv4", []string{"::ffff:0:127.0.0.1", "::ffff:0:10.1.2.3"}},
	{"NAT64 64:ff9b::/96, private IPv4", []string{"64:ff9b::127.0.0.1", "64:ff9b::10.0.0.1", "64:ff9b::169.254.169.254", "64:ff9b::192.168.0.1"}},
	{"NAT64 local-use 64:ff9b:1::/48", []string{"64:ff9b:1::10.0.0.1", "64:ff9b:1::127.0.0.1", "64:ff9b:1:7f00:0:100::", "64:ff9b:1::8.8.8.8", "64:ff9b:1:ffff::1"}},
	{"NAT64 outside the assigned prefixes", []string{"64:ff9b:2::8.8.8.8", "64:ff9b:0:1::8.8.8.8"}},
	{"6to4 2002::/16, private IPv4", []string{"2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::1", "2002:a9fe:a9fe::1", "2002::1"}},
	{"Teredo 2001::/32", []string{"2001::", "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff"}},
	{"IETF protocol assignments 2001::/23", []string{"2001:1::1", "2001:1::2", "2001:2::1", "2001:3::1", "2001:1ff:ffff::1"}},
	{"ORCHID 2001:10::/28 and ORCHIDv2 2001:20::/28", []string{"2001:10::1", "2001:1f::1", "2001:20::1", "2001:2f::1"}},
	{"documentation 2001:db8::/32", []string{"2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"}},
	{"documentation 3fff::/20", []string{"3fff::", "3fff::1", "3fff:fff:ffff::1"}},
	{"AS112 2620:4f:8000::/48", []string{"2620:4f:8000::1"}},
	{"discard 100::/64", []string{"100::", "100::1", "100::ffff:ffff:ffff:ffff"}},
	{"dummy prefix 100:0:0:1::/64", []string{"100:0:0:1::1"}},
	{"SRv6 SIDs 5f00::/16", []string{"5f00::1"}},
	{"unique-local fc00::/7", []string{"fc00::", "fc00::1", "fd00::1", "fd00:ec2::254", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},
	{"link-local fe80::/10", []string{"fe80::", "fe80::1", "fe80::a9fe:a9fe", "febf:ffff::1"}},
	{"site-local fec0::/10", []string{"fec0::", "fec0::1", "feff:ffff::1"}},
	{"multicast ff00::/8", []string{"ff00::", "ff02::1", "ff05::2", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},
	{"reserved outside 2000::/3", []string{"1::1", "4000::1", "8000::1", "e000::1", "::1:0:0:1"}},
}

// publicAddrs are addresses deliveries may reach, many of them just outside
// a refused range.
var publicAddrs = []string{
	"93.184.216.34", "8.8.8.8", "1.1.1.1", "1.0.0.0", "9.255.255.255", "11.0.0.0",
	"100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
	"169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
	"192.0.1.255", "192.0.3.0", "192.88.98.255", "192.88.100.0", "192.167.255.255", "192.169.0.0",
	"198.17.255.255", "198.20.0.0", "198.51.99.255", "198.51.101.0", "203.0.112.255", "203.0.114.0",
	"223.255.255.255",
	"2606:2800:220:1::1", "2001:4860:4860::8888", "2a00:1450:4001:80b::200e", "2000::1",
	"2001:200::1", "2001:db7:ffff::1", "2001:db9::1", "3ffe::1", "3fff:1000::1", "3fff:ffff::1",
	"2620:4f:7fff::1", "2620:4f:8001::1",
	"::ffff:8.8.8.8", "::ffff:93.184.216.34", "::8.8.8.8", "::ffff:0:8.8.8.8",
	"64:ff9b::8.8.8.8", "64:ff9b::93.184.216.34", "2002:808:808::1", "2002:5db8:d822::1",
}

func TestAllowed(t *testing.T) {
	var g Guard
	for _, r := range refusedRanges {
		for _, s := range r.addrs {
			if got := g.Allowed(netip.MustParseAddr(s)); got {
				t.Errorf("Allowed(%s) [%s] = true; want false", s, r.name)
			}
		}
	}
	for _, s := range publicAddrs {
		if got := g.Allowed(netip.MustParseAddr(s)); !got {
			t.Errorf("Allowed(%s) = false; want true", s)
		}
	}

	tests := []struct {
		allow []netip.Prefix
		addr  string
		want  bool
	}{
		{nil, "", false}, // the zero Addr
		{nil, "2606:2800:220:1::1%eth0", false},
		{nil, "fe80::1%eth0", false},
		{prefixes("10.0.0.0/8"), "10.1.2.3", true},
		{prefixes("10.0.0.0/8"), "::ffff:10.1.2.3", true},
		{prefixes("10.0.0.0/8"), "11.0.0.1", true}, // public anyway
		{prefixes("10.0.0.0/8"), "192.168.1.1", false},
		{prefixes("10.0.0.0/8"), "127.0.0.1", false},
		{prefixes("10.0.0.0/8"), "64:ff9b::10.1.2.3", false}, // a translator's address is not the operator's network
		{prefixes("10.0.0.0/8"), "2002:a01:203::1", false},
		{prefixes("::ffff:10.0.0.0/104"), "10.1.2.3", true},
		{prefixes("::ffff:10.0.0.0/104"), "::ffff:10.1.2.3", true},
		{prefixes("::ffff:10.0.0.0/104"), "11.1.2.3", true}, // public anyway
		{prefixes("::ffff:10.0.0.0/104"), "192.168.1.1", false},
		{prefixes("127.0.0.0/8"), "127.0.0.1", true},
		{prefixes("fd00::/8"), "fd00::1", true},
		{prefixes("fd00::/8"), "fc00::1", false},
		{prefixes("fe80::/10"), "fe80::1%eth0", false},
		{[]netip.Prefix{{}}, "10.0.0.1", false}, // a zero Prefix allows nothing
	}
	for _, tt := range tests {
		g := Guard{AllowCIDRs: tt.allow}
		var a netip.Addr
		if tt.addr != "" {
			a = netip.MustParseAddr(tt.addr)
		}
		if got := g.Allowed(a); got != tt.want {
			t.Errorf("Guard{AllowCIDRs: %v}.Allowed(%s) = %v; want %v", tt.allow, tt.addr, got, tt.want)
		}
	}
}

// literal is one way of writing an address as a URL host.
type literal struct {
	notation string
	host     string     // as written in the URL
	addr     netip.Addr // the address it denotes
}

// v4Literals writes a in every notation people use to slip an IPv4 address
// past a parser.
func v4Literals(a netip.Addr) []literal {
	b := a.As4()
	n := binary.BigEndian.Uint32(b[:])
	dotted := a.String()
	octal := fmt.Sprintf("0%o.0%o.0%o.0%o", b[0], b[1], b[2], b[3])
	var v6 [16]byte
	v6[10], v6[11] = 0xff, 0xff
	copy(v6[12:], b[:])
	mapped := netip.AddrFrom16(v6)
	v6[10], v6[11] = 0, 0
	compat := netip.AddrFrom16(v6)
	nat64 := netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 12: b[0], b[1], b[2], b[3]})
	sixToFour := netip.AddrFrom16([16]byte{0x20, 0x02, b[0], b[1], b[2], b[3], 15: 1})
	return []literal{
		{"dotted", dotted, a},
		{"dotted, trailing dot", dotted + ".", a},
		{"decimal", fmt.Sprint(n), a},
		{"decimal, trailing dot", fmt.Sprint(n) + ".", a},
		{"hex", fmt.Sprintf("0x%x", n), a},
		{"hex, upper case, padded", fmt.Sprintf("0X%08X", n), a},
		{"hex, leading zeros", fmt.Sprintf("0x0000000000%x", n), a},
		{"dotted hex", fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", b[0], b[1], b[2], b[3]), a},
		{"dotted octal", octal, a},
		{"dotted octal, extra zeros", fmt.Sprintf("000%o.000%o.000%o.000%o", b[0], b[1], b[2], b[3]), a},
		{"short a.b.c", fmt.Sprintf("%d.%d.%d", b[0], b[1], uint16(b[2])<<8|uint16(b[3])), a},
		{"short a.b", fmt.Sprintf("%d.%d", b[0], n&0xffffff), a},
		{"mixed hex, octal, decimal", fmt.Sprintf("0x%x.0%o.%d", b[0], b[1], uint16(b[2])<<8|uint16(b[3])), a},
		{"mixed, trailing dot", fmt.Sprintf("0%o.0x%x.%d.%d.", b[0], b[1], b[2], b[3]), a},
		{"full-width digits and dots", fullWidth(dotted), a},
		{"ideographic full stops", strings.ReplaceAll(dotted, ".", "。"), a},
		{"percent-encoded full-width", percentEncode(fullWidth(dotted)), a},
		{"IPv4-mapped IPv6", "[::ffff:" + dotted + "]", mapped},
		{"IPv4-mapped IPv6, hex", fmt.Sprintf("[::ffff:%x:%x]", n>>16, n&0xffff), mapped},
		{"IPv4-mapped IPv6, expanded, upper case", "[0:0:0:0:0:FFFF:" + dotted + "]", mapped},
		{"IPv4-compatible IPv6", "[::" + dotted + "]", compat},
		{"NAT64 64:ff9b::/96", "[64:ff9b::" + dotted + "]", nat64},
		{"6to4 2002::/16", "[" + sixToFour.String() + "]", sixToFour},
	}
}

// v6Literals writes a in the notations of IPv6 literals, with a zone id for
// the link-local ones.
func v6Literals(a netip.Addr) []literal {
	ls := []literal{
		{"compressed", "[" + a.String() + "]", a},
		{"expanded", "[" + a.StringExpanded() + "]", a},
		{"expanded, upper case", "[" + strings.ToUpper(a.StringExpanded()) + "]", a},
	}
	if a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		ls = append(ls, literal{"zone id", "[" + a.String() + "%25eth0]", a.WithZone("eth0")})
	}
	return ls
}

func fullWidth(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case '0' <= r && r <= '9':
			return '０' + r - '0'
		case r == '.':
			return '．'
		}
		return r
	}, s)
}

func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			fmt.Fprintf(&b, "%%%02X", s[i])
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// dialHost is the host a transport would hand DialContext for a URL host.
func dialHost(urlHost string) string {
	h, err := url.PathUnescape(strings.Trim(urlHost, "[]"))
	if err != nil {
		panic(err)
	}
	return h
}

func canonicalURL(a netip.Addr) string {
	if a.Is4() {
		return "https://" + a.String() + "/"
	}
	return "https://[" + a.String() + "]/"
}

// TestSSRF checks every refused range in every notation: as an IP literal in
// a URL, as an address handed to DialContext, and as what a name resolves to.
// CheckURL and DialContext must both refuse, and nothing may reach the base
// dialer. With the address itself in AllowCIDRs the same literal must be
// accepted and normalized to that exact address, which proves each notation
// is read as the address it really names.
func TestSSRF(t *testing.T) {
	ctx := context.Background()
	for _, r := range refusedRanges {
		for _, s := range r.addrs {
			a := netip.MustParseAddr(s)
			t.Run(r.name+"/"+s, func(t *testing.T) {
				res := newResolver().
					set("target.example.com", s).
					set("xn--bcher-kva.example.co.uk", "93.184.216.34", s)
				g := &Guard{Resolver: res}
				for _, name := range []string{"target.example.com", "bücher.example.co.uk"} {
					raw := "https://" + name + "/hook"
					_, err := g.CheckURL(ctx, raw)
					wantURLError(t, fmt.Sprintf("CheckURL(%q)", raw), err, "private_address", "private or reserved address")
					if err != nil && strings.Contains(err.(*checkout.Error).Message, s) {
						t.Errorf("CheckURL(%q) message %q shows the resolved address", raw, err.(*checkout.Error).Message)
					}
				}
				for _, network := range []string{"tcp", "tcp4", "tcp6"} {
					want := 1
					if (network == "tcp4" && !(a.Is4() || a.Is4In6())) || (network == "tcp6" && (a.Is4() || a.Is4In6())) {
						want = 0 // filtered by family: not found rather than refused
					}
					err, dialed := dialThrough(g, network, "target.example.com:443")
					if err == nil || len(dialed) > 0 {
						t.Errorf("DialContext(%s, target.example.com:443) = %v, dialed %v; want refused, nothing dialed", network, err, dialed)
					}
					if want == 1 && !errors.Is(err, errRefused) {
						t.Errorf("DialContext(%s, target.example.com:443) = %v; want a refusal (errRefused)", network, err)
					}
					if err != nil && strings.Contains(err.Error(), s) {
						t.Errorf("DialContext(%s, target.example.com:443) = %q; shows the resolved address", network, err)
					}
				}

				lits := v6Literals(a)
				if a.Is4() {
					lits = v4Literals(a)
				}
				for _, l := range lits {
					raw := "https://" + l.host + "/"
					_, err := g.CheckURL(ctx, raw)
					wantURLError(t, fmt.Sprintf("CheckURL(%q) [%s]", raw, l.notation), err, "invalid_url", "not an IP address")
					address := net.JoinHostPort(dialHost(l.host), "443")
					if err, dialed := dialThrough(g, "tcp", address); err == nil || len(dialed) > 0 {
						t.Errorf("DialContext(tcp, %q) [%s] = %v, dialed %v; want refused, nothing dialed", address, l.notation, err, dialed)
					}

					relaxed := &Guard{Resolver: res, AllowCIDRs: []netip.Prefix{netip.PrefixFrom(l.addr.WithZone(""), l.addr.BitLen())}}
					got, err := relaxed.CheckURL(ctx, raw)
					if l.addr.Zone() != "" {
						// A zone is never allowed, not even inside AllowCIDRs.
						wantURLError(t, fmt.Sprintf("allowing %s: CheckURL(%q)", l.addr, raw), err, "invalid_url", "not an IP address")
						continue
					}
					if want := canonicalURL(l.addr); got != want || err != nil {
						t.Errorf("allowing %s: CheckURL(%q) [%s] = %q, %v; want %q, nil", l.addr, raw, l.notation, got, err, want)
					}
					if strings.ContainsFunc(address, func(r rune) bool { return r > 0x7f }) {
						continue // a transport only hands DialContext what CheckURL normalized
					}
					want := []string{net.JoinHostPort(l.addr.String(), "443")}
					if err, dialed := dialThrough(relaxed, "tcp", address); err != nil || !slices.Equal(dialed, want) {
						t.Errorf("allowing %s: DialContext(tcp, %q) [%s] = %v, dialed %v; want nil, %v", l.addr, address, l.notation, err, dialed, want)
					}
				}
			})
		}
	}
}

func TestParseIPv4Loose(t *testing.T) {
	tests := []struct {
		host string
		want string // "" when not an IPv4 address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"127.65535", "127.0.255.255"},
		{"127.16777215", "127.255.255.255"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"1.2.3.0x", "1.2.3.0"},
		{"4294967295", "255.255.255.255"},
		{"0xffffffff", "255.255.255.255"},
		{"037777777777", "255.255.255.255"},
		{"4294967296", ""},
		{"0x100000000", ""},
		{"256.0.0.1", ""},
		{"1.2.3.256", ""},
		{"1.2.65536", ""},
		{"1.16777216", ""},
		{"1.2.3.4.5", ""},
		{"08.0.0.1", ""},
		{"0x7g.0.0.1", ""},
		{"1..2.3", ""},
		{"", ""},
		{".", ""},
		{"example.com", ""},
		{"99999999999999999999999", ""},
	}
	for _, tt := range tests {
		a, ok := parseIPv4Loose(tt.host)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("parseIPv4Loose(%q) = %q; want %q", tt.host, got, tt.want)
		}
	}
}

func TestCheckURLAccepted(t *testing.T) {
	res := newResolver()
	for _, name := range []string{
		"hooks.example.com", "example.co.uk", "xn--bcher-kva.example.com", "xn--mnchen-3ya.de",
		"xn--e1afmkfd.xn--p1ai", "foo.github.io", "my_hooks.example.com", "localhost.example.com",
		"0x7f.example.com", "127.0.0.1.example.com", "api.example.com.au", "a-b.example.io",
	} {
		res.set(name, "93.184.216.34", "2606:2800:220:1::1")
	}
	g := &Guard{Resolver: res}
	long := "https://hooks.example.com/" + strings.Repeat("a", maxURLLen-len("https://hooks.example.com/"))

	tests := []struct {
		raw, want string
	}{
		{"https://hooks.example.com/x", "https://hooks.example.com/x"},
		{"https://example.co.uk:443/p?q=1", "https://example.co.uk/p?q=1"},
		{"https://bücher.example.com/", "https://xn--bcher-kva.example.com/"},
		{"https://BÜCHER.example.com/", "https://xn--bcher-kva.example.com/"},
		{"https://xn--bcher-kva.example.com/", "https://xn--bcher-kva.example.com/"},
		{"https://b%C3%BCcher.example.com/", "https://xn--bcher-kva.example.com/"},
		{"https://münchen.de/hook", "https://xn--mnchen-3ya.de/hook"},
		{"https://пример.рф/", "https://xn--e1afmkfd.xn--p1ai/"},
		{"https://ｈｏｏｋｓ．ｅｘａｍｐｌｅ．ｃｏｍ/", "https://hooks.example.com/"},
		{"https://hooks。example。com/", "https://hooks.example.com/"},
		{"HTTPS://Hooks.EXAMPLE.com./Path?Q=1", "https://hooks.example.com/Path?Q=1"},
		{"https://hooks.example.com./x", "https://hooks.example.com/x"},
		{"https://hooks.example.com:/x", "https://hooks.example.com/x"},
		{"https://hooks.example.com", "https://hooks.example.com"},
		{"https://hooks.example.com/?", "https://hooks.example.com/?"},
		{"https://hooks.example.com/a%20b/c?x=%2F&y", "https://hooks.example.com/a%20b/c?x=%2F&y"},
		{"https://hooks.example.com/ünicode", "https://hooks.example.com/%C3%BCnicode"},
		{"https://hooks.example.com:0443/x", "https://hooks.example.com/x"},
		{"https://hooks.example.com/?next=http://127.0.0.1/", "https://hooks.example.com/?next=http://127.0.0.1/"},
		{"https://hooks.example.com/@evil.internal", "https://hooks.example.com/@evil.internal"},
		{"https://foo.github.io/hook", "https://foo.github.io/hook"},
		{"https://my_hooks.example.com/", "https://my_hooks.example.com/"},
		{"https://localhost.example.com/", "https://localhost.example.com/"},
		{"https://0x7f.example.com/", "https://0x7f.example.com/"},
		{"https://127.0.0.1.example.com/", "https://127.0.0.1.example.com/"},
		{"https://api.example.com.au/v1/hooks", "https://api.example.com.au/v1/hooks"},
		{"https://a-b.example.io/", "https://a-b.example.io/"},
		{long, long},
	}
	for _, tt := range tests {
		got, err := g.CheckURL(context.Background(), tt.raw)
		if got != tt.want || err != nil {
			t.Errorf("CheckURL(%q) = %q, %v; want %q, nil", tt.raw, got, err, tt.want)
		}
	}
}

func TestCheckURLRefused(t *testing.T) {
	res := newResolver()
	for _, name := range []string{"hooks.example.com", "co.uk", "hooks.example.cromulent", "localhost", "hooks.internal", "server"} {
		res.set(name, "93.184.216.34")
	}
	res.set("empty.example.com")
	res.set("private.example.com", "10.0.0.1")
	res.errs["timeout.example.com"] = &net.DNSError{Err: "i/o timeout", Name: "timeout.example.com", Server: "10.0.0.2:53", IsTimeout: true}
	res.errs["broken.example.com"] = &net.DNSError{Err: "server misbehaving", Name: "broken.example.com", Server: "10.0.0.2:53"}
	g := &Guard{Resolver: res}

	tests := []struct {
		raw, code, msg string
	}{
		{"http://hooks.example.com/x", "invalid_url", "must use https, not http"},
		{"HTTP://hooks.example.com/x", "invalid_url", "must use https, not http"},
		{"ftp://hooks.example.com/x", "invalid_url", "must use https, not ftp"},
		{"wss://hooks.example.com/x", "invalid_url", "must use https"},
		{"file:///etc/passwd", "invalid_url", "must have a host name"},
		{"gopher://hooks.example.com:70/", "invalid_url", "must use https"},
		{"https://hooks.example.com:8443/x", "invalid_url", "default https port (443), not 8443"},
		{"https://hooks.example.com:80/x", "invalid_url", "not 80"},
		{"https://hooks.example.com:0/x", "invalid_url", "invalid port"},
		{"https://hooks.example.com:65536/x", "invalid_url", "invalid port"},
		{"https://hooks.example.com:99999999999999999999/x", "invalid_url", "invalid port"},
		{"https://user:secret@hooks.example.com/", "invalid_url", "user name or password"},
		{"https://user@hooks.example.com/", "invalid_url", "user name or password"},
		{"https://@hooks.example.com/", "invalid_url", "user name or password"},
		{"https://hooks.example.com/x#frag", "invalid_url", "fragment"},
		{"https://hooks.example.com/#", "invalid_url", "fragment"},
		{"https://hooks.example.com/?next=http://localhost:8080/#", "invalid_url", "fragment"},
		{"https://hooks.example.com/" + strings.Repeat("a", maxURLLen-len("https://hooks.example.com/")+1), "too_long", "at most 2048 characters; it has 2049"},
		{"https://hooks.example.com/" + strings.Repeat("ü", maxURLLen), "too_long", "at most 2048 characters"},
		{"https://hooks.example.com/" + strings.Repeat("ü", 700), "too_long", "once normalized"},
		{"", "invalid_url", "must not be empty"},
		{"   ", "invalid_url", "must not be empty"},
		{"https://hooks.example.com/a b", "invalid_url", "spaces or control characters"},
		{"https://hooks.example.com/\x00", "invalid_url", "spaces or control characters"},
		{"https://hooks.example.com/\n", "invalid_url", "spaces or control characters"},
		{" https://hooks.example.com/", "invalid_url", "spaces or control characters"},
		{"https://hooks.example.com\u00a0/", "invalid_url", "spaces or control characters"},
		{"https:///x", "invalid_url", "must have a host name"},
		{"https://", "invalid_url", "must have a host name"},
		{"https://:443/", "invalid_url", "must have a host name"},
		{"https://./", "invalid_url", "not a valid host name"},
		{"https:hooks.example.com/x", "invalid_url", "must have a host name"},
		{"//hooks.example.com/x", "invalid_url", "absolute URL"},
		{"hooks.example.com/x", "invalid_url", "absolute URL"},
		{"/x", "invalid_url", "absolute URL"},
		{"https://hooks.example.com%2F@evil/", "invalid_url", "user name or password"},
		{"https://evil.example\\@hooks.example.com/", "invalid_url", "not a valid URL"},
		{"https://[::1/", "invalid_url", "not a valid URL"},
		{"https://%65xample.com/", "invalid_url", "not a valid URL"},
		{"https://co.uk/", "invalid_url", "co.uk is a public suffix, not a domain"},
		{"https://com/", "invalid_url", "com is a public suffix"},
		{"https://hooks.example.cromulent/", "invalid_url", "not under a public top-level domain"},
		{"https://hooks.example.zzz/", "invalid_url", "not under a public top-level domain"},
		{"https://server/", "invalid_url", "not under a public top-level domain"},
		{"https://localhost/", "invalid_url", "localhost is a private name"},
		{"https://LOCALHOST./", "invalid_url", "localhost is a private name"},
		{"https://localhost:443/", "invalid_url", "private name"},
		{"https://api.localhost/", "invalid_url", "private name"},
		{"https://hooks.internal/", "invalid_url", "private name"},
		{"https://metadata.google.internal/computeMetadata/v1/", "invalid_url", "private name"},
		{"https://host.docker.internal/", "invalid_url", "private name"},
		{"https://printer.local/", "invalid_url", "private name"},
		{"https://kubernetes.default.svc.cluster.local/", "invalid_url", "private name"},
		{"https://nas.lan/", "invalid_url", "private name"},
		{"https://router.home.arpa/", "invalid_url", "private name"},
		{"https://1.0.0.127.in-addr.arpa/", "invalid_url", "private name"},
		{"https://x.corp/", "invalid_url", "private name"},
		{"https://wiki.intranet/", "invalid_url", "private name"},
		{"https://db.localdomain/", "invalid_url", "private name"},
		{"https://hooks.test/", "invalid_url", "private name"},
		{"https://bücher.example/", "invalid_url", "private name"},
		{"https://hooks.invalid/", "invalid_url", "private name"},
		{"https://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/", "invalid_url", "private name"},
		{"https://93.184.216.34/", "invalid_url", "not an IP address"},
		{"https://[2606:2800:220:1::1]/", "invalid_url", "not an IP address"},
		{"https://[::ffff:8.8.8.8]/", "invalid_url", "not an IP address"},
		{"https://1.2.3.4.5/", "invalid_url", "neither a host name nor a valid IP address"},
		{"https://256.256.256.256/", "invalid_url", "neither a host name nor a valid IP address"},
		{"https://0x100000000/", "invalid_url", "neither a host name nor a valid IP address"},
		{"https://08.0.0.1/", "invalid_url", "neither a host name nor a valid IP address"},
		{"https://hooks.example.1/", "invalid_url", "neither a host name nor a valid IP address"},
		{"https://-hooks.example.com/", "invalid_url", "not a valid host name"},
		{"https://hooks-.example.com/", "invalid_url", "not a valid host name"},
		{"https://a..example.com/", "invalid_url", "not a valid host name"},
		{"https://hooks.example.com../", "invalid_url", "not a valid host name"},
		{"https://exa!mple.com/", "invalid_url", "not a valid host name"},
		{"https://exa$mple.com/", "invalid_url", "not a valid host name"},
		{"https://" + strings.Repeat("a", 64) + ".example.com/", "invalid_url", "not a valid host name"},
		{"https://" + strings.Repeat("abcdefghi.", 26) + "example.com/", "invalid_url", "not a valid host name"},
		{"https://xn--a.example.com/", "invalid_url", "not a valid host name"},
		{"https://[notanip]/", "invalid_url", "not a valid"},
		{"https://unknown.example.com/", "resolve_failed", "unknown.example.com could not be resolved: no such host"},
		{"https://empty.example.com/", "resolve_failed", "it has no addresses"},
		{"https://timeout.example.com/", "resolve_failed", "the lookup timed out"},
		{"https://broken.example.com/", "resolve_failed", "the lookup failed"},
		{"https://private.example.com/", "private_address", "private.example.com resolves to a private or reserved address"},
		{"http://user@localhost:8080/#x", "invalid_url", "(5 problems in all; see details.)"},
		{"http://hooks.example.com:8080/", "invalid_url", "(2 problems in all; see details.)"},
	}
	for _, tt := range tests {
		got, err := g.CheckURL(context.Background(), tt.raw)
		if got != "" {
			t.Errorf("CheckURL(%q) = %q; want \"\"", tt.raw, got)
		}
		wantURLError(t, fmt.Sprintf("CheckURL(%q)", tt.raw), err, tt.code, tt.msg)
		if msg := checkout.ErrorMessage(err); strings.Contains(msg, "10.0.0") {
			t.Errorf("CheckURL(%q) message %q shows the operator's network", tt.raw, msg)
		}
	}
}

func TestCheckURLCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := newResolver()
	res.errs["hooks.example.com"] = ctx.Err()
	_, err := (&Guard{Resolver: res}).CheckURL(ctx, "https://hooks.example.com/")
	wantURLError(t, "CheckURL(canceled)", err, "resolve_failed", "canceled")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("CheckURL(canceled) = %v; want it to wrap context.Canceled", err)
	}
}

// TestRebinding: a name that was public at registration and is private at
// delivery is refused at delivery, as is a name with any private address.
func TestRebinding(t *testing.T) {
	tests := []struct {
		name       string
		registered []string
		delivered  []string
	}{
		{"public then loopback", []string{"93.184.216.34"}, []string{"127.0.0.1"}},
		{"public then metadata", []string{"93.184.216.34"}, []string{"169.254.169.254"}},
		{"public then private IPv6", []string{"2606:2800:220:1::1"}, []string{"fd00::1"}},
		{"public then mapped loopback", []string{"93.184.216.34"}, []string{"::ffff:127.0.0.1"}},
		{"public then public and private", []string{"93.184.216.34"}, []string{"93.184.216.34", "10.0.0.1"}},
		{"public then private and public", []string{"93.184.216.34"}, []string{"10.0.0.1", "93.184.216.34"}},
		{"public then IPv4 public, IPv6 loopback", []string{"93.184.216.34"}, []string{"93.184.216.34", "::1"}},
	}
	for _, tt := range tests {
		res := newResolver().set("rebind.example.com", tt.registered...)
		g := &Guard{Resolver: res}
		got, err := g.CheckURL(context.Background(), "https://rebind.example.com/hook")
		if want := "https://rebind.example.com/hook"; got != want || err != nil {
			t.Errorf("%s: CheckURL = %q, %v; want %q, nil", tt.name, got, err, want)
		}
		res.set("rebind.example.com", tt.delivered...)
		err, dialed := dialThrough(g, "tcp", "rebind.example.com:443")
		if !errors.Is(err, errRefused) || len(dialed) > 0 {
			t.Errorf("%s: DialContext = %v, dialed %v; want refused, nothing dialed", tt.name, err, dialed)
		}
		if err != nil && !strings.Contains(err.Error(), "rebind.example.com") {
			t.Errorf("%s: DialContext = %q; want it to name the host", tt.name, err)
		}
	}
}

func TestMixedAnswersRefused(t *testing.T) {
	for _, addrs := range [][]string{
		{"93.184.216.34", "10.0.0.1"},
		{"10.0.0.1", "93.184.216.34"},
		{"2606:2800:220:1::1", "::1"},
		{"93.184.216.34", "::ffff:127.0.0.1"},
		{"93.184.216.34", "93.184.216.34", "169.254.169.254"},
		{"93.184.216.34", "2606:2800:220:1::1", "fe80::1"},
	} {
		g := &Guard{Resolver: newResolver().set("mixed.example.com", addrs...)}
		_, err := g.CheckURL(context.Background(), "https://mixed.example.com/")
		wantURLError(t, fmt.Sprintf("CheckURL resolving to %v", addrs), err, "private_address", "private or reserved")
		if err, dialed := dialThrough(g, "tcp", "mixed.example.com:443"); !errors.Is(err, errRefused) || len(dialed) > 0 {
			t.Errorf("DialContext resolving to %v = %v, dialed %v; want refused, nothing dialed", addrs, err, dialed)
		}
	}
}

func TestDialContext(t *testing.T) {
	res := newResolver().
		set("hooks.example.com", "93.184.216.34", "2606:2800:220:1::1").
		set("twice.example.com", "93.184.216.34", "93.184.216.34").
		set("v4only.example.com", "93.184.216.34").
		set("empty.example.com")
	res.errs["timeout.example.com"] = &net.DNSError{Err: "i/o timeout", Name: "timeout.example.com", Server: "10.0.0.2:53", IsTimeout: true}
	g := &Guard{Resolver: res}

	tests := []struct {
		network, address string
		want             []string // addresses dialed
		wantErr          string   // substring of the error; "" for success
	}{
		{"tcp", "hooks.example.com:443", []string{"93.184.216.34:443"}, ""},
		{"tcp4", "hooks.example.com:443", []string{"93.184.216.34:443"}, ""},
		{"tcp6", "hooks.example.com:443", []string{"[2606:2800:220:1::1]:443"}, ""},
		{"tcp", "twice.example.com:443", []string{"93.184.216.34:443"}, ""},
		{"tcp", "93.184.216.34:443", []string{"93.184.216.34:443"}, ""},
		{"tcp", "[2606:2800:220:1::1]:443", []string{"[2606:2800:220:1::1]:443"}, ""},
		{"tcp", "1572395042:443", []string{"93.184.216.34:443"}, ""},
		{"tcp6", "v4only.example.com:443", nil, "could not resolve v4only.example.com: it has no addresses"},
		{"tcp", "empty.example.com:443", nil, "could not resolve empty.example.com: it has no addresses"},
		{"tcp", "unknown.example.com:443", nil, "could not resolve unknown.example.com: no such host"},
		{"tcp", "timeout.example.com:443", nil, "could not resolve timeout.example.com: the lookup timed out"},
		{"tcp", "127.0.0.1:443", nil, "refusing to connect to 127.0.0.1: not a public address"},
		{"tcp", "[::1]:443", nil, "refusing to connect to ::1"},
		{"tcp", "[fe80::1%eth0]:443", nil, "refusing to connect"},
		{"tcp", "[2606:2800:220:1::1%eth0]:443", nil, "refusing to connect"},
		{"tcp", "0x7f000001:443", nil, "refusing to connect to 0x7f000001"},
		{"tcp", "1.2.3.4.5:443", nil, "not a valid host name or IP address"},
		{"tcp", ":443", nil, "empty host"},
		{"tcp", "hooks.example.com", nil, "invalid address"},
		{"tcp", "hooks.example.com:https", nil, "invalid port"},
		{"tcp", "hooks.example.com:0", nil, "invalid port"},
		{"tcp", "hooks.example.com:65536", nil, "invalid port"},
		{"udp", "hooks.example.com:443", nil, `refusing to dial network "udp"`},
		{"unix", "/var/run/docker.sock", nil, `refusing to dial network "unix"`},
	}
	for _, tt := range tests {
		err, dialed := dialThrough(g, tt.network, tt.address)
		if !slices.Equal(dialed, tt.want) {
			t.Errorf("DialContext(%s, %s) dialed %v; want %v", tt.network, tt.address, dialed, tt.want)
		}
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("DialContext(%s, %s) = %v; want nil", tt.network, tt.address, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("DialContext(%s, %s) = %v; want an error containing %q", tt.network, tt.address, err, tt.wantErr)
		case err != nil && strings.Contains(err.Error(), "10.0.0.2"):
			t.Errorf("DialContext(%s, %s) = %q; shows the resolver's address", tt.network, tt.address, err)
		}
	}
}

// TestDialContextTriesEachAddress: a failed connect moves on to the next
// allowed address; when all fail the first error is returned.
func TestDialContextTriesEachAddress(t *testing.T) {
	res := newResolver().set("hooks.example.com", "93.184.216.34", "2606:2800:220:1::1", "8.8.8.8")
	g := &Guard{Resolver: res}

	d := &recordingDialer{fail: map[string]bool{"93.184.216.34:443": true}}
	c, err := g.DialContext(d.dial)(context.Background(), "tcp", "hooks.example.com:443")
	if want := []string{"93.184.216.34:443", "[2606:2800:220:1::1]:443"}; err != nil || !slices.Equal(d.dialed(), want) {
		t.Errorf("DialContext with the first address down = %v, dialed %v; want nil, %v", err, d.dialed(), want)
	}
	if c != nil {
		c.Close()
	}

	d = &recordingDialer{fail: map[string]bool{"93.184.216.34:443": true, "[2606:2800:220:1::1]:443": true, "8.8.8.8:443": true}}
	_, err = g.DialContext(d.dial)(context.Background(), "tcp", "hooks.example.com:443")
	if want := "dial tcp 93.184.216.34:443: connection refused"; err == nil || err.Error() != want || len(d.dialed()) != 3 {
		t.Errorf("DialContext with every address down = %v, dialed %v; want %q after 3 tries", err, d.dialed(), want)
	}

	// A canceled context stops after the first failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d = &recordingDialer{fail: map[string]bool{"93.184.216.34:443": true}}
	_, err = g.DialContext(d.dial)(ctx, "tcp", "93.184.216.34:443")
	if err == nil || len(d.dialed()) != 1 {
		t.Errorf("DialContext canceled = %v, dialed %v; want an error after one try", err, d.dialed())
	}
}

// TestDialContextLooksUpAbsoluteNames: a public name is resolved with a
// trailing dot, so the resolver's search domains cannot complete it into an
// internal name; the operator's own names (allowed through AllowCIDRs) keep
// the search list.
func TestDialContextLooksUpAbsoluteNames(t *testing.T) {
	res := newResolver().set("hooks.example.com", "93.184.216.34").set("hookbox", "10.1.2.3")
	g := &Guard{Resolver: res, AllowCIDRs: prefixes("10.0.0.0/8")}
	for _, address := range []string{"hooks.example.com:443", "hookbox:8443", "Hooks.Example.COM:443", "hooks.example.com.:443"} {
		if err, _ := dialThrough(g, "tcp", address); err != nil {
			t.Fatalf("DialContext(tcp, %s) = %v; want nil", address, err)
		}
	}
	if want := []string{"ip hooks.example.com.", "ip hookbox", "ip hooks.example.com.", "ip hooks.example.com."}; !slices.Equal(res.asked, want) {
		t.Errorf("resolver asked %q; want %q", res.asked, want)
	}
}

func TestAllowCIDRs(t *testing.T) {
	ctx := context.Background()
	res := newResolver().
		set("hooks.corp.internal", "10.1.2.3").
		set("other.corp.internal", "192.168.1.1").
		set("mixed.corp.internal", "10.1.2.3", "192.168.1.1").
		set("v6.corp.internal", "fd00::10").
		set("hooks.example.com", "10.1.2.3").
		set("public.example.com", "93.184.216.34").
		set("localhost", "127.0.0.1", "::1").
		set("local4.example.com", "127.0.0.1").
		set("hookbox", "10.9.9.9")
	tests := []struct {
		allow    []netip.Prefix
		raw      string
		want     string // "" when refused
		wantMsg  string
		dialAddr string // with want: the host:port DialContext is handed, and
		dialed   string // what it must dial
	}{
		{prefixes("10.0.0.0/8"), "https://hooks.corp.internal:8443/x", "https://hooks.corp.internal:8443/x", "", "hooks.corp.internal:8443", "10.1.2.3:8443"},
		{prefixes("10.0.0.0/8"), "https://Hooks.Corp.Internal.:8443/x", "https://hooks.corp.internal:8443/x", "", "", ""},
		{prefixes("10.0.0.0/8"), "https://hooks.corp.internal:443/x", "https://hooks.corp.internal/x", "", "", ""},
		{prefixes("10.0.0.0/8"), "https://hookbox:9000/", "https://hookbox:9000/", "", "hookbox:9000", "10.9.9.9:9000"},
		{prefixes("10.0.0.0/8"), "https://hooks.example.com/", "https://hooks.example.com/", "", "hooks.example.com:443", "10.1.2.3:443"},
		{prefixes("10.0.0.0/8"), "https://hooks.example.com:8443/", "https://hooks.example.com:8443/", "", "", ""},
		{prefixes("10.0.0.0/8"), "https://10.1.2.3:8443/", "https://10.1.2.3:8443/", "", "10.1.2.3:8443", "10.1.2.3:8443"},
		{prefixes("10.0.0.0/8"), "https://012.1.2.3/", "https://10.1.2.3/", "", "", ""},
		{prefixes("10.0.0.0/8"), "https://167838211/", "https://10.1.2.3/", "", "167838211:443", "10.1.2.3:443"},
		{prefixes("10.0.0.0/8"), "https://[::ffff:10.1.2.3]:8443/", "https://[::ffff:10.1.2.3]:8443/", "", "[::ffff:10.1.2.3]:8443", "[::ffff:10.1.2.3]:8443"},
		{prefixes("10.0.0.0/8"), "https://other.corp.internal/x", "", "private name", "other.corp.internal:443", ""},
		{prefixes("10.0.0.0/8"), "https://mixed.corp.internal/x", "", "private name", "mixed.corp.internal:443", ""},
		{prefixes("10.0.0.0/8"), "https://unknown.corp.internal/x", "", "private name", "unknown.corp.internal:443", ""},
		{prefixes("10.0.0.0/8"), "https://public.example.com:8443/", "", "default https port", "", ""},
		{prefixes("10.0.0.0/8"), "https://192.168.1.1/", "", "not an IP address", "192.168.1.1:443", ""},
		{prefixes("10.0.0.0/8"), "https://127.0.0.1/", "", "not an IP address", "127.0.0.1:443", ""},
		{prefixes("10.0.0.0/8"), "https://localhost/", "", "private name", "localhost:443", ""},
		{prefixes("10.0.0.0/8"), "https://local4.example.com/", "", "private or reserved address", "local4.example.com:443", ""},
		{prefixes("10.0.0.0/8"), "http://hooks.corp.internal/", "", "must use https", "", ""},
		{prefixes("10.0.0.0/8"), "https://user@hooks.corp.internal/", "", "user name", "", ""},
		{prefixes("10.0.0.0/8"), "https://hooks.corp.internal/#x", "", "fragment", "", ""},
		{prefixes("10.0.0.0/8"), "https://10.1.2.3:0/", "", "invalid port", "", ""},
		{prefixes("10.0.0.0/8"), "https://[fe80::1%25eth0]/", "", "not an IP address", "", ""},
		{prefixes("10.0.0.0/8", "127.0.0.0/8"), "https://127.0.0.1:8080/", "https://127.0.0.1:8080/", "", "127.0.0.1:8080", "127.0.0.1:8080"},
		{prefixes("10.0.0.0/8", "127.0.0.0/8"), "https://local4.example.com/", "https://local4.example.com/", "", "local4.example.com:443", "127.0.0.1:443"},
		{prefixes("10.0.0.0/8", "127.0.0.0/8"), "https://localhost:3000/", "", "default https port", "localhost:3000", ""}, // ::1 is outside
		{prefixes("127.0.0.0/8", "::1/128"), "https://localhost:3000/", "https://localhost:3000/", "", "localhost:3000", "127.0.0.1:3000"},
		{prefixes("fd00::/8"), "https://v6.corp.internal:8443/", "https://v6.corp.internal:8443/", "", "v6.corp.internal:8443", "[fd00::10]:8443"},
		{prefixes("fe80::/10"), "https://[fe80::1%25eth0]/", "", "not an IP address", "[fe80::1%eth0]:443", ""},
		{nil, "https://hooks.corp.internal:8443/x", "", "default https port", "hooks.corp.internal:8443", ""},
		{nil, "https://hooks.example.com/", "", "private or reserved address", "hooks.example.com:443", ""},
	}
	for _, tt := range tests {
		g := &Guard{Resolver: res, AllowCIDRs: tt.allow}
		got, err := g.CheckURL(ctx, tt.raw)
		if tt.want != "" {
			if got != tt.want || err != nil {
				t.Errorf("AllowCIDRs %v: CheckURL(%q) = %q, %v; want %q, nil", tt.allow, tt.raw, got, err, tt.want)
			}
		} else {
			if got != "" || err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("AllowCIDRs %v: CheckURL(%q) = %q, %v; want an error containing %q", tt.allow, tt.raw, got, err, tt.wantMsg)
			}
		}
		if tt.dialAddr == "" {
			continue
		}
		err, dialed := dialThrough(g, "tcp", tt.dialAddr)
		var want []string
		if tt.dialed != "" {
			want = []string{tt.dialed}
		}
		if !slices.Equal(dialed, want) || (err == nil) != (tt.dialed != "") {
			t.Errorf("AllowCIDRs %v: DialContext(tcp, %s) = %v, dialed %v; want %v", tt.allow, tt.dialAddr, err, dialed, want)
		}
	}
}

// acceptOne returns the remote address of the next connection ln accepts.
func acceptOne(t *testing.T, ln net.Listener) string {
	t.Helper()
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	defer c.Close()
	return c.RemoteAddr().String()
}

// TestNetDialerControl: the Control hook refuses a private address even when
// NetDialer is called directly. A listener on 127.0.0.1 proves no connection
// was made: after the refused dial a plain one is made, and it is the first
// the listener accepts (the kernel queues connections in order).
func TestNetDialerControl(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx := context.Background()

	for _, address := range []string{ln.Addr().String(), "127.0.0.1:443", "[::ffff:127.0.0.1]:443", "0.0.0.0:443"} {
		c, err := (&Guard{}).NetDialer()(ctx, "tcp", address)
		if c != nil {
			c.Close()
		}
		if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "refusing to connect to a private or reserved address") {
			t.Errorf("NetDialer()(tcp, %s) = %v; want a refusal", address, err)
		}
	}
	plain, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if got, want := acceptOne(t, ln), plain.LocalAddr().String(); got != want {
		t.Errorf("first accepted connection came from %s; want %s (the plain dial): the refused dial connected", got, want)
	}

	allowed := &Guard{AllowCIDRs: prefixes("127.0.0.0/8")}
	c, err := allowed.NetDialer()(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("with 127.0.0.0/8 allowed, NetDialer()(tcp, %s) = %v; want a connection", ln.Addr(), err)
	}
	defer c.Close()
	if got, want := acceptOne(t, ln), c.LocalAddr().String(); got != want {
		t.Errorf("accepted connection from %s; want %s", got, want)
	}
}

// TestDeliveryEndToEnd puts the guard in a real transport in front of an
// httptest TLS receiver on loopback: refused by default, reached when the
// operator allows loopback, never by a production switch.
func TestDeliveryEndToEnd(t *testing.T) {
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	endpoint := "https://hooks.example.com:" + port + "/hook"

	post := func(g *Guard) (string, error) {
		tr := srv.Client().Transport.(*http.Transport).Clone()
		tr.Proxy = nil
		tr.DialContext = g.DialContext(g.NetDialer())
		tr.TLSClientConfig.ServerName = "example.com" // a name of httptest's certificate
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Post(endpoint, "application/json", strings.NewReader("{}"))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	res := newResolver().set("hooks.example.com", "127.0.0.1")
	if _, err := post(&Guard{Resolver: res}); err == nil || !strings.Contains(err.Error(), "refusing to connect to hooks.example.com") {
		t.Errorf("POST %s with the default guard = %v; want a refusal naming the host", endpoint, err)
	}
	mu.Lock()
	if hits != 0 {
		t.Errorf("receiver hit %d times; want 0", hits)
	}
	mu.Unlock()

	g := &Guard{Resolver: res, AllowCIDRs: prefixes("127.0.0.0/8")}
	if got, err := g.CheckURL(context.Background(), endpoint); got != endpoint || err != nil {
		t.Errorf("CheckURL(%q) with loopback allowed = %q, %v; want it unchanged", endpoint, got, err)
	}
	if got, err := post(g); got != "ok" || err != nil {
		t.Errorf("POST %s with loopback allowed = %q, %v; want \"ok\", nil", endpoint, got, err)
	}
}
