// Package browsertest opens a local HTML file in headless Chromium (through
// chromedp) and reports what a reader's browser would do with it: the console
// errors, every network request the page makes, whether selectors match
// visible elements, and a screenshot. Check wraps it for tests.
//
// Chromium is found on PATH as chromium, chromium-browser, google-chrome or
// headless-shell (SOT_CHROMIUM names another). Without it the tests that use
// Check skip, saying how to install it, unless SOT_REQUIRE_BROWSER=1, which
// makes them fail. SOT_SCREENSHOTS=DIR also writes each screenshot to DIR (a
// relative DIR is taken from the module's root).
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Environment variables that steer the tests.
const (
	EnvRequire     = "SOT_REQUIRE_BROWSER" // "1": a missing Chromium fails the test
	EnvScreenshots = "SOT_SCREENSHOTS"     // a directory that also receives the screenshots
	EnvChromium    = "SOT_CHROMIUM"        // the browser binary, when it is not on PATH
)

// Required reports whether the environment variable name (EnvRequire, or
// SOT_REQUIRE_DOT for Graphviz) asks for a missing tool to fail the test
// rather than skip it. Both take the same values, strconv.ParseBool's: 1,
// t, true (in any case) require; unset, 0, f, false do not. Any other value
// requires too, so that a typo never skips silently.
func Required(name string) bool {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return b || err != nil
}

// Install says how to get the browser the tests use.
const Install = "install Chromium (Debian/Ubuntu: apt-get install chromium)"

// Chromium returns the path of a Chromium binary, or an error saying how to
// install one.
func Chromium() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no headless Chromium on PATH (chromium, chromium-browser, google-chrome, headless-shell): " + Install)
}

// Selector is what a page holds for one CSS selector.
type Selector struct {
	Selector string `json:"selector"`
	Count    int    `json:"count"`   // matching elements
	Visible  int    `json:"visible"` // those with a size, not hidden
}

// Page is what loading a file showed.
type Page struct {
	URL string
	// Console holds the console errors and uncaught exceptions, and the
	// browser log's errors (a blocked load, a violated policy).
	Console []string
	// Requests are the URLs of every request the page made, the file's own
	// included.
	Requests []string
	// Foreign are the requests for anything but the file itself.
	Foreign []string
	// Selectors are in the order asked, evaluated with every <details>
	// unfolded.
	Selectors []Selector
	// Screenshot is a PNG of the whole page as it opens (folded).
	Screenshot []byte
}

// Options tune Open.
type Options struct {
	Width, Height int // the viewport; 1200×900 when zero
}

// Open loads file in a new headless Chromium at path chromium, waits for it
// to load, takes a full-page screenshot, unfolds every <details> and
// evaluates the selectors. ctx bounds the whole run, the browser's start
// included.
func Open(ctx context.Context, chromium, file string, selectors []string, o Options) (*Page, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	if o.Width == 0 {
		o.Width, o.Height = 1200, 900
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // root in containers and CI
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.WindowSize(o.Width, o.Height),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(actx)
	defer cancelTab()

	p := &Page{URL: u}
	var mu sync.Mutex
	var wg sync.WaitGroup
	evctx, stopEvents := context.WithCancel(tab)
	defer stopEvents()
	console := chromedp.Console(evctx) // starts the browser
	requests := chromedp.Events(evctx, network.RequestWillBeSent)
	wg.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				p.Console = append(p.Console, m.String())
				mu.Unlock()
			}
		}
	})
	wg.Go(func() {
		for e, err := range requests {
			if err != nil {
				return
			}
			if e.Request == nil {
				continue
			}
			mu.Lock()
			p.Requests = append(p.Requests, e.Request.URL)
			mu.Unlock()
		}
	})
	finish := func() {
		stopEvents()
		wg.Wait()
	}

	if err := chromedp.Do(tab,
		chromedp.EmulateViewport(int64(o.Width), int64(o.Height)),
		chromedp.Navigate(u),
	); err != nil {
		finish()
		return p, fmt.Errorf("opening %s in %s: %w", u, chromium, err)
	}
	if p.Screenshot, err = chromedp.Run(tab, chromedp.FullScreenshot(100)); err != nil {
		finish()
		return p, fmt.Errorf("screenshot of %s: %w", u, err)
	}
	sels, err := json.Marshal(selectors)
	if err != nil {
		finish()
		return p, err
	}
	p.Selectors, err = chromedp.Run(tab, chromedp.Evaluate[[]Selector](fmt.Sprintf(selectorJS, sels)))
	if err != nil {
		finish()
		return p, fmt.Errorf("evaluating the selectors on %s: %w", u, err)
	}
	// Let the last events of the page arrive before the subscriptions end.
	_ = chromedp.Do(tab, chromedp.Sleep(100*time.Millisecond))
	finish()
	for _, r := range p.Requests {
		if !sameFile(r, u) {
			p.Foreign = append(p.Foreign, r)
		}
	}
	return p, nil
}

// sameFile reports whether a request is for the page's own file.
func sameFile(req, page string) bool {
	req, _, _ = strings.Cut(req, "#")
	return req == page
}

// selectorJS unfolds every <details>, then counts the elements each selector
// matches and those a reader can see.
const selectorJS = `(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const visible = e => {
    const r = e.getBoundingClientRect(), st = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none' && parseFloat(st.opacity) > 0;
  };
  return %s.map(s => {
    const els = Array.from(document.querySelectorAll(s));
    return {selector: s, count: els.length, visible: els.filter(visible).length};
  });
})()`

// Check renders page (the bytes of an HTML file) in headless Chromium and
// fails t when the page logs a console error, requests anything but itself,
// or when a selector matches no element or an element nobody can see. It
// writes the screenshot to t's temporary directory as name+".png" and, when
// SOT_SCREENSHOTS is set, to that directory too. It skips t when Chromium is
// missing, unless SOT_REQUIRE_BROWSER=1.
func Check(t testing.TB, name string, page []byte, selectors ...string) *Page {
	t.Helper()
	chromium, err := Chromium()
	if err != nil {
		if Required(EnvRequire) {
			t.Fatalf("%v (%s=%s requires the browser tests)", err, EnvRequire, os.Getenv(EnvRequire))
		}
		t.Skipf("skipping the browser test: %v; %s=1 makes this a failure", err, EnvRequire)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	start := time.Now()
	p, err := Open(ctx, chromium, file, selectors, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s loaded in headless Chromium in %v", name, time.Since(start).Round(time.Millisecond))
	for _, c := range p.Console {
		t.Errorf("console: %s", c)
	}
	for _, r := range p.Foreign {
		t.Errorf("the page requested %s; it must not request anything but itself", r)
	}
	for _, s := range p.Selectors {
		switch {
		case s.Count == 0:
			t.Errorf("no element matches %q", s.Selector)
		case s.Visible < s.Count:
			t.Errorf("%d of the %d elements matching %q are not visible", s.Count-s.Visible, s.Count, s.Selector)
		}
	}
	shot := strings.TrimSuffix(name, filepath.Ext(name)) + ".png"
	if err := os.WriteFile(filepath.Join(dir, shot), p.Screenshot, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv(EnvScreenshots); out != "" {
		if !filepath.IsAbs(out) {
			out = filepath.Join(moduleRoot(), out)
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, shot), p.Screenshot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", filepath.Join(out, shot))
	}
	return p
}

// moduleRoot is the nearest directory above the working directory holding a
// go.mod (a test runs in its package's directory), or the working directory.
func moduleRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := wd; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return wd
		}
		d = parent
	}
}
