package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// WaitTimeout bounds each wait for a page: an action's steps, or a condition
// to hold. It is generous, for a loaded machine makes pages slow, not wrong;
// a wait whose condition holds ends as soon as it does.
const WaitTimeout = 30 * time.Second

// Page is a test's tab with the actions and checks that browser tests share.
// Each bounds its wait by WaitTimeout and fails the test it was made for,
// saying what the page showed. What the page writes to the console as an
// error (a Content-Security-Policy violation among them) fails the test when
// it ends, unless ExpectConsole said it would come.
type Page struct {
	t       *testing.T
	tab     context.Context
	console *consoleLog
}

// NewPage opens a tab for t (see Tab: the test skips, or fails under
// CHECKOUTD_TEST_REQUIRE_BROWSER=1, without a browser) and starts watching
// its console.
func NewPage(t *testing.T) *Page {
	t.Helper()
	tab := Tab(t)
	return &Page{t: t, tab: tab, console: watchConsole(t, tab)}
}

// Tab is the page's tab, for chromedp calls of a test's own (a second tab
// is chromedp.NewContext(p.Tab())).
func (p *Page) Tab() context.Context { return p.tab }

// ExpectConsole makes console errors whose text or source URL contains s
// expected: a test that loads a 404 on purpose sees the browser log it.
func (p *Page) ExpectConsole(s string) {
	p.console.mu.Lock()
	defer p.console.mu.Unlock()
	p.console.expected = append(p.console.expected, s)
}

// Do runs browser actions in the tab, within WaitTimeout.
func (p *Page) Do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, WaitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatal(err)
	}
}

// Fill replaces what the input sel matches holds with value, typed key by
// key as a person types. (chromedp.SetValue(sel, "") cannot empty a field:
// the empty string reaches the page as undefined, and the field reads
// "undefined".)
func (p *Page) Fill(sel, value string) {
	p.t.Helper()
	p.Do(
		chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+JSString(sel)+`).value = ""`),
		chromedp.SendKeys(chromedp.CSS(sel), value),
	)
}

// Eval evaluates a JavaScript expression in the page, once: for what an
// action has already settled (the element that has the focus after a key),
// not for what the page does in its own time (Until is for that).
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, WaitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Poll waits until the JavaScript expression cond is true in a loaded page
// (document.readyState "complete": parsed, the page's script set up), and
// reports whether it came true within WaitTimeout. The page evaluates cond
// every 20 ms, with args[0], args[1]... standing for args (written into the
// script as JSON); an exception counts as false. A navigation ends a poll
// along with its document: Poll starts again in the next one.
func (p *Page) Poll(cond string, args ...any) (bool, error) {
	if args == nil {
		args = []any{}
	}
	js, err := json.Marshal(args)
	if err != nil {
		p.t.Fatal(err)
	}
	fn := `() => { const args = ` + string(js) + `; try { return document.readyState === "complete" && !!(` + cond + `); } catch (e) { return false; } }`
	deadline := time.Now().Add(WaitTimeout)
	ctx, cancel := context.WithDeadline(p.tab, deadline)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.PollFunction[chromedp.Void](fn,
			chromedp.WithPollingInterval(20*time.Millisecond),
			chromedp.WithPollingTimeout(max(time.Until(deadline), time.Millisecond))))
		if err == nil {
			return true, nil
		}
		if errors.Is(err, chromedp.ErrPollingTimeout) || ctx.Err() != nil {
			return false, err
		}
		// The document went away under the poll (a navigation): the
		// next one polls again.
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Until evaluates the JavaScript expression expr in the page until its value
// is want (===), and returns its last value. A check of what the page shows
// waits for the page to show it, for lazy images, the page's script and
// navigations finish in their own time; it returns what the page showed
// instead after WaitTimeout, for the test to report.
func Until[T comparable](p *Page, expr string, want T) T {
	p.t.Helper()
	if ok, _ := p.Poll(`(`+expr+`) === args[0]`, want); ok {
		return want
	}
	return Eval[T](p, expr)
}

// TextJS is a JavaScript expression for the text of the first element a
// selector matches, as a reader reads it, or "" when there is none.
func TextJS(sel string) string {
	return `(document.querySelector(` + JSString(sel) + `)?.innerText ?? "").trim()`
}

// JSString is s as a JavaScript string literal.
func JSString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TextIs waits until the first element sel matches reads want, and returns
// its last text.
func (p *Page) TextIs(sel, want string) string {
	p.t.Helper()
	return Until(p, TextJS(sel), want)
}

// TextHas waits until the text of the first element sel matches contains
// each of wants, and returns its last text.
func (p *Page) TextHas(sel string, wants ...string) string {
	p.t.Helper()
	p.Poll(`args[0].every(w => `+TextJS(sel)+`.includes(w))`, wants)
	return Eval[string](p, TextJS(sel))
}

// ValueIs waits until the input sel matches holds want, and returns its
// last value.
func (p *Page) ValueIs(sel, want string) string {
	p.t.Helper()
	return Until(p, `document.querySelector(`+JSString(sel)+`).value`, want)
}

// WaitFor waits until a JavaScript condition holds (the page changes on its
// own: a redirect, a script's poll), and fails the test, saying where the
// page was and what it showed, if it does not within WaitTimeout.
func (p *Page) WaitFor(cond string) {
	p.t.Helper()
	ok, err := p.Poll(cond)
	if ok {
		return
	}
	ctx, cancel := context.WithTimeout(p.tab, WaitTimeout)
	defer cancel()
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText.slice(0, 500) : "")`))
	p.t.Fatalf("waiting for %s: %v; the page was %s", cond, err, page)
}

// Screenshot writes the whole page, not only what the window shows, as a
// PNG to path, making its directory. Images settle before the picture.
func (p *Page) Screenshot(path string) {
	p.t.Helper()
	p.WaitFor(`[...document.images].every(i => i.complete)`)
	ctx, cancel := context.WithTimeout(p.tab, WaitTimeout)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// consoleLog gathers a tab's console messages.
type consoleLog struct {
	mu       sync.Mutex
	msgs     []chromedp.ConsoleMessage
	expected []string
}

// watchConsole gathers the tab's console messages, and fails t when it
// ends if one is an error or an uncaught exception that was not expected.
func watchConsole(t *testing.T, tab context.Context) *consoleLog {
	c := &consoleLog{}
	msgs := chromedp.Console(tab)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, m := range c.msgs {
			expected := slices.ContainsFunc(c.expected, func(s string) bool { return strings.Contains(m.Text, s) || strings.Contains(m.URL, s) })
			if (m.Type == chromedp.ConsoleError || m.IsException()) && !expected {
				t.Errorf("the page wrote to the console: %s (%s:%d)", m.Text, m.URL, m.Line+1)
			}
		}
	})
	return c
}
