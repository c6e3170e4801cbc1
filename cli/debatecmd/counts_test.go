package debatecmd

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// The live count and the summary are the journal's: a debate's progress
// lines end on as many calls done as the run's journal has records, the
// summary says the same number, summaries and answers the response cache
// gave included; run again, every call is shown replayed, not as new, and
// the count is the same.
func TestCountsMatchTheJournal(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, ".cache"))
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	passage := filepath.Join(dir, "passage.txt")
	if err := os.WriteFile(passage, []byte("Because I could not stop for Death,\nHe kindly stopped for me;\nThe carriage held but just ourselves\nAnd Immortality.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	args := []string{"--rounds", "1", "--branch-rounds", "1", "--output-dir", outDir, passage}
	progress := regexp.MustCompile(`\((\d+) of (\d+) calls done`)
	summary := regexp.MustCompile(`(?m)^sot: (\d+) call\(s\) in \d+ step\(s\)[^\n]*$`)
	for i, run := range []string{"first", "again"} {
		out, errOut, code := runSot(t, dir, srv, args...)
		if code != 0 {
			t.Fatalf("%s run: exit %d:\n%s\n%s", run, code, out, errOut)
		}
		b, err := os.ReadFile(filepath.Join(outDir, "journal.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		records := bytes.Count(b, []byte("\n"))
		lines := progress.FindAllStringSubmatch(errOut, -1)
		if len(lines) != records {
			t.Errorf("%s run: %d progress lines for %d journal records:\n%s", run, len(lines), records, errOut)
		}
		if len(lines) == 0 {
			t.Fatalf("%s run: no progress line:\n%s", run, errOut)
		}
		if done, _ := strconv.Atoi(lines[len(lines)-1][1]); done != records {
			t.Errorf("%s run: the display ends on %d calls done, the journal holds %d:\n%s", run, done, records, errOut)
		}
		m := summary.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s run: no summary line:\n%s", run, out)
		}
		if n, _ := strconv.Atoi(m[1]); n != records {
			t.Errorf("%s run: the summary says %q, the journal holds %d records", run, m[0], records)
		}
		if i == 0 {
			continue
		}
		if strings.Contains(errOut, " done in ") || strings.Count(errOut, "replayed from the journal (") != records {
			t.Errorf("a replayed call is shown as new:\n%s", errOut)
		}
		if want := "(" + strconv.Itoa(records) + " replayed from the journal)"; !strings.HasSuffix(m[0], want) {
			t.Errorf("the summary %q does not say %s", m[0], want)
		}
	}
}
