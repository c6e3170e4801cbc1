package debate

import (
	"path/filepath"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
)

// ListRuns lists the debates of the project at top (the default run
// directories, .sot/debates/<run-id>), newest first, each with its passage
// and, once written, its branches. prices turns the journal of a run that
// did not finish into dollars.
func ListRuns(top string, prices llm.PriceTable) ([]run.Listed, error) {
	return run.ListOf(top, []string{filepath.Join(".sot", "debates", "*")}, prices, describeRun)
}

// ListRun is what ListRuns says of the run in dir (absolute, or relative
// to top), reading no other run; ok is false when dir holds no run.
func ListRun(top, dir string, prices llm.PriceTable) (run.Listed, bool) {
	return run.ListDir(top, dir, prices, describeRun)
}

// describeRun is what a listing says of a debate.
func describeRun(e run.Entry, rec *record) run.Described {
	d := run.Described{Kind: "debate", Material: rec.Passage, Command: rec.Command}
	if res, done := run.ReadResult[Result](e, JSONFile); done {
		d.Finished = &run.Finished{Missing: len(res.Missing), Calls: res.Usage.Calls, CostUSD: res.Usage.CostUSD}
		d.Items = len(res.Branches)
	}
	return d
}
