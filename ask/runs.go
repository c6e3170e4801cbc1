package ask

import (
	"path/filepath"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
)

// ListRuns lists the questions asked in the project at top (the default
// run directories, .sot/answers/<run-id>), newest first, each with its
// question and, once answered, the sentences of its answer. prices turns
// the journal of a run that did not finish into dollars.
func ListRuns(top string, prices llm.PriceTable) ([]run.Listed, error) {
	return run.ListOf(top, []string{filepath.Join(".sot", "answers", "*")}, prices, describeRun)
}

// ListRun is what ListRuns says of the run in dir (absolute, or relative
// to top), reading no other run; ok is false when dir holds no run.
func ListRun(top, dir string, prices llm.PriceTable) (run.Listed, bool) {
	return run.ListDir(top, dir, prices, describeRun)
}

// describeRun is what a listing says of a question.
func describeRun(e run.Entry, rec *record) run.Described {
	d := run.Described{Kind: "ask", Material: rec.Question, Command: rec.Command}
	if a, done := run.ReadResult[Answer](e, AnswerJSONFile); done {
		d.Finished = &run.Finished{Missing: len(a.Missing), Calls: a.Usage.Calls, CostUSD: a.Usage.CostUSD}
		d.Items = len(a.Sentences)
	}
	return d
}
