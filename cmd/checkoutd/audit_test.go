package main

import (
	"strings"
	"testing"
	"time"
)

// checkoutd audit list: a store's entries newest first, filtered by actor
// and action and dates, paged by --limit and --cursor; bad flags refused
// before the database is opened, with what to write instead.
func TestAuditListCLI(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		run := func(args ...string) (map[string]any, error) {
			t.Helper()
			out, errOut, err := cli(t, vars{}, append(append(args, "--json"), db.flags...)...)
			if err != nil {
				return nil, err
			}
			if errOut != "" {
				t.Errorf("checkoutd %s wrote to stderr: %s", strings.Join(args, " "), errOut)
			}
			var v map[string]any
			decodeOne(t, out, &v)
			return v, nil
		}
		must := func(args ...string) map[string]any {
			t.Helper()
			v, err := run(args...)
			if err != nil {
				t.Fatalf("checkoutd %s = %v", strings.Join(args, " "), err)
			}
			return v
		}
		store := must("stores", "create", "--name", "Acme", "--currency", "USD")["id"].(string)
		for range 4 {
			must("stores", "dispute-fee", "--store", store, "--fee", "1500")
		}
		must("keys", "create", "--store", store)
		if _, err := run("keys", "create", "--store", store, "--mode", "both"); err == nil {
			t.Fatal("keys create --mode both = nil error")
		}
		all := must("audit", "list", "--store", store)["data"].([]any)
		if len(all) != 6 {
			t.Fatalf("%d entries; want 6", len(all))
		}
		newest := all[0].(map[string]any)
		if newest["action"] != "api_key.create" || newest["object"] != "audit_entry" || newest["store_id"] != store ||
			!strings.HasPrefix(newest["id"].(string), "au_") || newest["created"].(float64) < float64(time.Now().Add(-time.Hour).Unix()) {
			t.Errorf("the newest entry = %v", newest)
		}
		user := newest["actor"].(map[string]any)["name"].(string)

		// Pages of 4 then 2, the cursor carried.
		p1 := must("audit", "list", "--store", store, "--limit", "4")
		next, _ := p1["next_cursor"].(string)
		if len(p1["data"].([]any)) != 4 || next == "" {
			t.Fatalf("the first page = %v", p1)
		}
		p2 := must("audit", "list", "--store", store, "--limit", "4", "--cursor", next)
		if len(p2["data"].([]any)) != 2 || p2["next_cursor"] != nil {
			t.Errorf("the second page = %v", p2)
		}
		for _, c := range []struct {
			args []string
			want int
		}{
			{[]string{"--action", "store.dispute_fee"}, 4},
			{[]string{"--actor", "cli:" + user}, 6},
			{[]string{"--actor", "cli:someone-else"}, 0},
			{[]string{"--since", time.Now().UTC().Add(-24 * time.Hour).Format(time.DateOnly)}, 6},
			{[]string{"--until", "2000-01-01"}, 0},
			{[]string{"--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, 0},
		} {
			got := must(append([]string{"audit", "list", "--store", store}, c.args...)...)["data"].([]any)
			if len(got) != c.want {
				t.Errorf("audit list %v = %d entries; want %d", c.args, len(got), c.want)
			}
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"audit", "list"}, "--store ID, or --account"},
			{[]string{"audit", "list", "--store", store, "--account"}, "not both"},
			{[]string{"audit", "list", "--store", store, "--limit", "0"}, "--limit must be 1 to 100"},
			{[]string{"audit", "list", "--store", store, "--limit", "101"}, "--limit must be 1 to 100"},
			{[]string{"audit", "list", "--store", store, "--since", "yesterday"}, "--since must be a date"},
			{[]string{"audit", "list", "--store", store, "--action", "store.burn"}, "action must be one of"},
			{[]string{"audit", "list", "--store", store, "--actor", "ann"}, "actor must be an email"},
			{[]string{"audit", "list", "--store", store, "--cursor", "!!"}, "cursor"},
			{[]string{"audit", "list", "--store", "6b0c9a52-4c1b-4bd4-9a3c-7c6c3e2e7d10"}, "store"},
			{[]string{"audit", "list", "--store", store, "extra"}, "usage"},
		} {
			if _, err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("checkoutd %v = %v; want an error saying %q", c.args, err, c.want)
			}
		}

		// Without --json: a table.
		out, _, err := cli(t, vars{}, append([]string{"audit", "list", "--store", store, "--limit", "2"}, db.flags...)...)
		if err != nil || !strings.Contains(out, "TIME") || !strings.Contains(out, "api_key.create") || !strings.Contains(out, "More: --cursor ") {
			t.Errorf("audit list = %v:\n%s", err, out)
		}
	})
}
