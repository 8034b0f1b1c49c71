package web

import "testing"

// The client is the peer's address, an IPv6 one by its /64; mapped IPv4
// addresses are their IPv4 selves.
func TestClientOf(t *testing.T) {
	tests := []struct{ a, b string }{
		{"192.0.2.1:1", "192.0.2.1:2"},
		{"[2001:db8:1:2::1]:1", "[2001:db8:1:2:ffff::9]:2"},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1:2"},
		{"[fe80::1%eth0]:1", "[fe80::1]:2"},
	}
	for _, tt := range tests {
		if ClientOf(tt.a) != ClientOf(tt.b) {
			t.Errorf("ClientOf(%q) = %v, ClientOf(%q) = %v; want one client", tt.a, ClientOf(tt.a), tt.b, ClientOf(tt.b))
		}
	}
	for _, pair := range [][2]string{{"192.0.2.1:1", "192.0.2.2:1"}, {"[2001:db8:1:2::1]:1", "[2001:db8:1:3::1]:1"}} {
		if ClientOf(pair[0]) == ClientOf(pair[1]) {
			t.Errorf("ClientOf(%q) = ClientOf(%q); want two clients", pair[0], pair[1])
		}
	}
}
