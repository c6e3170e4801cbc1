package browsertest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func chromium(t *testing.T) string {
	t.Helper()
	p, err := Chromium()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return p
}

// The harness sees what a bad page does: a console error, an uncaught
// exception, a request that leaves the file, a missing and a hidden element.
func TestOpenReportsABadPage(t *testing.T) {
	bin := chromium(t)
	file := filepath.Join(t.TempDir(), "bad.html")
	page := `<!DOCTYPE html><html><head><title>bad</title></head><body>
<p id="shown">shown</p><p id="hidden" style="display:none">hidden</p>
<img src="http://127.0.0.1:9/pixel.png" alt="">
<script>console.error("boom"); throw new Error("uncaught");</script>
</body></html>`
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	p, err := Open(ctx, bin, file, []string{"#shown", "#hidden", "#absent"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	console := strings.Join(p.Console, "\n")
	if !strings.Contains(console, "boom") || !strings.Contains(console, "uncaught") {
		t.Errorf("console errors = %q; want boom and the uncaught exception", p.Console)
	}
	if len(p.Foreign) != 1 || !strings.Contains(p.Foreign[0], "127.0.0.1:9/pixel.png") {
		t.Errorf("foreign requests = %q; want the image", p.Foreign)
	}
	want := []Selector{{"#shown", 1, 1}, {"#hidden", 1, 0}, {"#absent", 0, 0}}
	for i, w := range want {
		if i >= len(p.Selectors) || p.Selectors[i] != w {
			t.Errorf("selectors = %+v; want %+v", p.Selectors, want)
			break
		}
	}
	if !bytes.HasPrefix(p.Screenshot, []byte("\x89PNG")) {
		t.Error("the screenshot is not a PNG")
	}
}

// A clean page passes Check, and its screenshot lands in SOT_SCREENSHOTS.
func TestCheckACleanPage(t *testing.T) {
	chromium(t)
	out := t.TempDir()
	t.Setenv(EnvScreenshots, out)
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>ok</title></head><body>
<p class="badge">one</p><details><summary>more</summary><p class="badge">folded</p></details></body></html>`
	p := Check(t, "clean.html", []byte(page), ".badge")
	if len(p.Requests) != 1 {
		t.Errorf("requests = %q; want the file alone", p.Requests)
	}
	if _, err := os.Stat(filepath.Join(out, "clean.png")); err != nil {
		t.Error(err)
	}
}
