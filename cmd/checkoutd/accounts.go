package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/dashboard"
	"github.com/checkoutd/checkoutd/internal/password"
	"github.com/checkoutd/checkoutd/internal/service"
)

func accountsCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "accounts", args, map[string]func(context.Context, env, []string) error{
		"create": accountsCreate,
	})
}

// accountJSON is an account as the commands print it: never its password
// or hash.
type accountJSON struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Email     string `json:"email"`
	CreatedAt int64  `json:"created_at"`
}

func toAccountJSON(a *checkout.Account) accountJSON {
	return accountJSON{a.ID, "account", a.Email, a.CreatedAt.Unix()}
}

func accountsCreate(ctx context.Context, e env, args []string) error {
	const synopsis = "accounts create --email EMAIL --password-stdin [--json]"
	a := newAdmin(e, "accounts create", synopsis)
	var email string
	var fromStdin bool
	a.fs.StringVar(&email, "email", "", "the email address the account signs in with (required)")
	a.fs.BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of standard input (required: a password is never a flag, which other users and shell histories can see)")
	var pw string
	a.check = func(rest []string) error {
		if len(rest) != 0 {
			return usageError{"usage: checkoutd " + synopsis}
		}
		if !fromStdin {
			return usageError{"accounts create reads the password from standard input: pass --password-stdin, as in\n" +
				"  checkoutd accounts create --email ann@example.com --password-stdin < password.txt"}
		}
		var err error
		pw, err = readPassword(e.stdin)
		return err
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		acct, err := svc.CreateAccount(ctx, email, pw)
		if err != nil {
			return describe(err)
		}
		return a.print(toAccountJSON(acct), func(w io.Writer) {
			fmt.Fprintf(w, "id:\t%s\nemail:\t%s\n\nThe account can sign in to the dashboard. Give it a store with:\n  checkoutd members add --store STORE_ID --email %s\n",
				acct.ID, acct.Email, acct.Email)
		})
	})
}

// readPassword returns the first line of r without its line ending. It
// reads no more than a password may hold and the line ending, so a file
// given by mistake is not read whole; what is too long is refused by the
// service as too long.
func readPassword(r io.Reader) (string, error) {
	br := bufio.NewReader(io.LimitReader(r, password.MaxBytes+3))
	line, err := br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	if line == "" {
		return "", errors.New("no password on standard input: --password-stdin reads it from the first line")
	}
	line = strings.TrimSuffix(line, "\n")
	return strings.TrimSuffix(line, "\r"), nil
}

func membersCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "members", args, map[string]func(context.Context, env, []string) error{
		"list":   membersList,
		"add":    membersAdd,
		"role":   membersRole,
		"remove": membersRemove,
		"invite": membersInvite,
	})
}

// membershipJSON is a membership as the commands print it.
type membershipJSON struct {
	Object    string `json:"object"`
	AccountID string `json:"account_id"`
	Email     string `json:"email"`
	StoreID   string `json:"store_id"`
	Role      string `json:"role"`
	CreatedAt int64  `json:"created_at"`
}

func toMembershipJSON(m *checkout.Membership) membershipJSON {
	return membershipJSON{Object: "membership", AccountID: m.AccountID, Email: m.Email, StoreID: m.MerchantID, Role: string(m.Role), CreatedAt: m.CreatedAt.Unix()}
}

// roleFlag is a --role flag, one of checkout.Roles, which the service
// checks.
type roleFlag struct{ role checkout.Role }

func (f *roleFlag) String() string { return string(f.role) }

func (f *roleFlag) Set(s string) error {
	f.role = checkout.Role(s)
	return nil
}

// roleNames is the roles' names for usages: "administrator|developer|...".
func roleNames() string {
	names := make([]string, len(checkout.Roles))
	for i, r := range checkout.Roles {
		names[i] = string(r)
	}
	return strings.Join(names, "|")
}

func membersList(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "members list", "members list --store ID [--json]")
	var store string
	a.fs.StringVar(&store, "store", "", "the store whose members to list (required)")
	a.check = func(rest []string) error { return required("members list", rest, map[string]string{"store": store}) }
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		ms, err := svc.Members(ctx, store)
		if err != nil {
			return err
		}
		list := make([]membershipJSON, len(ms))
		for i, m := range ms {
			list[i] = toMembershipJSON(m)
		}
		return a.print(newList(list), func(w io.Writer) {
			if len(ms) == 0 {
				fmt.Fprintln(w, "The store has no members. Add one with: checkoutd members add --store "+store+" --email EMAIL")
				return
			}
			fmt.Fprintln(w, "EMAIL\tROLE\tACCOUNT\tJOINED")
			for _, m := range ms {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", m.Email, m.Role, m.AccountID, m.CreatedAt.UTC().Format(time.DateTime))
			}
		})
	})
}

func membersAdd(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "members add", "members add --store ID --email EMAIL [--role "+roleNames()+"] [--json]")
	var store, email string
	role := roleFlag{checkout.RoleAdministrator}
	a.fs.StringVar(&store, "store", "", "the store to give access to (required)")
	a.fs.StringVar(&email, "email", "", "the email of an existing account (required)")
	a.fs.Var(&role, "role", "what the member may do: "+roleNames())
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		m, added, err := svc.AddMember(ctx, store, email, role.role)
		if err != nil {
			return err
		}
		return a.print(toMembershipJSON(m), func(w io.Writer) {
			fmt.Fprintf(w, "account:\t%s\nemail:\t%s\nstore:\t%s\nrole:\t%s\n\n", m.AccountID, m.Email, m.MerchantID, m.Role)
			if added {
				fmt.Fprintln(w, "The account can now open the store in the dashboard.")
			} else {
				fmt.Fprintln(w, "The account was a member of the store already; nothing changed (change its role with checkoutd members role).")
			}
		})
	})
}

func membersRole(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "members role", "members role --store ID --email EMAIL --role "+roleNames()+" [--json]")
	var store, email string
	var role roleFlag
	a.fs.StringVar(&store, "store", "", "the store (required)")
	a.fs.StringVar(&email, "email", "", "the member's email or account id (required)")
	a.fs.Var(&role, "role", "the member's new role (required): "+roleNames())
	a.check = func(rest []string) error {
		return required("members role", rest, map[string]string{"store": store, "email": email, "role": string(role.role)})
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		m, err := svc.SetMemberRole(ctx, store, email, role.role)
		if err != nil {
			return err
		}
		return a.print(toMembershipJSON(m), func(w io.Writer) {
			fmt.Fprintf(w, "account:\t%s\nemail:\t%s\nstore:\t%s\nrole:\t%s\n", m.AccountID, m.Email, m.MerchantID, m.Role)
		})
	})
}

func membersRemove(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "members remove", "members remove --store ID --email EMAIL [--json]")
	var store, email string
	a.fs.StringVar(&store, "store", "", "the store (required)")
	a.fs.StringVar(&email, "email", "", "the member's email or account id (required)")
	a.check = func(rest []string) error {
		return required("members remove", rest, map[string]string{"store": store, "email": email})
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		m, err := svc.RemoveMember(ctx, store, email)
		if err != nil {
			return err
		}
		j := struct {
			membershipJSON
			Removed bool `json:"removed"`
		}{toMembershipJSON(m), true}
		return a.print(j, func(w io.Writer) {
			fmt.Fprintf(w, "%s was removed from the store %s: the dashboard refuses them the store from their next request.\n", m.Email, m.MerchantID)
		})
	})
}

// invitationJSON is an invitation as members invite prints it, with its
// link, shown this once.
type invitationJSON struct {
	Object    string `json:"object"`
	ID        string `json:"id"`
	StoreID   string `json:"store_id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	URL       string `json:"url"`
	CreatedAt int64  `json:"created_at"`
	ExpiresAt int64  `json:"expires_at"`
}

func membersInvite(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "members invite", "members invite --store ID --email EMAIL --role "+roleNames()+" [--base-url URL] [--json]")
	var store, email, base string
	var role roleFlag
	a.fs.StringVar(&store, "store", "", "the store to invite to (required)")
	a.fs.StringVar(&email, "email", "", "the email of the person invited (required)")
	a.fs.Var(&role, "role", "what they may do once they join (required): "+roleNames())
	a.fs.StringVar(&base, "base-url", "http://127.0.0.1:8080", "public address of the dashboard, as serve's --base-url: the link printed is under it")
	a.check = func(rest []string) error {
		return required("members invite", rest, map[string]string{"store": store, "email": email, "role": string(role.role)})
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		inv, token, err := svc.InviteMember(ctx, store, email, role.role)
		if err != nil {
			return err
		}
		link := dashboard.InvitationURL(base, token)
		j := invitationJSON{Object: "invitation", ID: inv.ID, StoreID: inv.MerchantID, Email: inv.Email, Role: string(inv.Role), URL: link,
			CreatedAt: inv.CreatedAt.Unix(), ExpiresAt: inv.ExpiresAt.Unix()}
		return a.print(j, func(w io.Writer) {
			fmt.Fprintf(w, "invitation:\t%s\nemail:\t%s\nstore:\t%s\nrole:\t%s\nexpires:\t%s\n\n", inv.ID, inv.Email, inv.MerchantID, inv.Role,
				inv.ExpiresAt.UTC().Format(time.DateTime+" UTC"))
			fmt.Fprintf(w, "Send this link to %s (checkoutd sends no mail); it works once, for 7 days:\n  %s\n", inv.Email, link)
		})
	})
}
