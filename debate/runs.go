package debate

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
)

// ListRuns lists the debates of the project at top (the default run
// directories, .sot/debates/<run-id>), newest first, each with its passage
// and, once written, its branches. prices turns the journal of a run that
// did not finish into dollars.
func ListRuns(top string, prices llm.PriceTable) ([]run.Listed, error) {
	return run.ListOf(top, []string{filepath.Join(".sot", "debates", "*")}, prices, func(e run.Entry, rec *record) run.Described {
		d := run.Described{Material: rec.Passage, Command: rec.Command}
		if res, done := readResult(e.Path()); done {
			d.Finished = &run.Finished{Missing: len(res.Missing), Calls: res.Usage.Calls, CostUSD: res.Usage.CostUSD}
			d.Items = len(res.Branches)
		}
		return d
	})
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
