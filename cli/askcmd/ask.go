// Package askcmd implements "sot ask": a question put to a corpus of
// knowledge sources, answered by a society of perspective roles.
package askcmd

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/cli/version"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
)

// Options are the flags and arguments of "sot ask".
type Options struct {
	Question string
	Paths    []string
	Intent   string
	Debate   bool
	Groups   string
	// GroupDefs are --group definitions of custom groups.
	GroupDefs []string
	// Compare runs the seed's six configurations; Questions is a file of
	// questions, one a line, for it.
	Compare    bool
	Questions  string
	JSON       bool
	MaxSources int
	Strategy   string
	NoSoT      bool
	// The other ask: settings, each overriding the config when set.
	NoConflicts bool
	NoDebate    bool
	NoDiversity bool
	NoLabels    bool
	MinAgents   int
	Threshold   float64
	// ThresholdSet: --conflict-threshold was given.
	ThresholdSet bool
	OutputDir    string
	Formats      []string
	Stdout       string
	DryRun       bool
	Fresh        bool
	// FollowSymlinks is --follow-symlinks.
	FollowSymlinks bool
}

// NewCmd returns "sot ask".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "ask QUESTION [PATH...]",
		Short: "Answer a question from a corpus of knowledge sources, with a society of perspectives",
		Long: `Answer a question from a corpus of knowledge sources: meeting notes,
transcripts, reports, documents, northstar.LM agent exports.

The sources are the files and directories given after the question (read
recursively), else the config's ask.corpus, else the project's .sot/corpus.
sot indexes them (.sot/index/corpus.db, updated as files change), then:

  1. classifies the question (factual, comparative, aggregative,
     analytical or temporal; --intent overrides) and prints the rule;
  2. retrieves the relevant sources by BM25 with a bonus for recent ones,
     and picks up to --max-sources of them for relevance and variety
     (source type, meeting type, quarter);
  3. gives each source a perspective role (analyst, advocate, critic,
     synthesizer, historian, pragmatist, stakeholder) by the intent and
     the role strategy;
  4. MAP: reads every source at once from its role, each answer citing
     the source with a short quote;
  5. compares the answers: northstar's lexical conflict detector, and for
     analytical and comparative questions (or --debate) a debate step that
     names the tensions between specific points;
  6. REDUCE: writes one answer, which sot checks sentence by sentence (it
     must cite answers that exist, quote what the sources say, and treat
     every tension); what fails is sent back once, then dropped and listed.

With --groups, a question over enough sources (ask.min_agents_for_group_
decomposition, 6) that fall into 2 or more groups, and that is not simple,
is read one group a call instead of one source a call: temporal groups (by
quarter) read as the historian, thematic ones (sot sources group
--thematic names the themes; else shared topic tags) as the synthesizer,
source-type ones as the analyst, and custom groups (--group, or
ask.custom_groups) by whole words of their name: risk words as the critic,
action words as the pragmatist, stakeholder words as the stakeholder,
timeline words as the historian. No two groups share a perspective while
one is unused; tensions between groups are reported as inter-group. sot
sources groups shows the groups before you ask.

ANSWER.md and answer.json land in .sot/answers/<run-id>/ (or --output-dir).
Every finished call is journaled there: after Ctrl-C or a crash, the same
command continues where it stopped and pays for nothing twice. --format
html also writes answer.html (with --compare, compare.html). As with sot
review, a directory holds only the formats its latest run asked for: an
answer.html or compare.html an earlier run wrote there is removed when
html is not asked for again.

The lexical detector compares every pair of answers, and the pairs grow
with the square of the sources (1,000 sources make 499,500). answer.json
counts them all (totalConflicts, totalAgreements) but lists only the 200
strongest conflicts and the 200 strongest agreements, by confidence, with
truncated set when it left some out. --format pairs also writes every
pair to conflict-pairs.ndjson in the run's directory, one JSON line each,
as the detector finds it (with --compare, in each configuration's run
directory); answer.json names it in pairsFile.

With --compare, each configuration's wall time is the one its run's
journal recorded when the calls were made (the time at least one call was
in flight), so a comparison that replays every run, marked "replayed",
reports the same figures; tensions are counted one way in every
configuration, as the lexical detector's conflicts between the readings.

Exit codes: 0 answered; 1 no sentence of the answer stood on its sources
(ANSWER.md lists what the check dropped, and why), or the model wrote no
sentence when asked twice; 2 usage (no question, no
corpus, bad flags); 3 a partial answer (ANSWER.md lists what is missing),
or with --compare a run that failed or has parts missing (the budgets cap
the whole comparison); 130 interrupted.`,
		Example: `  sot ask "Why did the billing migration slip?"
  sot ask "How did the plan for the migration change over the year?" notes/ reports/q3.md
  sot ask --dry-run "What do the teams disagree about?"
  sot ask --no-sot "What did we decide?"          # the control run: plain readings, no roles
  sot ask --stdout json "What risks came up?" | jq .sentences
  sot ask --groups temporal "How did the plan for the migration change over the year?"
  sot ask --group "Launch risks=tags:security,risk" --group "Next steps=tags:action-items" "What stands between us and launch?"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Questions != "" {
				return nil // every argument is a path
			}
			if len(args) == 0 || strings.TrimSpace(args[0]) == "" {
				return cmdutil.UsageError("ask a question: sot ask \"QUESTION\" [PATH...] (see 'sot ask --help')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ThresholdSet = cmd.Flags().Changed("conflict-threshold")
			if o.Questions != "" {
				o.Paths = args
			} else {
				o.Question, o.Paths = args[0], args[1:]
			}
			return Run(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Intent, "intent", "", "the question's intent, instead of the rules: factual, comparative, aggregative, analytical or temporal")
	fl.BoolVar(&o.Debate, "debate", false, "run the debate step whatever the intent")
	fl.BoolVar(&o.Compare, "compare", false, "ask under the seed's six configurations (Control, SoT-Rotating, SoT-Primary, SoT-Debate, SoT-Groups, SoT-Groups+Debate) and print what each cost and found")
	cmdutil.AddFollowSymlinks(fl, &o.FollowSymlinks)
	fl.StringVar(&o.Questions, "questions", "", "with --compare: a file of questions, one a line, to compare over (then every argument is a path)")
	fl.BoolVar(&o.JSON, "json", false, "with --compare: print the comparison as JSON")
	fl.StringVar(&o.Groups, "groups", "", "read the sources by group, one call a group: temporal (by quarter; temporal:month by month), source (by source type), thematic (by theme), or custom group names, comma-separated; used with ask.min_agents_for_group_decomposition (6) or more sources in 2 or more groups and a question that is not simple (default: ask.groups)")
	fl.StringArrayVar(&o.GroupDefs, "group", nil, `define a custom group and read by it: "NAME=KEY:VALUE[,VALUE][;KEY:VALUE]" with the keys tags, types, from, to (YYYY-MM-DD) and paths (globs from the project's top); repeatable`)
	fl.IntVar(&o.MaxSources, "max-sources", 0, "the most sources to read (default: ask.max_sources, 10)")
	fl.StringVar(&o.Strategy, "strategy", "", "how roles are given: uniform, rotating, adaptive or primary-only (default: ask.role_strategy)")
	fl.BoolVar(&o.NoSoT, "no-sot", false, "the control run: read every source plainly, with no roles, conflicts or debate")
	fl.BoolVar(&o.NoConflicts, "no-conflicts", false, "skip the lexical conflict detector (ask.conflict_detection: false)")
	fl.BoolVar(&o.NoDebate, "no-debate", false, "never run the debate step (ask.debate_phase: false)")
	fl.BoolVar(&o.NoDiversity, "no-diversity", false, "pick sources by relevance alone (ask.diversity_selection: false)")
	fl.BoolVar(&o.NoLabels, "no-perspective-labels", false, "leave the perspective off each contribution of the answer (ask.include_perspective_in_response: false)")
	fl.IntVar(&o.MinAgents, "min-agents", 0, "the fewest relevant sources a society of thought needs (default: ask.min_agents_for_sot, 2)")
	fl.Float64Var(&o.Threshold, "conflict-threshold", 0, "the lexical detector's similarity threshold, 0 to 1 (default: ask.conflict_threshold, else 0.6)")
	fl.StringVar(&o.OutputDir, "output-dir", "", "the run's directory (default .sot/answers/<run-id>); with --compare, where comparison.json and compare.html go (default .sot/answers/compare-<id>)")
	fl.StringSliceVar(&o.Formats, "format", nil, "also write html: answer.html, a report to open in a browser (with --compare, compare.html); pairs: conflict-pairs.ndjson, every pair the lexical detector classified, one JSON line each (ANSWER.md and answer.json are always written). A format not asked for again is removed from the directory")
	fl.StringVar(&o.Stdout, "stdout", "", "also print the answer: markdown, json or html (with --compare: html, the comparison's page)")
	fl.BoolVar(&o.DryRun, "dry-run", false, "show the plan (classification, sources, roles, the sources each cross-source role reads together, calls) and call no model; with --stdout json, print it as JSON")
	fl.BoolVar(&o.Fresh, "fresh", false, "start afresh instead of replaying the run's journal")
	return cmd
}

// Run executes "sot ask"; Ctrl-C stops it with exit code 130 and the
// command that resumes it.
func Run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	return cmdutil.RunScenario(ctx, f, func(ctx context.Context) error { return run(ctx, f, o) })
}

func run(ctx context.Context, f *cmdutil.Factory, o *Options) error {
	if err := ask.CheckFormats(o.Formats, o.Stdout); err != nil {
		return err
	}
	o.Stdout = scenario.FormatName(o.Stdout)
	if o.DryRun && !o.Compare && o.Stdout != "" && o.Stdout != "json" {
		return cmdutil.UsageError("--stdout %s with --dry-run: a dry run writes no answer; use --stdout json for the plan as JSON", o.Stdout)
	}
	for i, fm := range o.Formats {
		o.Formats[i] = scenario.FormatName(fm)
	}
	if o.MaxSources < 0 {
		return cmdutil.UsageError("--max-sources %d: name 1 or more", o.MaxSources)
	}
	cfg, _, err := f.Config()
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	if o.MaxSources > 0 {
		cfg.Ask.MaxSources = o.MaxSources
	}
	if o.Strategy != "" {
		switch o.Strategy {
		case "uniform", "rotating", "adaptive", "primary-only":
			cfg.Ask.RoleStrategy = o.Strategy
		default:
			return cmdutil.UsageError("--strategy %q: use uniform, rotating, adaptive or primary-only", o.Strategy)
		}
	}
	if o.NoSoT {
		cfg.Ask.EnableSoT = false
	}
	if o.Debate && o.NoDebate {
		return cmdutil.UsageError("--debate and --no-debate contradict each other; pick one")
	}
	if o.NoConflicts {
		cfg.Ask.ConflictDetection = false
	}
	if o.NoDebate {
		cfg.Ask.DebatePhase = false
	}
	if o.NoDiversity {
		cfg.Ask.DiversitySelection = false
	}
	if o.NoLabels {
		cfg.Ask.IncludePerspectiveInResponse = false
	}
	switch {
	case o.MinAgents < 0:
		return cmdutil.UsageError("--min-agents %d: name 1 or more", o.MinAgents)
	case o.MinAgents > 0:
		cfg.Ask.MinAgentsForSoT = o.MinAgents
	}
	if o.ThresholdSet {
		if !(o.Threshold >= 0 && o.Threshold <= 1) {
			return cmdutil.UsageError("--conflict-threshold %g: give a number from 0 to 1", o.Threshold)
		}
		cfg.Ask.ConflictThreshold = o.Threshold
	}
	var custom []config.CustomGroup
	for _, d := range o.GroupDefs {
		g, err := config.ParseCustomGroup(d)
		if err != nil {
			return cmdutil.UsageError("--group %v", err)
		}
		custom = append(custom, g)
	}
	ao := &ask.Options{Options: scenario.Options{FollowSymlinks: o.FollowSymlinks, Dir: f.WorkDir(), OutputDir: o.OutputDir, Config: cfg, Getenv: f.Getenv, Fresh: o.Fresh, Formats: o.Formats, Version: version.Get().Version, Command: cmdutil.ResumeCommand(), NewStack: f.NewStack(cfg, cmdutil.StackOptions{})}, Question: o.Question, Paths: o.Paths, Intent: o.Intent, Debate: o.Debate, Groups: o.Groups, CustomGroups: custom, LoadLibrary: f.Library}
	live := cmdutil.NewLive(f, &ao.Hooks)

	if o.Questions != "" && !o.Compare {
		return cmdutil.UsageError("--questions works with --compare")
	}
	if o.Compare {
		return compare(ctx, f, o, ao)
	}
	if !o.DryRun {
		f.Preconnect(cfg) // while the corpus is read
	}
	plan, err := ask.Prepare(ctx, ao)
	if err != nil {
		return err // a user error exits 2 (cmdutil.Code)
	}
	human := f.IO.Out
	if o.Stdout != "" {
		human = f.IO.ErrOut
	}
	printPlan(human, plan)
	if o.DryRun {
		if err := plan.CheckPrices(ao); err != nil {
			return err // as the run would refuse it
		}
		if o.Stdout == "json" {
			return printPlanJSON(f.IO.Out, plan)
		}
		return nil
	}
	// The answers are not review findings: the display counts the calls
	// as the run's journal records them, as sot review and sot debate do.
	live.Plain()
	live.Start(plan.Calls())
	out, err := ask.Execute(ctx, plan, ao)
	calls := live.Stop()
	if err != nil {
		return cmdutil.ExecuteError(err)
	}
	if err := printAnswer(f.IO.Out, o.Stdout, out.Answer); err != nil {
		return err
	}
	summarize(human, out, calls)
	err = out.Verdict()
	var partial *ask.PartialError
	if errors.As(err, &partial) {
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: err}
	}
	return cmdutil.Verdict(err)
}
