package mcpcmd

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/review"
)

// Outcome is what a run came to, or how far it is.
type Outcome struct {
	RunID    string `json:"run_id"`
	Scenario string `json:"scenario"`
	// State is where the run is: running, done, cancelled, interrupted.
	State string `json:"state"`
	// Verdict says what a run that ended came to: ok; fail (a review's
	// findings at or above fail_on, or no call succeeded); partial (parts
	// are missing: the outputs list them); usage (the options were
	// refused: see message); interrupted; cancelled.
	Verdict  string  `json:"verdict,omitempty"`
	ExitCode *int    `json:"exit_code,omitempty"`
	Calls    int     `json:"calls"`
	CostUSD  float64 `json:"cost_usd"`
	// Items counts what the run produced: a review's findings, an
	// answer's sentences, a debate's branches.
	Items   int `json:"items"`
	Missing int `json:"missing,omitempty"`
	// Done and Total are the calls finished and planned so far.
	Done  int `json:"calls_done,omitempty"`
	Total int `json:"calls_planned,omitempty"`
	// OutputDir is the run's directory, relative to the project root;
	// Outputs are its files as resources.
	OutputDir string   `json:"output_dir"`
	Outputs   []string `json:"outputs,omitempty"`
	// Files are the same files as paths relative to the project root.
	Files []string `json:"files,omitempty"`
	// Message is the last thing the run said: its error when it failed.
	Message string `json:"message,omitempty"`
}

// listed finds a job's run as sot runs lists it, reading that run alone:
// a status costs the same in a project of one run and of a thousand.
func (s *Server) listed(j Job) (run.Listed, bool) {
	lists := map[string]func(string, string, llm.PriceTable) (run.Listed, bool){"review": review.ListRun, "ask": ask.ListRun, "debate": debate.ListRun}
	list, ok := lists[j.Scenario]
	if !ok {
		return run.Listed{}, false
	}
	return list(s.top, j.Dir, s.prices)
}

// verdicts names the exit codes of a run's command.
var verdicts = map[int]string{0: "ok", 1: "fail", 2: "usage", 3: "partial", 130: "interrupted"}

// outcome is what a job's run came to, from its record, its run's
// directory and its output.
func (s *Server) outcome(j Job) Outcome {
	o := Outcome{RunID: j.ID, Scenario: j.Scenario, State: j.State, ExitCode: j.Exit, OutputDir: j.Dir}
	if l, ok := s.listed(j); ok {
		o.Calls, o.CostUSD, o.Items, o.Missing = l.Calls, l.CostUSD, l.Items, l.Missing
	}
	if j.State == JobRunning {
		p, _ := s.Jobs.progress(j.ID, 0, Progress{})
		o.Done, o.Total, o.Message = p.Done, p.Total, p.Line
		return o
	}
	switch {
	case j.State == JobCancelled:
		o.Verdict = "cancelled"
	case j.Exit != nil:
		o.Verdict = verdicts[*j.Exit]
		if o.Verdict == "" {
			o.Verdict = "fail"
		}
	case j.State == JobInterrupted:
		o.Verdict = "interrupted"
	default:
		o.Verdict = "ok"
		if o.Missing > 0 {
			o.Verdict = "partial"
		}
	}
	for _, f := range s.outputs(j) {
		o.Outputs = append(o.Outputs, runURI(j.ID, f))
		o.Files = append(o.Files, filepath.Join(j.Dir, f))
	}
	if o.Verdict != "ok" {
		o.Message = lastSaid(s.Jobs.Log(j.ID, 4<<10))
	}
	return o
}

// lastSaid is the last line of a command's output that is not a status
// line.
func lastSaid(log string) string {
	lines := strings.Split(strings.TrimSpace(log), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !progressLine.Re().MatchString(l) {
			return l
		}
	}
	return ""
}

// outputs are the files a job's run wrote, as its record lists them.
func (s *Server) outputs(j Job) []string {
	entries := run.ListDirs(s.top, []string{j.Dir}, nil, run.Key())
	if len(entries) == 0 {
		return nil
	}
	files := append([]string(nil), entries[0].State.Written...)
	sort.Strings(files)
	return files
}

func runURI(id, file string) string { return "sot://runs/" + id + "/" + file }
