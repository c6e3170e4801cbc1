package debate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
)

// RunInfo describes one debate's run directory.
type RunInfo struct {
	ID      string    `json:"run_id"`
	Dir     string    `json:"dir"`
	Created time.Time `json:"created"`
	Passage string    `json:"passage"`
	// State is one of engine/run's statuses: finished, partial,
	// interrupted, running, not yours.
	State    string  `json:"state"`
	Calls    int     `json:"calls"`
	CostUSD  float64 `json:"cost_usd"`
	Branches int     `json:"branches"`
	Missing  int     `json:"missing,omitempty"`
	// Resume is the command that started the debate, which continues it
	// (or, once it finished, writes it again without a call).
	Resume string `json:"resume,omitempty"`
}

// ListRuns lists the debates of the project at top (the default run
// directories, .sot/debates/<run-id>), newest first. prices turns the
// journal of a run that did not finish into dollars.
func ListRuns(top string, prices llm.PriceTable) ([]RunInfo, error) {
	entries, err := run.List(top, []string{filepath.Join(".sot", "debates", "*")}, func() any { return &record{} }, run.Key())
	if err != nil {
		return nil, err
	}
	out := make([]RunInfo, 0, len(entries))
	for _, e := range entries {
		rec, _ := e.State.Payload.(*record)
		if rec == nil {
			rec = &record{}
		}
		r := RunInfo{ID: e.State.RunID, Dir: e.Dir, Created: e.State.Created, Passage: rec.Passage}
		var fin *run.Finished
		if res, done := readResult(e.Path()); done {
			fin = &run.Finished{Missing: len(res.Missing), Calls: res.Usage.Calls, CostUSD: res.Usage.CostUSD}
			r.Branches = len(res.Branches)
		}
		r.State, r.Missing, r.Calls, r.CostUSD = e.Status(fin, prices)
		if e.State.Authentic {
			r.Resume = rec.Command
		}
		out = append(out, r)
	}
	return out, nil
}

func readResult(dir string) (*Result, bool) {
	b, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		return nil, false
	}
	var r Result
	if json.Unmarshal(b, &r) != nil {
		return nil, false
	}
	return &r, true
}
