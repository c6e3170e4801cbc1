package ask

import (
	"encoding/json"
	"os"
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
		d := run.Described{Material: rec.Question, Command: rec.Command}
		if a, done := readAnswer(e.Path()); done {
			d.Finished = &run.Finished{Missing: len(a.Missing), Calls: a.Usage.Calls, CostUSD: a.Usage.CostUSD}
			d.Items = len(a.Sentences)
		}
		return d
	})
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
