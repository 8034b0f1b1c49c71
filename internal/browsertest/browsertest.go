// Package browsertest runs tests in a real headless Chromium, driven through
// the DevTools protocol by chromedp.
//
// One browser is started per test binary, on first use, with a fresh
// profile; each test gets a tab in a browser context of its own (its own
// cookies and cache), so tests do not see each other's state. A test binary
// that uses it calls Run from its TestMain, which stops the browser when the
// tests end.
//
// NewPage wraps a test's tab with the actions and checks the browser tests
// share (Do, Poll, WaitFor, TextIs, TextHas, ValueIs, Screenshot; Eval and
// Until), each bounded by WaitTimeout: they wait for what the page shows,
// never for a time. A console error on a Page fails its test.
//
// The browser is the one CHECKOUTD_TEST_CHROMIUM names, else the first of
// chromium, chromium-browser, google-chrome on PATH or at /usr/bin. Without
// one the tests skip with a message saying how to install it, unless
// CHECKOUTD_TEST_REQUIRE_BROWSER=1 (set by .ci/run), which makes them fail.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Timeout bounds each test's tab, all of its actions and waits together: a
// test that hangs fails after it, rather than stopping the run. It is
// generous, for a loaded machine makes pages slow, not wrong; a test bounds
// each of its waits more closely, to say what it waited for.
const Timeout = 3 * time.Minute

var (
	once     sync.Once
	startErr error
	browser  context.Context // the browser's first tab; tabs of tests are its children
	stop     []func()
	dataDir  string
	mu       sync.Mutex
	mapRules []string
)

// MapHost makes the browser resolve host to addr (host:port), so that a page
// can send the buyer to an https URL of a merchant that a test serves on
// loopback. It must be called before the first Tab of the test binary, for
// the browser reads its rules when it starts.
func MapHost(host, addr string) {
	mu.Lock()
	defer mu.Unlock()
	if browser != nil {
		panic("browsertest: MapHost after the browser started")
	}
	mapRules = append(mapRules, "MAP "+host+" "+addr)
}

// Run runs the tests, then stops the browser if one was started, and returns
// the exit code for os.Exit.
func Run(m *testing.M) int {
	code := m.Run()
	for i := len(stop) - 1; i >= 0; i-- {
		stop[i]()
	}
	if dataDir != "" {
		os.RemoveAll(dataDir)
	}
	return code
}

// ExecPath returns the browser the tests use, or an error saying why there is
// none.
func ExecPath() (string, error) {
	if p := os.Getenv("CHECKOUTD_TEST_CHROMIUM"); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("CHECKOUTD_TEST_CHROMIUM=%s: %w", p, err)
		}
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (apt-get install -y chromium, or set CHECKOUTD_TEST_CHROMIUM)")
}

// Tab returns the context of a new tab, in a browser context of its own,
// closed when the test ends. It skips the test when there is no browser
// (fails it under CHECKOUTD_TEST_REQUIRE_BROWSER=1).
func Tab(t *testing.T) context.Context {
	t.Helper()
	once.Do(start)
	if startErr != nil {
		msg := "browser tests need headless Chromium: " + startErr.Error()
		if os.Getenv("CHECKOUTD_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg)
		}
		t.Skip("skipping: " + msg)
	}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, Timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
	})
	// Open the tab now, so that a test's first action is not also the one
	// that creates the target.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

func start() {
	mu.Lock()
	defer mu.Unlock()
	path, err := ExecPath()
	if err != nil {
		startErr = err
		return
	}
	dataDir, err = os.MkdirTemp("", "checkoutd-chromium-")
	if err != nil {
		startErr = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dataDir),
		chromedp.NoSandbox, // the tests may run as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		// The test merchants serve https on loopback with the certificates
		// of httptest.
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.WindowSize(1280, 900),
		// Dates, times and numbers the page's script formats come out the
		// same on every machine.
		chromedp.Flag("lang", "en-US"),
		chromedp.Env("TZ=UTC", "LANG=en_US.UTF-8",
			// Chromium's own temporary files go with the profile.
			"TMPDIR="+dataDir),
	)
	if len(mapRules) > 0 {
		opts = append(opts, chromedp.Flag("host-resolver-rules", strings.Join(mapRules, ",")))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	stop = append(stop, cancelAlloc, cancel)
	// The first Do starts the browser and binds its life to ctx, so it has
	// no time-out of its own.
	if err := chromedp.Do(ctx); err != nil {
		startErr = fmt.Errorf("start %s: %w", path, err)
		return
	}
	browser = ctx
}
