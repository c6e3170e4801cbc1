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
	return run.ListOf(top, []string{filepath.Join(".sot", "answers", "*")}, prices, func(e run.Entry, rec *record) run.Described {
		d := run.Described{Kind: "ask", Material: rec.Question, Command: rec.Command}
		if a, done := run.ReadResult[Answer](e, AnswerJSONFile); done {
			d.Finished = &run.Finished{Missing: len(a.Missing), Calls: a.Usage.Calls, CostUSD: a.Usage.CostUSD}
			d.Items = len(a.Sentences)
		}
		return d
	})
}
