package checkout

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNewAuditEntry(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 123456789, time.UTC)
	secret := "ck_live_sk_" + strings.Repeat("A", 43)
	by := Actor{Kind: ActorAccount, Name: "ann@example.com " + secret}
	ua := "Mozilla/5.0\r\nX-Injected: 1 " + strings.Repeat("é", 400)
	e := NewAuditEntry("st_1", by, AuditAPIKeyCreate, "key_1", "192.0.2.1", ua, now)
	if !strings.HasPrefix(e.ID, PrefixAudit) || len(e.ID) != len(PrefixAudit)+32 {
		t.Errorf("id = %q; want au_ and 32 hex", e.ID)
	}
	if strings.Contains(e.Actor.Name, secret) || !strings.Contains(e.Actor.Name, Redacted) {
		t.Errorf("actor name = %q; want the secret redacted", e.Actor.Name)
	}
	if strings.ContainsAny(e.UserAgent, "\r\n") || len(e.UserAgent) > 500 || !utf8.ValidString(e.UserAgent) {
		t.Errorf("user agent = %q (%d bytes); want one line of at most 500 bytes, valid UTF-8", e.UserAgent, len(e.UserAgent))
	}
	if !e.CreatedAt.Equal(now.Truncate(time.Millisecond)) {
		t.Errorf("created = %v; want the millisecond of %v", e.CreatedAt, now)
	}
}

func TestActorKey(t *testing.T) {
	for _, tt := range []struct {
		a    Actor
		want string
	}{
		{Actor{Kind: ActorAccount, ID: "acct_1", Name: "ann@example.com"}, "acct_1"},
		{Actor{Kind: ActorAccount, Name: "who@example.com"}, "email:who@example.com"},
		{Actor{Kind: ActorAPIKey, ID: "key_1"}, "key_1"},
		{Actor{Kind: ActorCLI, Name: "root"}, "cli:root"},
	} {
		if got := tt.a.Key(); got != tt.want {
			t.Errorf("%+v.Key() = %q; want %q", tt.a, got, tt.want)
		}
	}
}

func TestAuditActions(t *testing.T) {
	seen := map[AuditAction]bool{}
	for _, a := range AuditActions {
		if seen[a] || !a.Valid() || !strings.Contains(string(a), ".") {
			t.Errorf("action %q: listed twice, or not object.verb", a)
		}
		seen[a] = true
	}
	if AuditAction("api_key.eat").Valid() || AuditAction("").Valid() {
		t.Error("an unknown action is valid")
	}
}
