package authlimit

import (
	"net/netip"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/web"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func clientOf(remoteAddr string) netip.Prefix { return web.ClientOf(remoteAddr) }

// failN spends n failures of client.
func failN(l *Limiter[netip.Prefix], client netip.Prefix, n int) {
	for range n {
		l.Fail(client)
	}
}

// A client may fail limit times at once, then once per window/limit; other
// clients have budgets of their own; on both sides of each bound.
func TestFailureLimiter(t *testing.T) {
	clk := clock.NewFake(t0)
	l := New[netip.Prefix](20, time.Minute, clk.Now)
	a, b := clientOf("192.0.2.1:4000"), clientOf("192.0.2.2:4000")
	failN(l, a, 19)
	if blocked, _ := l.Blocked(a); blocked {
		t.Fatal("blocked after 19 failures; want a 20th allowed")
	}
	l.Fail(a)
	blocked, wait := l.Blocked(a)
	if !blocked || wait != 3*time.Second {
		t.Fatalf("after 20 failures: Blocked = %v, %v; want true, 3s", blocked, wait)
	}
	if blocked, _ := l.Blocked(b); blocked {
		t.Error("another client is blocked by the first one's failures")
	}
	clk.Advance(3*time.Second - time.Nanosecond)
	if blocked, wait := l.Blocked(a); !blocked || wait != time.Nanosecond {
		t.Errorf("just before 3 s: Blocked = %v, %v; want true, 1ns", blocked, wait)
	}
	clk.Advance(time.Nanosecond)
	if blocked, _ := l.Blocked(a); blocked {
		t.Error("blocked 3 s after the 20th failure; want one more attempt")
	}
	l.Fail(a)
	if blocked, _ := l.Blocked(a); !blocked {
		t.Error("not blocked after the attempt the 3 s gave back")
	}
	clk.Advance(time.Minute)
	failN(l, a, 19)
	if blocked, _ := l.Blocked(a); blocked {
		t.Error("a minute later: blocked after 19 failures; want the whole budget back")
	}
}

// The limiter tracks at most max clients: a new client past that is not
// counted, the clients it tracks stay blocked, and clients whose budget has
// refilled make room again.
func TestFailureLimiterBound(t *testing.T) {
	clk := clock.NewFake(t0)
	l := New[netip.Prefix](3, time.Minute, clk.Now) // a failure back every 20 s
	l.max = 3
	clients := make([]netip.Prefix, 5)
	for i := range clients {
		clients[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), 32)
	}
	failN(l, clients[1], 1) // full again at t0+20s
	failN(l, clients[2], 1)
	clk.Advance(10 * time.Second)
	failN(l, clients[0], 3)
	failN(l, clients[3], 3)
	if len(l.full) != 3 {
		t.Fatalf("tracking %d clients; want 3", len(l.full))
	}
	if blocked, _ := l.Blocked(clients[0]); !blocked {
		t.Error("a tracked client got unblocked when the map filled")
	}
	if blocked, _ := l.Blocked(clients[3]); blocked {
		t.Error("a client past the bound was counted")
	}
	clk.Advance(10 * time.Second) // clients 1 and 2 are full again
	failN(l, clients[4], 3)
	if blocked, _ := l.Blocked(clients[4]); !blocked {
		t.Error("a new client was not counted once refilled clients made room")
	}
	if blocked, _ := l.Blocked(clients[0]); !blocked {
		t.Error("client 0 unblocked by the pruning")
	}
	if len(l.full) != 2 {
		t.Errorf("tracking %d clients after the pruning; want 2 (clients 0 and 4)", len(l.full))
	}
}
