package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const jsonl = `{"instance_id": "ext-1", "language": "python", "patch": "diff --git a/app/db.py b/app/db.py\n--- a/app/db.py\n+++ b/app/db.py\n@@ -10,3 +10,4 @@ def find(name):\n     conn = connect()\n-    return conn.execute(\"SELECT 1\")\n+    q = \"SELECT * FROM t WHERE n = '%s'\" % name\n+    return conn.execute(q)\n     # done\n", "comments": [{"path": "app/db.py", "line": 11, "body": "SQL built with string formatting: injection."}]}
{"id": "ext-2", "diff": "--- /dev/null\n+++ b/README.md\n@@ -0,0 +1,2 @@\n+# Title\n+Some text.\n", "issues": []}
`

// A public benchmark's JSONL becomes cases: the line is the line
// the diff gives it, in a repository made from the diff, and a line
// without issues is a clean case.
func TestImportJSONL(t *testing.T) {
	cases, err := ImportJSONL("bench.jsonl", strings.NewReader(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Kind != KindDefect || cases[1].Kind != KindClean {
		t.Fatalf("cases %+v", cases)
	}
	d := cases[0].Defects[0]
	if d.File != "app/db.py" || d.Start() != 11 || d.Category != "injection" {
		t.Errorf("the issue became %+v", d)
	}
	after := strings.Split(string(cases[0].After["app/db.py"]), "\n")
	if !strings.Contains(after[10], "SELECT * FROM t WHERE n") {
		t.Errorf("line 11 of the rebuilt file is %q", after[10])
	}
	dir := filepath.Join(t.TempDir(), "repo")
	if err := cases[0].Repo(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "app", "db.py"))
	if !strings.Contains(string(b), "% name") {
		t.Errorf("the repository's file: %q", b)
	}
	if _, err := ImportJSONL("bad.jsonl", strings.NewReader(`{"id": "x"}`+"\n")); err == nil || !strings.Contains(err.Error(), "bad.jsonl:1: case x: no diff") {
		t.Errorf("a line without a diff: %v", err)
	}
}
