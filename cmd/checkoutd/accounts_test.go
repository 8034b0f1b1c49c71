package main

import (
	"bytes"
	"context"
	"maps"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

const testPassword = "correct horse battery staple"

// cliIn runs checkoutd with stdin on its standard input.
func cliIn(t *testing.T, e vars, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runIO(context.Background(), args, e.getenv, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

type accountOut struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Email     string `json:"email"`
	CreatedAt int64  `json:"created_at"`
}

type membershipOut struct {
	Object    string `json:"object"`
	AccountID string `json:"account_id"`
	Email     string `json:"email"`
	StoreID   string `json:"store_id"`
	Role      string `json:"role"`
	CreatedAt int64  `json:"created_at"`
}

var accountIDRe = regexp.MustCompile(`^acct_[0-9a-f]{32}$`)

func createAccount(t *testing.T, flags []string, email, stdin string) accountOut {
	t.Helper()
	args := append([]string{"accounts", "create", "--json", "--email", email, "--password-stdin"}, flags...)
	out, errOut, err := cliIn(t, vars{}, stdin, args...)
	if err != nil {
		t.Fatalf("checkoutd %s = %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	var a accountOut
	decodeOne(t, out, &a)
	return a
}

func TestAccountsCreate(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		a := createAccount(t, db.flags, " Ann@Example.com", testPassword+"\n")
		if !accountIDRe.MatchString(a.ID) || a.Object != "account" || a.Email != "ann@example.com" || a.CreatedAt == 0 {
			t.Errorf("accounts create = %+v; want acct_ and 32 hex, the email normalised", a)
		}
		svc := service.New(service.Config{Store: db.open(t)})
		ctx := context.Background()
		if got, err := svc.VerifyPassword(ctx, "ann@example.com", testPassword); err != nil || got.ID != a.ID {
			t.Errorf("VerifyPassword(the password given on stdin) = %+v, %v", got, err)
		}

		// The first line only, without its line ending, CRLF included;
		// spaces inside and around it are the password's.
		b := createAccount(t, db.flags, "bob@example.com", "  spaced out password \r\nsecond line\n")
		if got, err := svc.VerifyPassword(ctx, "bob@example.com", "  spaced out password "); err != nil || got.ID != b.ID {
			t.Errorf("VerifyPassword(first line) = %+v, %v", got, err)
		}
		// A last line without a newline is a line.
		c := createAccount(t, db.flags, "cy@example.com", testPassword)
		if got, err := svc.VerifyPassword(ctx, "cy@example.com", testPassword); err != nil || got.ID != c.ID {
			t.Errorf("VerifyPassword(no newline) = %+v, %v", got, err)
		}

		// Without --json: a human form naming the id, and never the
		// password or its hash.
		out, errOut, err := cliIn(t, vars{}, testPassword+"\n", append([]string{"accounts", "create", "--email", "dee@example.com", "--password-stdin"}, db.flags...)...)
		if err != nil || !strings.Contains(out, "id:") || !strings.Contains(out, "dee@example.com") || strings.HasPrefix(out, "{") {
			t.Errorf("accounts create without --json = %v, %q", err, out)
		}
		for _, s := range []string{out, errOut} {
			if strings.Contains(s, testPassword) || strings.Contains(s, "argon2") {
				t.Errorf("accounts create printed the password or its hash: %q", s)
			}
		}
	})
}

func TestAccountsCreateInvalid(t *testing.T) {
	db := newDatabase(t, "sqlite")
	createAccount(t, db.flags, "taken@example.com", testPassword+"\n")
	long := strings.Repeat("p", 5000)
	tests := []struct {
		stdin string
		args  []string
		want  []string // each must be in the error
		usage bool
	}{
		{testPassword, []string{"--email", "ann@example.com"}, []string{"--password-stdin"}, true},
		{"", []string{"--email", "ann@example.com", "--password", testPassword}, []string{"-password"}, true},
		{testPassword, []string{"--email", "ann@example.com", "--password-stdin", "extra"}, []string{"usage"}, true},
		{"", []string{"--email", "ann@example.com", "--password-stdin"}, []string{"no password on standard input"}, false},
		{"\n", []string{"--email", "ann@example.com", "--password-stdin"}, []string{"password", "at least 12"}, false},
		{"eleven char\n", []string{"--email", "ann@example.com", "--password-stdin"}, []string{"password", "at least 12"}, false},
		{long + "\n", []string{"--email", "ann@example.com", "--password-stdin"}, []string{"password", "at most 1024 bytes"}, false},
		{testPassword, []string{"--password-stdin"}, []string{"email"}, false},
		{testPassword, []string{"--email", "ann", "--password-stdin"}, []string{"email"}, false},
		{"short\n", []string{"--email", "ann", "--password-stdin"}, []string{"email", "password"}, false},
		{testPassword, []string{"--email", "TAKEN@example.com", "--password-stdin"}, []string{"account_exists", "taken@example.com"}, false},
	}
	for _, tt := range tests {
		args := append(append([]string{"accounts", "create", "--json"}, db.flags...), tt.args...)
		out, errOut, err := cliIn(t, vars{}, tt.stdin, args...)
		if err == nil {
			t.Errorf("checkoutd %s = nil; want an error", strings.Join(tt.args, " "))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("checkoutd accounts create %s = %q; want it to name %q", strings.Join(tt.args, " "), err, w)
			}
		}
		if got := exitCode(err) == 2; got != tt.usage {
			t.Errorf("checkoutd accounts create %s: exit code %d; want usage error %v", strings.Join(tt.args, " "), exitCode(err), tt.usage)
		}
		if out != "" {
			t.Errorf("stdout %q on failure; want nothing", out)
		}
		if tt.stdin != "" && tt.stdin != "\n" {
			for _, s := range []string{err.Error(), errOut} {
				if strings.Contains(s, strings.TrimSpace(tt.stdin)) {
					t.Errorf("accounts create %s printed the password: %q", strings.Join(tt.args, " "), s)
				}
			}
		}
	}
	if _, err := db.open(t).AccountGetByEmail(context.Background(), "ann@example.com"); !checkout.IsCode(err, checkout.ENotFound) {
		t.Errorf("a refused account was stored: %v", err)
	}
}

func TestMembersAdd(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		a := createAccount(t, db.flags, "ann@example.com", testPassword+"\n")

		add := func(args ...string) membershipOut {
			t.Helper()
			out := mustCLI(t, vars{}, append(append([]string{"members", "add", "--json"}, db.flags...), args...)...)
			var m membershipOut
			decodeOne(t, out, &m)
			return m
		}
		m := add("--store", s.ID, "--email", "Ann@example.com")
		want := membershipOut{Object: "membership", AccountID: a.ID, Email: "ann@example.com", StoreID: s.ID, Role: "administrator", CreatedAt: m.CreatedAt}
		if m != want || m.CreatedAt == 0 {
			t.Errorf("members add = %+v; want %+v", m, want)
		}
		if _, err := db.open(t).MembershipGet(context.Background(), a.ID, s.ID); err != nil {
			t.Errorf("the membership is not in the database: %v", err)
		}
		// Again: it succeeds and changes nothing.
		if again := add("--store", s.ID, "--email", "ann@example.com"); again != m {
			t.Errorf("members add again = %+v; want %+v", again, m)
		}
		human := mustCLI(t, vars{}, append([]string{"members", "add", "--store", s.ID, "--email", "ann@example.com"}, db.flags...)...)
		if !strings.Contains(human, "already") || !strings.Contains(human, a.ID) {
			t.Errorf("members add (a member already) printed %q", human)
		}
	})
}

func TestMembersAddInvalid(t *testing.T) {
	db := newDatabase(t, "sqlite")
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	createAccount(t, db.flags, "ann@example.com", testPassword+"\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--store", checkout.NewStoreID(), "--email", "ann@example.com"}, "No such store"},
		{[]string{"--email", "ann@example.com"}, "store"},
		{[]string{"--store", s.ID, "--email", "bob@example.com"}, "No account has the email bob@example.com"},
		{[]string{"--store", s.ID}, "email"},
		{[]string{"--store", s.ID, "--email", "ann@example.com", "--role", "owner"}, "role must be one of administrator, developer, support, viewer"},
	}
	for _, tt := range tests {
		out, _, err := cli(t, vars{}, append(append([]string{"members", "add", "--json"}, db.flags...), tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkoutd members add %s = %v; want an error naming %q", strings.Join(tt.args, " "), err, tt.want)
		}
		if exitCode(err) != 1 || out != "" {
			t.Errorf("checkoutd members add %s: exit code %d, stdout %q; want 1 and nothing", strings.Join(tt.args, " "), exitCode(err), out)
		}
	}
}

// members list, role and remove: roles as given, a role changed, a member
// removed, and a store never left without an administrator.
func TestMembersRoles(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		ann := createAccount(t, db.flags, "ann@example.com", testPassword+"\n")
		bob := createAccount(t, db.flags, "bob@example.com", testPassword+"\n")
		run := func(args ...string) (string, error) {
			t.Helper()
			out, _, err := cli(t, vars{}, append(append([]string{"members"}, args...), db.flags...)...)
			return out, err
		}
		one := func(args ...string) membershipOut {
			t.Helper()
			out, err := run(append(args, "--json")...)
			if err != nil {
				t.Fatalf("members %s = %v", strings.Join(args, " "), err)
			}
			var m membershipOut
			decodeOne(t, out, &m)
			return m
		}
		if out, err := run("list", "--store", s.ID); err != nil || !strings.Contains(out, "no members") {
			t.Errorf("members list of a store without members = %q, %v", out, err)
		}
		one("add", "--store", s.ID, "--email", "ann@example.com")
		if m := one("add", "--store", s.ID, "--email", "bob@example.com", "--role", "Viewer"); m.Role != "viewer" || m.AccountID != bob.ID {
			t.Errorf("members add --role Viewer = %+v; want bob a viewer", m)
		}
		out, err := run("list", "--store", s.ID, "--json")
		var list struct {
			Object string          `json:"object"`
			Data   []membershipOut `json:"data"`
		}
		decodeOne(t, out, &list)
		roles := map[string]string{}
		for _, m := range list.Data {
			roles[m.Email+" "+m.AccountID] = m.Role
		}
		want := map[string]string{"ann@example.com " + ann.ID: "administrator", "bob@example.com " + bob.ID: "viewer"}
		if err != nil || list.Object != "list" || !maps.Equal(roles, want) {
			t.Errorf("members list = %+v, %v; want %v", list, err, want)
		}
		if human, _ := run("list", "--store", s.ID); !strings.Contains(human, "bob@example.com") || !strings.Contains(human, "viewer") {
			t.Errorf("members list printed %q", human)
		}

		// The last administrator keeps the role, and the store.
		for _, args := range [][]string{
			{"role", "--store", s.ID, "--email", "ann@example.com", "--role", "developer"},
			{"remove", "--store", s.ID, "--email", "ann@example.com"},
		} {
			if _, err := run(args...); err == nil || !strings.Contains(err.Error(), "last administrator") {
				t.Errorf("members %s = %v; want the last administrator kept", strings.Join(args, " "), err)
			}
		}
		if m := one("role", "--store", s.ID, "--email", bob.ID, "--role", "administrator"); m.Role != "administrator" {
			t.Errorf("members role (by account id) = %+v", m)
		}
		if m := one("role", "--store", s.ID, "--email", "ann@example.com", "--role", "support"); m.Role != "support" || m.AccountID != ann.ID {
			t.Errorf("members role = %+v; want ann support", m)
		}
		out, err = run("remove", "--store", s.ID, "--email", "ann@example.com", "--json")
		if err != nil || !strings.Contains(out, `"removed":true`) {
			t.Errorf("members remove = %q, %v", out, err)
		}
		if _, err := db.open(t).MembershipGet(context.Background(), ann.ID, s.ID); !checkout.IsCode(err, checkout.ENotFound) {
			t.Errorf("ann's membership after members remove: %v; want none", err)
		}
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"remove", "--store", s.ID, "--email", "ann@example.com"}, "No member of this store is ann@example.com"},
			{[]string{"role", "--store", s.ID, "--email", "bob@example.com"}, "--role"},
			{[]string{"role", "--store", s.ID, "--email", "bob@example.com", "--role", "owner"}, "role must be one of"},
			{[]string{"remove", "--store", checkout.NewStoreID(), "--email", "bob@example.com"}, "No such store"},
			{[]string{"list"}, "--store"},
		} {
			if _, err := run(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("members %s = %v; want an error naming %q", strings.Join(tt.args, " "), err, tt.want)
			}
		}
	})
}

// members invite prints the invitation's link, once; the link joins the
// person invited, with the role.
func TestMembersInvite(t *testing.T) {
	db := newDatabase(t, "sqlite")
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	out := mustCLI(t, vars{}, append([]string{"members", "invite", "--json", "--store", s.ID, "--email", "Bob@example.com", "--role", "support",
		"--base-url", "https://dash.example.com/"}, db.flags...)...)
	var inv struct {
		Object, ID, Email, Role, URL string
		ExpiresAt                    int64 `json:"expires_at"`
		CreatedAt                    int64 `json:"created_at"`
	}
	decodeOne(t, out, &inv)
	if inv.Object != "invitation" || !strings.HasPrefix(inv.ID, "inv_") || inv.Email != "bob@example.com" || inv.Role != "support" ||
		!strings.HasPrefix(inv.URL, "https://dash.example.com/dashboard/invitation?token=") || inv.ExpiresAt-inv.CreatedAt != 7*24*3600 {
		t.Errorf("members invite = %s", out)
	}
	human := mustCLI(t, vars{}, append([]string{"members", "invite", "--store", s.ID, "--email", "carl@example.com", "--role", "viewer"}, db.flags...)...)
	if !strings.Contains(human, "http://127.0.0.1:8080/dashboard/invitation?token=") || !strings.Contains(human, "works once") {
		t.Errorf("members invite printed %q", human)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", s.ID, "--email", "bob@example.com"}, "--role"},
		{[]string{"--store", s.ID, "--email", "bob", "--role", "viewer"}, "email"},
		{[]string{"--store", s.ID, "--email", "bob@example.com", "--role", "owner"}, "role must be one of"},
		{[]string{"--store", checkout.NewStoreID(), "--email", "bob@example.com", "--role", "viewer"}, "No such store"},
	} {
		if _, _, err := cli(t, vars{}, append(append([]string{"members", "invite"}, db.flags...), tt.args...)...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("members invite %s = %v; want an error naming %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}
