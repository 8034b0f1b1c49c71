package store

import "strings"

// where builds the WHERE clause of a list with optional filters: each
// condition is written with ? for its arguments, numbered by sql in the
// dialect's style. The queries it makes differ only by which filters are
// set, so the statement cache holds a few of each.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// sql returns the conditions joined by AND, with the dialect's
// placeholders.
func (w *where) sql(d Dialect) string {
	var b strings.Builder
	n := 0
	for i, c := range w.conds {
		if i > 0 {
			b.WriteString(" AND ")
		}
		for {
			before, after, ok := strings.Cut(c, "?")
			b.WriteString(before)
			if !ok {
				break
			}
			n++
			b.WriteString(d.Param(n))
			c = after
		}
	}
	return b.String()
}

// argsFor returns the arguments, after the dialect's PlanEach options.
func (w *where) argsFor(d Dialect) []any {
	return append(append([]any{}, d.PlanEach...), w.args...)
}
