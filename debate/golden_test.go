package debate

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

var requestID = regexp.MustCompile(`req_llmtest_[0-9]+`)

var (
	update       = flag.Bool("update", false, "rewrite the golden files in testdata/golden")
	updateRundir = flag.Bool("update-rundir", false, "also rewrite the committed run directory testdata/golden/rundir: only when breaking the resumes of existing runs is intended")
)

// goldenKey makes the user's key the committed one, so that the golden
// runs have the same nonce, and the committed run directory's record the
// user's signature.
func goldenKey(t *testing.T) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join("testdata", "golden", "nonce.key"))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "sot"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "sot", "nonce.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", cache)
}

// goldenClock is the clock of the golden runs: every output that records a
// time reads it, so the files are the same on every run.
func goldenClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// The outputs of two fixed debates, byte for byte: a generated ensemble
// with one observer regenerated, and a partial debate whose observers asked
// a duplicate question and one of whose branches failed. go test ./debate
// -run Golden -update rewrites them.
func TestGolden(t *testing.T) {
	dup := "What is the slow ride like from inside the carriage, and why does the speaker feel no haste at all?"
	for _, tc := range []struct {
		name    string
		rules   []llmtest.Rule
		edit    func(*Options)
		partial bool
	}{
		{name: "generated", rules: []llmtest.Rule{{Respond: generating}}, edit: func(o *Options) { o.Observers = "generate:3" }},
		{name: "partial", partial: true, rules: []llmtest.Rule{
			{Respond: func(r *llmtest.Recorded) llmtest.Reply {
				if u := unfenced(r.LastUser()); strings.Contains(u, branchQuestions[2].Question) && strings.Contains(u, "Nobody has spoken yet in the branch debate") {
					return llmtest.Reply{Fault: llmtest.Fault500}
				}
				if r.SchemaName == questionSchemaName && strings.Contains(r.System, "# You are The Materialist Historian") {
					a := questionReply("The Materialist Historian")
					a["question"] = dup
					return llmtest.Reply{JSON: a}
				}
				return responder(r)
			}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{Rules: tc.rules})
			defer srv.Close()
			goldenKey(t)
			o := testOptionsIn(t, testProject(t), srv.OpenAIBaseURL(), nil)
			o.Rounds, o.BranchRounds, o.Now = 1, 1, goldenClock
			if tc.edit != nil {
				tc.edit(o)
			}
			p, out := runDebate(t, o)
			if err := out.Verdict(); (err != nil) != tc.partial {
				t.Fatalf("verdict %v", err)
			}
			dir := filepath.Join("testdata", "golden", tc.name)
			names := []string{LogFile, ReportFile, JSONFile}
			if len(out.Result.Observers) > 0 {
				names = append(names, EnsembleFile)
			}
			for _, br := range out.Result.Branches {
				names = append(names, BranchFile(br.N))
			}
			if *updateRundir && tc.name == "generated" {
				rd := filepath.Join("testdata", "golden", "rundir", tc.name)
				if err := os.MkdirAll(rd, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"run.json", "journal.jsonl"} {
					b, err := os.ReadFile(filepath.Join(p.OutputDir, name))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(rd, name), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, name := range names {
				got, err := os.ReadFile(filepath.Join(p.OutputDir, name))
				if err != nil {
					t.Fatal(err)
				}
				// llmtest numbers requests as they arrive, and the calls of
				// one step arrive in any order.
				got = requestID.ReplaceAll(got, []byte("req_llmtest_N"))
				path := filepath.Join(dir, name)
				if *update {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to write it)", err)
				}
				if string(got) != string(want) {
					t.Errorf("%s differs from %s (run with -update after checking the change):\n%s", name, path, firstDiff(string(want), string(got)))
				}
			}
		})
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return "(same lines)"
}

// A run directory written by earlier code (testdata/golden/rundir) is
// replayed from its journal with no call reaching the provider, into the
// outputs the golden run wrote: a change that alters any request of a
// debate breaks the resume of every interrupted run, and fails here. go
// test ./debate -run Golden -update -update-rundir rewrites it, which
// should happen only when that is intended.
func TestGoldenRundirReplays(t *testing.T) {
	goldenKey(t)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Fault: llmtest.Fault500}}})
	defer srv.Close()
	top := testProject(t)
	dir := filepath.Join(top, "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("testdata", "golden", "rundir", "generated")
	for _, name := range []string{"run.json", "journal.jsonl"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptionsIn(t, top, srv.OpenAIBaseURL(), nil)
	o.Rounds, o.BranchRounds, o.Now, o.Observers, o.OutputDir = 1, 1, goldenClock, "generate:3", dir
	_, out := runDebate(t, o)
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the replay sent %d request(s); the committed journal no longer answers this code's requests", n)
	}
	if err := out.Verdict(); err != nil {
		t.Fatal(err)
	}
	if u := out.Result.Usage; u.Replayed != u.Calls || u.NewCalls != 0 {
		t.Errorf("usage %+v", u)
	}
	for _, name := range []string{ReportFile, BranchFile(1), BranchFile(2), BranchFile(3), EnsembleFile} {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		want, _ := os.ReadFile(filepath.Join("testdata", "golden", "generated", name))
		if string(got) != string(want) {
			t.Errorf("the replayed %s differs from the golden one:\n%s", name, firstDiff(string(want), string(got)))
		}
	}
	got, _ := os.ReadFile(filepath.Join(dir, LogFile))
	want, _ := os.ReadFile(filepath.Join("testdata", "golden", "generated", LogFile))
	g, _, _ := strings.Cut(string(got), "## Session Complete")
	w, _, _ := strings.Cut(string(want), "## Session Complete")
	if g != w {
		t.Errorf("the replayed log differs from the golden one:\n%s", firstDiff(w, g))
	}
}
