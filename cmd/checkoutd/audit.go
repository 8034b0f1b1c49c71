package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

func auditCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "audit", args, map[string]func(context.Context, env, []string) error{
		"list": auditList,
	})
}

// auditListJSON is audit list's --json: one page of entries, and the
// cursor of the next (--cursor) when there is one.
type auditListJSON struct {
	Object     string                    `json:"object"`
	Data       []checkout.AuditEntryJSON `json:"data"`
	NextCursor *string                   `json:"next_cursor"`
}

// auditList prints a page of the audit trail (service.ListAudit): a
// store's, or with --account the account-level entries (sign-ins,
// accounts, the secrets key).
func auditList(ctx context.Context, e env, args []string) error {
	const synopsis = "audit list --store ID|--account [--actor EMAIL|acct_…|key_…|cli:USER] [--action A] [--since D] [--until D] [--limit N] [--cursor C] [--json]"
	a := newAdmin(e, "audit list", synopsis)
	var store, actor, action, since, until, cursor string
	var account bool
	var limit int
	a.fs.StringVar(&store, "store", "", "the store whose audit trail to list")
	a.fs.BoolVar(&account, "account", false, "list the account-level entries instead: sign-ins, failed sign-ins, accounts created, the secrets key rotated")
	a.fs.StringVar(&actor, "actor", "", "only this actor's: an account's email or id, an API key's id, or cli:USER")
	a.fs.StringVar(&action, "action", "", "only this action, such as api_key.create (docs/dashboard.md lists them)")
	a.fs.StringVar(&since, "since", "", "only entries at or after this time: YYYY-MM-DD (UTC) or RFC 3339")
	a.fs.StringVar(&until, "until", "", "only entries before this time: YYYY-MM-DD (UTC, the day excluded) or RFC 3339")
	a.fs.IntVar(&limit, "limit", service.DefaultPageSize, fmt.Sprintf("entries per page, 1 to %d", service.MaxPageSize))
	a.fs.StringVar(&cursor, "cursor", "", "the page after this cursor (a previous page's next_cursor)")
	var f service.AuditFilter
	a.check = func(rest []string) error {
		if len(rest) != 0 {
			return usageError{"usage: checkoutd " + synopsis}
		}
		if (store == "") == !account {
			return usageError{"give --store ID, or --account for the account-level entries (not both)"}
		}
		if limit < 1 || limit > service.MaxPageSize {
			return usageError{fmt.Sprintf("--limit must be 1 to %d", service.MaxPageSize)}
		}
		var err error
		f = service.AuditFilter{Actor: actor, Action: action}
		if f.Since, err = parseWhen("--since", since); err != nil {
			return err
		}
		f.Until, err = parseWhen("--until", until)
		return err
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if store != "" {
			if _, err := svc.Store().MerchantGet(ctx, store); err != nil {
				return err
			}
		}
		page, err := svc.ListAudit(ctx, store, f, cursor, limit)
		if err != nil {
			return describe(err)
		}
		out := auditListJSON{Object: "list", Data: make([]checkout.AuditEntryJSON, len(page.Items))}
		for i, en := range page.Items {
			out.Data[i] = en.View()
		}
		if page.Next != "" {
			out.NextCursor = &page.Next
		}
		return a.print(out, func(w io.Writer) {
			fmt.Fprintln(w, "TIME\tACTOR\tACTION\tOBJECT\tFROM")
			for _, en := range page.Items {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", en.CreatedAt.UTC().Format(time.RFC3339), en.Actor, en.Action, dash(en.ObjectID), dash(en.ClientAddress))
			}
			if page.Next != "" {
				fmt.Fprintf(w, "\nMore: --cursor %s\n", page.Next)
			}
		})
	})
}

// parseWhen reads a --since or --until: a date (midnight UTC) or an RFC
// 3339 time; "" is no bound.
func parseWhen(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usageError{flag + " must be a date (YYYY-MM-DD) or an RFC 3339 time (2026-11-29T14:00:00Z)"}
	}
	return t, nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
