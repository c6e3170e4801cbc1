package debate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/engine/run"
)

// Seed 003's llm workflow through the command: provider, checked from
// the run's journal: every structured answer the debate got (the generated
// observers, the branch questions, the syntheses) was the union object of
// testdata/fakellm-union.yaml, not an instance of its own schema that the
// fake gives a call no rule matches; each was mended on the first try
// (one call, keys the schema does not have ignored, the prototype's
// has_tension among them) and the debate is whole.
func TestDebateThroughLLMCommandEveryAnswerIsTheUnion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fake llm program")
	}
	top := testProject(t)
	o, _ := llmOptions(t, top, "0s")
	abs, err := filepath.Abs("testdata/fakellm-union.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_LLM_CONFIG", abs)
	o.Observers, o.Rounds, o.BranchRounds = "generate:2", 1, 1
	_, out := runDebate(t, o)
	if err := out.Verdict(); err != nil || len(out.Result.Missing) != 0 {
		t.Fatalf("verdict %v, missing %+v", err, out.Result.Missing)
	}

	b, err := os.ReadFile(filepath.Join(out.Plan.OutputDir, run.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var rec struct {
			Label    string `json:"label"`
			Response struct {
				JSON    json.RawMessage `json:"json"`
				Repairs []string        `json:"repairs"`
				Calls   int             `json:"calls"`
			} `json:"response"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("journal line %s: %v", sc.Bytes(), err)
		}
		if len(rec.Response.JSON) == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(rec.Label, "debate/observer/"):
			// An observer that came out too close to the first is
			// generated again (debate/observer/2/again/1): the fake's
			// words hash the prompt, whose fence nonce is the run's, so
			// that happens in some runs. It is still a union answer.
			if !strings.Contains(rec.Label, "/again/") {
				kinds["observer"]++
			}
		case strings.HasPrefix(rec.Label, "debate/question/"):
			kinds["question"]++
		case strings.HasSuffix(rec.Label, "/synthesis"):
			kinds["synthesis"]++
		default:
			t.Errorf("%s: a structured answer the test does not know", rec.Label)
		}
		repairs := strings.Join(rec.Response.Repairs, "; ")
		if !strings.Contains(repairs, `the key "has_tension"`) || !strings.Contains(repairs, `the key "relation"`) {
			t.Errorf("%s: not the union answer (repairs %q)", rec.Label, repairs)
		}
		if rec.Response.Calls > 1 {
			t.Errorf("%s: asked %d times, want once", rec.Label, rec.Response.Calls)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if kinds["observer"] != 2 || kinds["question"] == 0 || kinds["synthesis"] == 0 {
		t.Errorf("structured answers %v: want two observers, questions and syntheses", kinds)
	}
}
