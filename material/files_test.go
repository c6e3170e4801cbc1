package material

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// The files a run driven on a worker is sent: what git tracks and does not
// ignore, .git and .sot, what the command names even when ignored, and
// never a credentials file or a skipped directory.
func TestProjectFiles(t *testing.T) {
	r := newRepo(t)
	r.write(".gitignore", "build/\nout/\n")
	r.write("app.go", "package app\n")
	r.write(".env", "OPENAI_API_KEY=sk-secret\n")
	r.write("build/app.bin", "binary")
	r.write("out/journal.jsonl", "{}\n")
	r.write(".sot/config.yaml", "model: x\n")
	r.write(".sot/mcp/jobs/1.json", "{}\n")
	r.write("new.go", "package app\n")
	r.git("add", "app.go", ".gitignore")
	r.git("commit", "-qm", "init")
	files, err := ProjectFiles(context.Background(), r.dir, []string{"out"}, func(d string) bool { return d == ".sot/mcp" })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".gitignore", "app.go", "new.go", "out/journal.jsonl", ".sot/config.yaml", ".git/HEAD"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is not sent (sent: %v)", want, files)
		}
	}
	for _, f := range files {
		if f == ".env" || strings.HasPrefix(f, "build/") || strings.HasPrefix(f, ".sot/mcp/") {
			t.Errorf("%s is sent", f)
		}
	}
}
