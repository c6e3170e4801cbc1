package middleware

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

func TestCacheServesRepeatedRequests(t *testing.T) {
	p, srv := backend(t, llmtest.Config{})
	c, err := NewCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := c.Wrap(p)
	first := complete(t, w, ask(1))
	relabelled := ask(1)
	relabelled.Label = "another/step"
	second := complete(t, w, relabelled)
	if srv.Count() != 1 || c.Hits() != 1 {
		t.Fatalf("%d requests, %d hits; the label must not change the key", srv.Count(), c.Hits())
	}
	if second.Text != first.Text || second.Source != llm.SourceCache || first.Source != llm.SourceLive {
		t.Errorf("cached answer %+v vs %+v", second, first)
	}
	warmer := ask(1)
	warmer.Temperature = llm.Float(0.9)
	complete(t, w, warmer)
	if srv.Count() != 2 {
		t.Error("a different temperature is a different request")
	}
}

func TestCacheToleratesDamage(t *testing.T) {
	dir := t.TempDir()
	p, srv := backend(t, llmtest.Config{})
	c, _ := NewCache(dir)
	req := ask(1)
	complete(t, c.Wrap(p), req)
	key := req.Key()
	if err := os.WriteFile(filepath.Join(dir, key[:2], key+".json"), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	complete(t, c.Wrap(p), ask(1))
	if srv.Count() != 2 {
		t.Errorf("a damaged entry should be a miss and be rewritten: %d requests", srv.Count())
	}
	complete(t, c.Wrap(p), ask(1))
	if srv.Count() != 2 {
		t.Error("the rewritten entry should be served")
	}
}
