package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/checkoutd/checkoutd/checkout"
)

// Resolver looks up the addresses of a host. *net.Resolver satisfies it;
// tests inject their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var _ Resolver = (*net.Resolver)(nil)

// Guard decides which endpoint URLs and which network addresses webhook
// deliveries may reach. A merchant chooses the URL, so without it a webhook
// would let anyone make checkoutd send requests into the operator's network
// (SSRF). The zero Guard is the production policy: public addresses only,
// resolved with net.DefaultResolver. A Guard is safe for concurrent use as
// long as its fields are not changed.
type Guard struct {
	// Resolver resolves hostnames; net.DefaultResolver when nil.
	Resolver Resolver
	// AllowCIDRs are private networks the operator explicitly allows
	// (--webhook-allow-cidr); empty by default.
	AllowCIDRs []netip.Prefix
}

// maxURLLen is the longest endpoint URL, in characters, both as given and
// once normalized.
const maxURLLen = 2048

// Violation codes of CheckURL, in the Details of its *checkout.Error.
const (
	vInvalidURL     = "invalid_url"     // the URL breaks a rule that needs no lookup
	vTooLong        = "too_long"        // the URL is longer than maxURLLen
	vPrivateAddress = "private_address" // the host resolves to an address deliveries may not reach
	vResolveFailed  = "resolve_failed"  // the host could not be resolved
)

// CheckURL validates a merchant's endpoint URL at registration and returns it
// normalized (lower-case host, IDN converted to punycode, trailing dot
// removed). Errors are *checkout.Error.
//
// The rules: an absolute https URL of at most 2048 characters, on the default
// port, without user info or fragment, whose host is a name (not an IP
// address in any notation) under an ICANN public suffix with at least one
// label of its own, not a private or special-use name (localhost, .local,
// .internal, .lan, home.arpa, .corp and the like), and every address of which
// is Allowed. Problems that need no lookup are all reported at once, in
// Details, with the code validation_failed and Param "url"; a Details code is
// invalid_url, too_long, resolve_failed or private_address. Messages never
// show resolved addresses or the resolver's own error, which could describe
// the operator's network; Err keeps the cause for the log.
//
// A fragment is refused rather than stripped: it is never sent to the
// server, so a merchant who wrote one expects something that will not happen,
// and saying so is better than storing a different URL than the one given.
// An explicit :443 or an empty port is the default port and is dropped.
//
// Private networks: when the operator set AllowCIDRs and every address the
// host resolves to (or the IP literal, in any notation) lies inside them, the
// hostname, IP-literal and port rules are relaxed for that URL, because
// internal services are named and numbered the operator's way
// (https://hooks.corp.internal:8443/ resolving into an allowed 10.0.0.0/8 is
// accepted). The https, user-info, fragment and length rules still hold. An
// IP literal is then normalized to its canonical text.
func (g *Guard) CheckURL(ctx context.Context, raw string) (string, error) {
	if n := utf8.RuneCountInString(raw); n > maxURLLen {
		return "", urlError(vTooLong, fmt.Sprintf("url must be at most %d characters; it has %d.", maxURLLen, n), nil)
	}
	if strings.TrimSpace(raw) == "" {
		return "", urlError(vInvalidURL, "url must not be empty.", nil)
	}
	if strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", urlError(vInvalidURL, "url must not contain spaces or control characters.", nil)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", urlError(vInvalidURL, "url is not a valid URL.", err)
	}
	if u.Scheme == "" {
		return "", urlError(vInvalidURL, "url must be an absolute URL starting with https://.", nil)
	}
	if u.Opaque != "" || (u.Host == "" && u.User == nil) {
		return "", urlError(vInvalidURL, "url must have a host name, as in https://hooks.example.com/path.", nil)
	}

	// fixed holds the broken rules that AllowCIDRs never relaxes; relaxable
	// the host and port rules that it may.
	var fixed, relaxable violations
	if u.Scheme != "https" {
		fixed.add(vInvalidURL, fmt.Sprintf("url must use https, not %s.", u.Scheme))
	}
	if u.User != nil {
		fixed.add(vInvalidURL, "url must not contain a user name or password.")
	}
	if strings.Contains(raw, "#") {
		fixed.add(vInvalidURL, "url must not contain a fragment (#...); fragments are never sent to the server.")
	}
	port, portErr := checkPort(u.Port())
	if portErr != "" {
		fixed.add(vInvalidURL, portErr)
	} else if port != "" && port != "443" {
		relaxable.add(vInvalidURL, fmt.Sprintf("url must use the default https port (443), not %s.", port))
	}
	h, hostErr := parseHost(u.Hostname(), strings.HasPrefix(u.Host, "["))
	if hostErr != "" {
		// A host that cannot even be parsed is not relaxed: there is
		// nothing to resolve.
		fixed.add(vInvalidURL, hostErr)
	} else if msg := publicNameRule(h); msg != "" {
		relaxable.add(vInvalidURL, msg)
	}
	if len(fixed) > 0 {
		return "", append(fixed, relaxable...).err()
	}

	if len(relaxable) > 0 {
		if !g.insideAllowCIDRs(ctx, h) {
			return "", relaxable.err()
		}
		return normalize(u, h, port)
	}

	addrs, err := g.resolve(ctx, "ip", h.name)
	if err != nil {
		return "", urlError(vResolveFailed, fmt.Sprintf("url host %s could not be resolved: %s.", h.name, lookupReason(err)), err)
	}
	for _, a := range addrs {
		if !g.Allowed(a) {
			return "", urlError(vPrivateAddress, fmt.Sprintf(
				"url host %s resolves to a private or reserved address; webhook endpoints must be reachable on the public internet.", h.name),
				fmt.Errorf("%s resolves to %v", h.name, addrs))
		}
	}
	return normalize(u, h, port)
}

// checkPort validates the port of a URL and returns it in canonical form
// ("" for none), or a message saying why it is invalid.
func checkPort(p string) (string, string) {
	if p == "" {
		return "", ""
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", fmt.Sprintf("url has an invalid port %s.", p)
	}
	return strconv.Itoa(n), ""
}

// host is a URL host once parsed: either a normalized DNS name or, for an IP
// literal in any notation, the address.
type host struct {
	name string     // lower-case ASCII, punycode, no trailing dot; empty for an IP literal
	addr netip.Addr // valid for an IP literal
}

// idnaProfile maps a host for lookup (UTS 46: lower case, full-width forms,
// ideographic full stops) and converts it to punycode. STD3 rules are off so
// that underscores, which real DNS names do carry, pass; checkName then
// allows only letters, digits, hyphens and underscores.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.VerifyDNSLength(true),
	idna.StrictDomainName(false),
)

// parseHost reads the host of a URL, as url.URL.Hostname returns it, and
// says what it is. The IDN mapping runs before the IP-literal test because it
// turns full-width digits and ideographic dots (１２７。０。０。１) into an
// IPv4 address that must be recognized as one.
func parseHost(hostname string, bracketed bool) (host, string) {
	if hostname == "" {
		return host{}, "url must have a host name, as in https://hooks.example.com/path."
	}
	if bracketed {
		a, err := netip.ParseAddr(hostname)
		if err != nil {
			return host{}, "url host is not a valid IPv6 address."
		}
		return host{addr: a}, ""
	}
	ascii, err := idnaProfile.ToASCII(hostname)
	if err != nil {
		return host{}, fmt.Sprintf("url host %q is not a valid host name.", hostname)
	}
	name := strings.TrimSuffix(strings.ToLower(ascii), ".")
	if name == "" {
		return host{}, "url must have a host name, as in https://hooks.example.com/path."
	}
	if endsInNumber(name) {
		a, ok := parseIPv4Loose(name)
		if !ok {
			return host{}, fmt.Sprintf("url host %q is neither a host name nor a valid IP address.", name)
		}
		return host{addr: a}, ""
	}
	if !validName(name) {
		return host{}, fmt.Sprintf("url host %q is not a valid host name.", name)
	}
	return host{name: name}, ""
}

// validName reports whether name is a DNS name of letters, digits, hyphens
// and underscores, with no empty label and within DNS lengths.
func validName(name string) bool {
	if len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// privateSuffixes are names that are private or special-use by definition
// (RFC 6761, 6762, 7686, 8375, 9476, ICANN's .internal) or by wide habit on
// private networks. A host equal to one or ending in "."+one is refused, with
// a clearer message than "not under a public suffix", which most of them
// also fail. arpa covers home.arpa and the reverse-lookup zones.
var privateSuffixes = []string{
	"localhost", "local", "localdomain", "internal", "intranet", "private",
	"lan", "home", "corp", "domain", "workgroup", "arpa", "home.arpa",
	"test", "example", "invalid", "onion", "alt",
}

// publicNameRule returns why h is not a public host name, or "" when it is:
// an IP literal, a private name, a name outside the ICANN public suffixes,
// or a bare public suffix such as co.uk.
func publicNameRule(h host) string {
	if h.addr.IsValid() {
		return "url must use a host name, not an IP address."
	}
	for _, s := range privateSuffixes {
		if h.name == s || strings.HasSuffix(h.name, "."+s) {
			return fmt.Sprintf("url host %s is a private name; webhook endpoints must be reachable on the public internet.", h.name)
		}
	}
	suffix, ok := icannSuffix(h.name)
	switch {
	case !ok:
		return fmt.Sprintf("url host %s is not under a public top-level domain.", h.name)
	case suffix == h.name:
		return fmt.Sprintf("url host %s is a public suffix, not a domain; use a host name under it.", h.name)
	}
	return ""
}

// icannSuffix returns the ICANN public suffix of name (com, co.uk), and false
// when name's top-level domain is not a real one. publicsuffix.PublicSuffix
// answers with a privately managed suffix (github.io) when one matches, with
// icann false, so such a suffix is stripped and the rest asked again: a
// private suffix always sits under an ICANN one, and names under it are
// public.
func icannSuffix(name string) (string, bool) {
	for {
		suffix, icann := publicsuffix.PublicSuffix(name)
		if icann {
			return suffix, true
		}
		dot := strings.IndexByte(suffix, '.')
		if dot < 0 {
			// The catch-all rule: a top-level domain nobody manages.
			return "", false
		}
		name = suffix[dot+1:]
	}
}

// insideAllowCIDRs reports whether every address of h lies inside
// AllowCIDRs (not merely public), which relaxes the host and port rules.
func (g *Guard) insideAllowCIDRs(ctx context.Context, h host) bool {
	if len(g.AllowCIDRs) == 0 {
		return false
	}
	addrs := []netip.Addr{h.addr}
	if !h.addr.IsValid() {
		var err error
		if addrs, err = g.resolve(ctx, "ip", h.name); err != nil {
			return false
		}
	}
	for _, a := range addrs {
		inside := false
		for _, p := range g.AllowCIDRs {
			if a.Zone() == "" && prefixContains(p, a) {
				inside = true
				break
			}
		}
		if !inside {
			return false
		}
	}
	return true
}

// normalize rebuilds u around the normalized host and port, without user
// info or fragment.
func normalize(u *url.URL, h host, port string) (string, error) {
	v := *u
	v.Scheme = "https"
	v.User = nil
	v.Fragment, v.RawFragment = "", ""
	switch {
	case h.addr.Is4():
		v.Host = h.addr.String()
	case h.addr.IsValid():
		v.Host = "[" + h.addr.String() + "]"
	default:
		v.Host = h.name
	}
	if port != "" && port != "443" {
		v.Host = net.JoinHostPort(strings.Trim(v.Host, "[]"), port)
	}
	s := v.String()
	if n := utf8.RuneCountInString(s); n > maxURLLen {
		return "", urlError(vTooLong, fmt.Sprintf("url must be at most %d characters once normalized (punycode, escaping); it has %d.", maxURLLen, n), nil)
	}
	return s, nil
}

// resolve looks up the addresses of name, refusing an empty answer. A name
// that passes the public-name rules is looked up as an absolute name (with a
// trailing dot) so that the resolver's search domains never turn a
// merchant's unregistered name into one of the operator's internal names.
// Other names, which only AllowCIDRs lets through, are the operator's own and
// may rely on the search list. A name that already ends in a dot is absolute.
func (g *Guard) resolve(ctx context.Context, network, name string) ([]netip.Addr, error) {
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	q := strings.ToLower(name)
	if !strings.HasSuffix(q, ".") && publicNameRule(host{name: q}) == "" {
		q += "."
	}
	addrs, err := r.LookupNetIP(ctx, network, q)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errNoAddresses
	}
	return addrs, nil
}

var errNoAddresses = errors.New("no addresses")

// lookupReason says why a lookup failed in words safe to show a merchant:
// the resolver's own error names the operator's DNS server.
func lookupReason(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, errNoAddresses):
		return "it has no addresses"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &dnsErr) && dnsErr.IsTimeout:
		return "the lookup timed out"
	case errors.Is(err, context.Canceled):
		return "the lookup was canceled"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host"
	}
	return "the lookup failed"
}

// violations collects the broken rules of one URL, so a merchant fixes them
// in one go (the same shape as the domain's validation errors).
type violations []checkout.Violation

func (v *violations) add(code, msg string) {
	*v = append(*v, checkout.Violation{Code: code, Param: "url", Message: msg})
}

func (v violations) err() *checkout.Error {
	msg := v[0].Message
	if len(v) > 1 {
		msg += fmt.Sprintf(" (%d problems in all; see details.)", len(v))
	}
	return &checkout.Error{Code: checkout.EValidationFailed, Message: msg, Param: "url", Details: v}
}

// urlError is a validation_failed error with one violation of url.
func urlError(code, msg string, cause error) *checkout.Error {
	var v violations
	v.add(code, msg)
	e := v.err()
	e.Err = cause
	return e
}
