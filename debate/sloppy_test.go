package debate

import (
	"path/filepath"
	"testing"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/llm/llmtest"
)

// A graph debate over two passages, with a model that adds a key to every
// object and wraps its JSON in prose and a fenced block, completes whole.
func TestGraphDebateUnderSloppyModels(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	srv := llmtest.NewServer(llmtest.Config{ExtraKey: true, WrapJSON: true, Rules: []llmtest.Rule{{Respond: graphResponder}}})
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
		t.Fatalf("%d debates", len(outs))
	}
	g, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Missing) != 0 || len(g.Nodes) < 4 {
		t.Errorf("%d nodes, missing %+v", len(g.Nodes), g.Missing)
	}
}
