package ask

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
)

// RunInfo describes one question's run directory.
type RunInfo struct {
	ID       string    `json:"run_id"`
	Dir      string    `json:"dir"`
	Created  time.Time `json:"created"`
	Question string    `json:"question"`
	// State is one of engine/run's statuses: finished, partial,
	// interrupted, running, not yours.
	State     string  `json:"state"`
	Calls     int     `json:"calls"`
	CostUSD   float64 `json:"cost_usd"`
	Sentences int     `json:"sentences"`
	Missing   int     `json:"missing,omitempty"`
	// Resume is the command that asked, which continues the run (or, once
	// it finished, writes it again without a call).
	Resume string `json:"resume,omitempty"`
}

// ListRuns lists the questions asked in the project at top (the default
// run directories, .sot/answers/<run-id>), newest first. prices turns the
// journal of a run that did not finish into dollars.
func ListRuns(top string, prices llm.PriceTable) ([]RunInfo, error) {
	entries, err := run.List(top, []string{filepath.Join(".sot", "answers", "*")}, func() any { return &record{} }, run.Key())
	if err != nil {
		return nil, err
	}
	out := make([]RunInfo, 0, len(entries))
	for _, e := range entries {
		rec, _ := e.State.Payload.(*record)
		if rec == nil {
			rec = &record{}
		}
		r := RunInfo{ID: e.State.RunID, Dir: e.Dir, Created: e.State.Created, Question: rec.Question}
		var fin *run.Finished
		if a, done := readAnswer(e.Path()); done {
			fin = &run.Finished{Missing: len(a.Missing), Calls: a.Usage.Calls, CostUSD: a.Usage.CostUSD}
			r.Sentences = len(a.Sentences)
		}
		r.State, r.Missing, r.Calls, r.CostUSD = e.Status(fin, prices)
		if e.State.Authentic {
			r.Resume = rec.Command
		}
		out = append(out, r)
	}
	return out, nil
}

func readAnswer(dir string) (*Answer, bool) {
	b, err := os.ReadFile(filepath.Join(dir, AnswerJSONFile))
	if err != nil {
		return nil, false
	}
	var a Answer
	if json.Unmarshal(b, &a) != nil {
		return nil, false
	}
	return &a, true
}
