package review

import (
	"context"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm/llmtest"
)

func TestDbgTiming(t *testing.T) {
	repo := benchRepo(t, 3, 40)
	srv := llmtest.NewServer(llmtest.Config{Latency: 300 * time.Millisecond})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Perspectives = "premortem,red-team"
	for i := 0; i < 3; i++ {
		s := time.Now()
		p, err := Prepare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Log("prepare", time.Since(s))
		s = time.Now()
		n0 := srv.Count()
		_, err = Execute(context.Background(), p, o)
		end := time.Since(s)
		recs := srv.Requests()[n0:]
		t.Log("execute", end, "first req", recs[0].Time.Sub(s), "last spec", recs[17].Time.Sub(s), "triage", recs[18].Time.Sub(s))
	}
}
