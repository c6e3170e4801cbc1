package debate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/llm/llmtest"
)

// A graph debate over two passages, against a model that adds a key to
// every object or wraps its JSON in prose and a fenced block (or both),
// completes whole: each debate's verdict is clean, the graph holds every
// node and misses none, and no answer was asked for twice.
func TestGraphDebateUnderSloppyModels(t *testing.T) {
	for _, tc := range []struct {
		name        string
		extra, wrap bool
	}{
		{"an extra key", true, false},
		{"prose and a fence", false, true},
		{"both", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			srv := llmtest.NewServer(llmtest.Config{ExtraKey: tc.extra, WrapJSON: tc.wrap, Rules: []llmtest.Rule{{Respond: graphResponder}}})
			t.Cleanup(srv.Close)
			top := testProject(t)
			path := filepath.Join(top, "g.json")
			o := graphOptions(t, top, srv.OpenAIBaseURL(), nil, path, 0)
			o.Observers = "phenomenologist"
			outs, err := DebateAll(t.Context(), graphPassages(t)[:2], o, GraphHooks{})
			if err != nil {
				t.Fatal(err)
			}
			if len(outs) != 2 {
				t.Fatalf("%d debates, want 2", len(outs))
			}
			for _, out := range outs {
				if err := out.Verdict(); err != nil || len(out.Result.Missing) != 0 || len(out.Result.Branches) == 0 {
					t.Errorf("verdict %v, missing %+v, %d branches", err, out.Result.Missing, len(out.Result.Branches))
				}
			}
			g, err := graph.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Missing) != 0 || len(g.Nodes) < 4 {
				t.Errorf("%d nodes, missing %+v", len(g.Nodes), g.Missing)
			}
			schemas := map[string]int{}
			for _, rec := range srv.Requests() {
				schemas[rec.SchemaName]++
				if strings.Contains(rec.LastUser(), "does not validate") {
					t.Errorf("%s: asked again although the answer could be mended", rec.SchemaName)
				}
			}
			for _, name := range []string{questionSchemaName, synthesisSchemaName, "argument_node", "argument_edge"} {
				if schemas[name] == 0 {
					t.Errorf("no %s call (calls %v): the test does not cover it", name, schemas)
				}
			}
		})
	}
}
