package mcpcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/config"
)

// Tool arguments come from a model, so they are untrusted, as a project's
// own files are: each becomes a flag of the sot command the run is (the
// value always joined to its flag, the rest after "--", so that no value
// is read as another flag), paths must stay inside the project, a model
// that would run a program is refused, and a budget may be lowered below
// the user's, never raised.

// Common are the options every run tool takes.
type Common struct {
	Model     string   `json:"model,omitempty" jsonschema:"the model the run calls, provider:model or an alias from the user's configuration (default: the configuration's); a model that would run a program is refused"`
	MaxCalls  int      `json:"max_calls,omitempty" jsonschema:"stop after this many model calls; may only lower the user's budget"`
	MaxTokens int      `json:"max_tokens,omitempty" jsonschema:"stop after this many input and output tokens; may only lower the user's budget"`
	MaxCost   float64  `json:"max_cost,omitempty" jsonschema:"stop after spending this many US dollars; may only lower the user's budget"`
	Formats   []string `json:"formats,omitempty" jsonschema:"machine outputs to write besides Markdown, as the command's --format takes them (review: json, sarif, rdjson, html; ask: html, pairs; debate: json)"`
	Fresh     bool     `json:"fresh,omitempty" jsonschema:"start the run afresh instead of replaying the journal of an earlier run of the same work"`
	Wait      bool     `json:"wait,omitempty" jsonschema:"wait until the run ends and return its outcome, with progress notifications meanwhile; by default the call returns the run id at once and run_result gives the outcome later"`
}

// ReviewArgs are the review tool's options: those of sot review.
type ReviewArgs struct {
	Diff             string   `json:"diff,omitempty" jsonschema:"the git range to review: A..B, A...B or one revision (default: the working tree against HEAD)"`
	Staged           bool     `json:"staged,omitempty" jsonschema:"review the staged changes"`
	Since            string   `json:"since,omitempty" jsonschema:"re-review only what changed after an earlier review of this diff: auto (the last review the change descends from), a run id, or a commit; findings on unchanged lines are carried over, fixed ones reported resolved, dismissed ones kept out"`
	Paths            []string `json:"paths,omitempty" jsonschema:"limit the diff to these files and directories, relative to the project root"`
	Artifacts        []string `json:"artifacts,omitempty" jsonschema:"review these documents or directories instead of a diff (relative to the project root)"`
	Text             string   `json:"text,omitempty" jsonschema:"review this text (a freeform review) instead of a diff"`
	Framing          string   `json:"framing,omitempty" jsonschema:"with text: the preamble that tells the specialists what the text is"`
	Specialists      string   `json:"specialists,omitempty" jsonschema:"all (default), a comma list of specialist names, or adaptive:N"`
	Perspectives     string   `json:"perspectives,omitempty" jsonschema:"lenses: auto (default), none, or a comma list"`
	PerspectiveCap   int      `json:"perspective_cap,omitempty" jsonschema:"the most lenses per specialist (default 2)"`
	InteractionMode  string   `json:"interaction_mode,omitempty" jsonschema:"parallel (default) or debate"`
	Context          string   `json:"context,omitempty" jsonschema:"only specialists declaring this context (default implementation for diffs and documents)"`
	SpecialistModels string   `json:"specialist_models,omitempty" jsonschema:"none, a model pool, pinned specialist=model pairs, or a mix, comma separated"`
	ContextFile      string   `json:"context_file,omitempty" jsonschema:"read the review context from this YAML or JSON file, relative to the project root"`
	WorkflowContext  string   `json:"workflow_context,omitempty" jsonschema:"read the Final Review fields of this PAW WorkflowContext.md, relative to the project root"`
	MaxPromptTokens  int      `json:"max_prompt_tokens,omitempty" jsonschema:"prompt budget per call; larger material is split into chunks (default: from the models' context windows)"`
	Mode             string   `json:"mode,omitempty" jsonschema:"society-of-thought (default), single-model or multi-model"`
	Models           []string `json:"models,omitempty" jsonschema:"the models of mode multi-model"`
	FailOn           string   `json:"fail_on,omitempty" jsonschema:"the severity at which the outcome's verdict is fail: must-fix, should-fix, consider or never (default)"`
	NoTools          bool     `json:"no_tools,omitempty" jsonschema:"keep the specialists to the material: no read-only looks at the project"`
	Seed             int64    `json:"seed,omitempty" jsonschema:"fix the order of the synthesis inputs"`
	Common
}

// AskArgs are the ask tool's options: those of sot ask.
type AskArgs struct {
	Question    string   `json:"question" jsonschema:"the question to answer from the project's knowledge sources"`
	Paths       []string `json:"paths,omitempty" jsonschema:"the files or directories to read (relative to the project root; default: the configured corpus)"`
	Intent      string   `json:"intent,omitempty" jsonschema:"factual, comparative, aggregative, analytical or temporal, instead of the rules that classify the question"`
	Debate      bool     `json:"debate,omitempty" jsonschema:"run the debate step whatever the intent"`
	Groups      string   `json:"groups,omitempty" jsonschema:"read the sources by group, one call a group: temporal, source, thematic, or custom group names"`
	MaxSources  int      `json:"max_sources,omitempty" jsonschema:"the most sources to read (default 10)"`
	Strategy    string   `json:"strategy,omitempty" jsonschema:"how roles are given: uniform, rotating, adaptive or primary-only"`
	NoSoT       bool     `json:"no_sot,omitempty" jsonschema:"the control run: read every source plainly, with no roles, conflicts or debate"`
	NoConflicts bool     `json:"no_conflicts,omitempty" jsonschema:"skip the lexical conflict detector"`
	NoDebate    bool     `json:"no_debate,omitempty" jsonschema:"never run the debate step"`
	NoDiversity bool     `json:"no_diversity,omitempty" jsonschema:"pick sources by relevance alone"`
	MinAgents   int      `json:"min_agents,omitempty" jsonschema:"the fewest relevant sources a society of thought needs (default 2)"`
	GroupDefs   []string `json:"group_defs,omitempty" jsonschema:"custom groups to read by, each NAME=KEY:VALUE[,VALUE][;KEY:VALUE] with the keys tags, types, from, to and paths"`
	Common
}

// DebateArgs are the debate tool's options: those of sot debate.
type DebateArgs struct {
	Passage       string   `json:"passage,omitempty" jsonschema:"the passage to debate, as text"`
	PassageFile   string   `json:"passage_file,omitempty" jsonschema:"or the file that holds it, relative to the project root"`
	Debaters      []string `json:"debaters,omitempty" jsonschema:"the debaters in speaking order (default literalist, symbolist, structuralist)"`
	Rounds        int      `json:"rounds,omitempty" jsonschema:"rounds of the main debate"`
	Turns         string   `json:"turns,omitempty" jsonschema:"sequential (default) or simultaneous"`
	Observers     string   `json:"observers,omitempty" jsonschema:"observer names (comma separated), generate:N, or none"`
	BranchRounds  int      `json:"branch_rounds,omitempty" jsonschema:"rounds of each branch debate"`
	Graph         string   `json:"graph,omitempty" jsonschema:"debate the passage into the argument graph in this JSON file, relative to the project root (created if missing)"`
	GraphBudget   int      `json:"graph_budget,omitempty" jsonschema:"with graph: the most tokens of the graph each debater gets"`
	ObserversFrom string   `json:"observers_from,omitempty" jsonschema:"use the observers of an ensemble.json a debate wrote, relative to the project root"`
	Common
}

// EstimateArgs name a scenario and its options; estimate plans the run
// and calls no model.
type EstimateArgs struct {
	Scenario string      `json:"scenario" jsonschema:"review, ask or debate"`
	Review   *ReviewArgs `json:"review,omitempty" jsonschema:"the review's options, as the review tool takes them"`
	Ask      *AskArgs    `json:"ask,omitempty" jsonschema:"the question's options, as the ask tool takes them"`
	Debate   *DebateArgs `json:"debate,omitempty" jsonschema:"the debate's options, as the debate tool takes them"`
}

// argv builds a command line from flags, refusing what tool arguments may
// not choose.
type argv struct {
	cfg  *config.Config
	top  string
	args []string
	err  error
}

func (a *argv) fail(format string, v ...any) {
	if a.err == nil {
		a.err = fmt.Errorf(format, v...)
	}
}

func (a *argv) str(flag, v string) {
	if v != "" {
		a.args = append(a.args, "--"+flag+"="+v)
	}
}

func (a *argv) num(flag string, v int) {
	if v < 0 {
		a.fail("%s must not be negative", strings.ReplaceAll(flag, "-", "_"))
	}
	if v > 0 {
		a.args = append(a.args, "--"+flag+"="+strconv.Itoa(v))
	}
}

func (a *argv) flag(flag string, v bool) {
	if v {
		a.args = append(a.args, "--"+flag)
	}
}

func (a *argv) list(flag string, vs []string) {
	for _, v := range vs {
		if strings.Contains(v, ",") {
			a.fail("%s: %q holds a comma; give each value as its own item", strings.ReplaceAll(flag, "-", "_"), v)
		}
	}
	if len(vs) > 0 {
		a.args = append(a.args, "--"+flag+"="+strings.Join(vs, ","))
	}
}

// path checks that p names something inside the project and returns it
// relative to the project's top.
func (a *argv) path(what, p string) string {
	if p == "" {
		return ""
	}
	rel := p
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(a.top, p)
		if err != nil {
			a.fail("%s %q is outside the project", what, p)
			return ""
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if !filepath.IsLocal(rel) && rel != "." {
		a.fail("%s %q is outside the project: paths are relative to the project root and stay inside it", what, p)
		return ""
	}
	// A named pipe, socket or device would keep the run reading it
	// forever (a file the user names on the command line may be a pipe on
	// purpose; one a model names may not).
	if fi, err := os.Stat(filepath.Join(a.top, rel)); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		a.fail("%s %q is a named pipe, socket or device; a tool call names files and directories", what, p)
		return ""
	}
	if strings.HasPrefix(rel, "-") {
		rel = "." + string(filepath.Separator) + rel
	}
	return rel
}

// personas checks a comma list of persona names: a name that is a file
// must be inside the project.
func (a *argv) personas(what, v string) string {
	if v == "" {
		return ""
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if strings.HasSuffix(item, ".md") || strings.ContainsRune(item, filepath.Separator) {
			item = a.path(what, item)
		}
		out = append(out, item)
	}
	return strings.Join(out, ",")
}

// model refuses a model that would run a program.
func (a *argv) model(what, m string) {
	if m != "" && a.cfg.RunsProgram(m) {
		a.fail("%s %q would run a program, which a tool call may not choose; name a model of an API provider, or set it in your own configuration", what, m)
	}
}

// common adds the options every run takes.
func (a *argv) common(c Common) {
	a.model("model", c.Model)
	a.str("model", c.Model)
	b := a.cfg.Budget
	lower := func(name string, v, cur float64) bool {
		switch {
		case v < 0:
			a.fail("%s must not be negative", name)
		case v == 0:
			return false
		case cur > 0 && v > cur:
			a.fail("%s %v is above your configuration's %v: a tool call may lower a budget, never raise it", name, v, cur)
		default:
			return true
		}
		return false
	}
	if lower("max_calls", float64(c.MaxCalls), float64(b.MaxCalls)) {
		a.num("max-calls", c.MaxCalls)
	}
	if lower("max_tokens", float64(c.MaxTokens), float64(b.MaxTokens)) {
		a.num("max-tokens", c.MaxTokens)
	}
	if lower("max_cost", c.MaxCost, b.MaxCost) {
		a.args = append(a.args, "--max-cost="+strconv.FormatFloat(c.MaxCost, 'f', -1, 64))
	}
	for _, f := range c.Formats {
		a.str("format", f)
	}
	a.flag("fresh", c.Fresh)
}

// reviewArgs is the sot review command of a review tool call writing
// into dir; input is the file that holds its text, when it has one.
func reviewArgs(cfg *config.Config, top string, r ReviewArgs, dir, input string) ([]string, error) {
	a := &argv{cfg: cfg, top: top, args: []string{"review", "--output-dir=" + dir, "--interactive=false"}}
	a.str("diff", r.Diff)
	a.flag("staged", r.Staged)
	a.str("since", r.Since)
	if r.Text != "" {
		if r.Diff != "" || r.Staged || len(r.Artifacts) > 0 || len(r.Paths) > 0 {
			a.fail("text is a freeform review: it takes no diff, staged, paths or artifacts")
		}
		a.str("type", "freeform")
		a.str("input", input)
		a.str("framing", r.Framing)
	} else if r.Framing != "" {
		a.fail("framing goes with text")
	}
	for _, p := range r.Artifacts {
		a.str("artifacts", a.path("artifact", p))
	}
	a.str("specialists", a.personas("specialist", r.Specialists))
	a.str("context", r.Context)
	if r.SpecialistModels != "" {
		for _, pair := range strings.Split(r.SpecialistModels, ",") {
			_, m, _ := strings.Cut(pair, "=")
			if m == "" {
				m = pair
			}
			a.model("specialist_models", strings.TrimSpace(m))
		}
	}
	a.str("specialist-models", r.SpecialistModels)
	a.str("context-file", a.path("context_file", r.ContextFile))
	a.str("workflow-context", a.path("workflow_context", r.WorkflowContext))
	a.num("max-prompt-tokens", r.MaxPromptTokens)
	a.str("perspectives", r.Perspectives)
	a.num("perspective-cap", r.PerspectiveCap)
	a.str("interaction-mode", r.InteractionMode)
	a.str("mode", r.Mode)
	for _, m := range r.Models {
		a.model("models", m)
	}
	a.list("models", r.Models)
	a.str("fail-on", r.FailOn)
	a.flag("no-tools", r.NoTools)
	if r.Seed != 0 {
		a.args = append(a.args, "--seed="+strconv.FormatInt(r.Seed, 10))
	}
	a.common(r.Common)
	a.args = append(a.args, "--")
	for _, p := range r.Paths {
		a.args = append(a.args, a.path("path", p))
	}
	return a.args, a.err
}

// askArgs is the sot ask command of an ask tool call writing into dir.
func askArgs(cfg *config.Config, top string, q AskArgs, dir string) ([]string, error) {
	a := &argv{cfg: cfg, top: top, args: []string{"ask", "--output-dir=" + dir}}
	if strings.TrimSpace(q.Question) == "" {
		a.fail("question is required")
	}
	a.str("intent", q.Intent)
	a.flag("debate", q.Debate)
	a.str("groups", q.Groups)
	a.num("max-sources", q.MaxSources)
	a.str("strategy", q.Strategy)
	a.flag("no-sot", q.NoSoT)
	a.flag("no-conflicts", q.NoConflicts)
	a.flag("no-debate", q.NoDebate)
	a.flag("no-diversity", q.NoDiversity)
	a.num("min-agents", q.MinAgents)
	for _, g := range q.GroupDefs {
		a.str("group", g)
	}
	a.common(q.Common)
	a.args = append(a.args, "--", q.Question)
	for _, p := range q.Paths {
		a.args = append(a.args, a.path("path", p))
	}
	return a.args, a.err
}

// debateArgs is the sot debate command of a debate tool call writing into
// dir; input is the file that holds its passage text, when it has one.
func debateArgs(cfg *config.Config, top string, d DebateArgs, dir, input string) ([]string, error) {
	a := &argv{cfg: cfg, top: top, args: []string{"debate", "--output-dir=" + dir}}
	file := a.path("passage_file", d.PassageFile)
	switch {
	case d.Passage != "" && d.PassageFile != "":
		a.fail("give passage or passage_file, not both")
	case d.Passage != "":
		file = input
	case d.PassageFile == "":
		a.fail("passage (the text) or passage_file is required")
	}
	var debaters []string
	for _, p := range d.Debaters {
		debaters = append(debaters, a.personas("debater", p))
	}
	a.list("debaters", debaters)
	a.num("rounds", d.Rounds)
	a.str("turns", d.Turns)
	a.str("observers", a.personas("observer", d.Observers))
	a.num("branch-rounds", d.BranchRounds)
	a.str("graph", a.path("graph", d.Graph))
	a.num("graph-budget", d.GraphBudget)
	a.str("observers-from", a.path("observers_from", d.ObserversFrom))
	a.common(d.Common)
	a.args = append(a.args, "--", file)
	return a.args, a.err
}
