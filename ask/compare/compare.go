package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/conflict"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/internal/project"
)

// Configuration is one of the seed's A/B configurations of a question.
type Configuration struct {
	Name string
	// About says what the configuration does, for a reader of the
	// comparison.
	About string
	// Groups is set for the configurations that ask for group
	// decomposition: only they have a group decomposition rate.
	Groups bool
	// apply changes the options and settings of a run into this
	// configuration.
	apply func(o *ask.Options)
}

// Configurations are the seed's six A/B configurations, in its order.
var Configurations = []Configuration{
	{Name: "Control", About: "every source read plainly: no roles, no conflicts, no debate",
		apply: func(o *ask.Options) { o.Config.Ask.EnableSoT = false; noGroups(o) }},
	{Name: "SoT-Rotating", About: "each source read from a role, the intent's roles in turn; no debate step", apply: func(o *ask.Options) {
		o.Config.Ask.RoleStrategy = "rotating"
		o.Config.Ask.DebatePhase = false
		noGroups(o)
	}},
	{Name: "SoT-Primary", About: "each source read from the intent's primary role; no debate step", apply: func(o *ask.Options) {
		o.Config.Ask.RoleStrategy = "primary-only"
		o.Config.Ask.DebatePhase = false
		noGroups(o)
	}},
	{Name: "SoT-Debate", About: "roles in turn, then a debate step that names the tensions",
		apply: func(o *ask.Options) { o.Config.Ask.RoleStrategy = "rotating"; o.Debate = true; noGroups(o) }},
	{Name: "SoT-Groups", About: "the sources read by group, one role a group, when they fall into 2 or more groups; no debate step", Groups: true,
		apply: func(o *ask.Options) { o.Config.Ask.DebatePhase = false; o.Groups = groupsOr(o) }},
	{Name: "SoT-Groups+Debate", About: "the sources read by group, then a debate step", Groups: true,
		apply: func(o *ask.Options) { o.Debate = true; o.Groups = groupsOr(o) }},
}

// noGroups reads the sources one by one, whatever the run or the config
// says of groups.
func noGroups(o *ask.Options) { o.Groups, o.Config.Ask.Groups, o.CustomGroups = "", "", nil }

// groupsOr is the grouping the run asked for (--groups, else ask.groups,
// else the custom groups --group defines), else by quarter.
func groupsOr(o *ask.Options) string {
	switch {
	case o.Groups != "":
		return o.Groups
	case o.Config.Ask.Groups != "":
		return o.Config.Ask.Groups
	case len(o.CustomGroups) > 0:
		return "" // Prepare reads by the run's custom groups
	}
	return "temporal"
}

// configuration is the configuration named name, or false.
func configuration(name string) (Configuration, bool) {
	for _, cf := range Configurations {
		if cf.Name == name {
			return cf, true
		}
	}
	return Configuration{}, false
}

// Measured is what one configuration of one question cost and found.
type Measured struct {
	Question      string  `json:"question"`
	Configuration string  `json:"configuration"`
	RunID         string  `json:"run_id"`
	Calls         int     `json:"calls"`
	InputTokens   int     `json:"input_tokens"`
	CachedTokens  int     `json:"cached_input_tokens"`
	OutputTokens  int     `json:"output_tokens"`
	CostUSD       float64 `json:"cost_usd"`
	// WallMS is the run's wall time as its journal recorded it when the
	// calls were made (see Definitions.WallTime), not how long this
	// invocation took: a replayed run reports the figure of the run that
	// made its calls.
	WallMS int64 `json:"wall_ms"`
	// Replayed is set when this invocation sent no call for the run:
	// every answer came from the run's journal or the response cache.
	Replayed bool `json:"replayed"`
	// FromCache is set when every answer the run journaled came from the
	// response cache: other runs made, and timed, its calls, so it has no
	// wall time of its own (WallMS is 0) and no Latency.
	FromCache bool `json:"all_from_cache,omitempty"`
	// Tensions and Agreements are what the lexical conflict detector finds
	// between the run's readings (see Definitions.Tensions), counted the
	// same way in every configuration, whatever the run itself showed.
	Tensions   int `json:"tensions"`
	Agreements int `json:"agreements"`
	// InterGroupTensions, for a run read by group, are its tensions
	// between the readings of two different groups (two parts of one
	// group too large for a prompt are one group).
	InterGroupTensions *int `json:"inter_group_tensions,omitempty"`
	ByGroup            bool `json:"by_group"`
	// Groups is, for a configuration that asks for groups, how many groups
	// the chosen sources fell into (2 or more: groups existed, whether or
	// not they were used); nil for the other configurations.
	Groups *int `json:"groups,omitempty"`
	// TokenOverhead and Latency are relative to the question's Control run
	// (0.25 is 25% more); Latency compares the recorded wall times, and is
	// nil when either run has none (a failed run, or one FromCache).
	TokenOverhead float64  `json:"token_overhead"`
	Latency       *float64 `json:"latency,omitempty"`
	Missing       int      `json:"missing,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// interGroup reports whether a run read by group has a tension between
// two groups.
func (m Measured) interGroup() bool {
	if m.InterGroupTensions != nil {
		return *m.InterGroupTensions > 0
	}
	return m.Tensions > 0
}

// GroupsExisted reports whether the question's chosen sources fell into
// at least two groups under a configuration that asks for groups.
func (m Measured) GroupsExisted() bool { return m.Groups != nil && *m.Groups >= 2 }

// Rates are the seed's metrics over a set of questions, for one
// configuration. A rate whose denominator is empty, or that does not apply
// to the configuration, is nil.
type Rates struct {
	Configuration string `json:"configuration"`
	// Questions are the questions the configuration answered (a failed
	// run is left out).
	Questions int `json:"questions"`
	// Conflicts are those with at least one tension, and ConflictRate
	// their share (the seed's target band is 15-30%).
	Conflicts    int     `json:"conflicts"`
	ConflictRate float64 `json:"conflict_detection_rate"`
	// For a configuration that asks for groups: WithGroups are the
	// questions whose chosen sources fell into at least two groups, and
	// ByGroup those read by group. GroupRate is ByGroup over WithGroups
	// (the seed's target: over 60%). InterGroupRate is the share of the
	// questions read by group with a tension between groups, InterGroup
	// (the seed's target band: 20-40%).
	WithGroups     *int     `json:"questions_with_groups,omitempty"`
	ByGroup        *int     `json:"questions_by_group,omitempty"`
	InterGroup     *int     `json:"questions_with_inter_group_conflict,omitempty"`
	GroupRate      *float64 `json:"group_decomposition_rate,omitempty"`
	InterGroupRate *float64 `json:"inter_group_conflict_rate,omitempty"`
}

// The seed's targets for the rates and the metadata.
const (
	ConflictRateLow, ConflictRateHigh     = 0.15, 0.30
	GroupRateTarget                       = 0.60
	InterGroupRateLow, InterGroupRateHigh = 0.20, 0.40
)

// MetadataCoverage is the share of the corpus's sources that carry SoT
// metadata, from a northstar export's payload or from sot sources analyze
// (the seed's target: more than 95%).
type MetadataCoverage struct {
	Sources      int     `json:"sources"`
	WithMetadata int     `json:"with_metadata"`
	FromPayload  int     `json:"from_payload"`
	FromAnalysis int     `json:"from_analysis"`
	Coverage     float64 `json:"coverage"`
	Target       float64 `json:"target"`
	MeetsTarget  bool    `json:"meets_target"`
}

// Comparison is a set of questions under every configuration.
type Comparison struct {
	// ID derives from the compared runs' ids, in order: comparing the same
	// runs again gives the same id (see Dir).
	ID string `json:"id"`
	// Definitions say how the figures are counted.
	Definitions Definitions       `json:"definitions"`
	Metadata    *MetadataCoverage `json:"metadata_coverage,omitempty"`
	Runs        []Measured        `json:"runs"`
	Rates       []Rates           `json:"rates"`
}

// Definitions name, in words for the report, how a comparison counts the
// figures that could be counted more than one way. Each holds for every
// configuration alike.
type Definitions struct {
	Tensions string `json:"tensions"`
	WallTime string `json:"wall_time"`
	Replayed string `json:"replayed"`
}

// definitions are a comparison's Definitions, with the detector's
// similarity threshold.
func definitions(threshold float64) Definitions {
	return Definitions{
		Tensions: fmt.Sprintf("the pairs of readings (the answers the sources, or groups, gave) that northstar's lexical conflict detector "+
			"finds in conflict at similarity threshold %.2f; agreements are the pairs it finds in agreement. Counted the same way in every configuration, "+
			"Control included, whatever the run showed: a debate step's own tensions are not counted. The conflict detection rate is the share of "+
			"questions with at least one tension; the inter-group conflict rate, of the questions read by group, those with a tension between two groups", threshold),
		WallTime: "the time at least one of the run's calls was in flight, each from its start to its end as the run's journal recorded them when " +
			"they were made: for a run made in one go, its first call's start to its last call's end. An answer the response cache gave takes no " +
			"time, as another run made the call; a run whose answers all came from the cache has no wall time of its own (-). Latency vs Control " +
			"compares these recorded times",
		Replayed: "this comparison sent no call for the run: every answer came from its journal or the response cache, and its wall time is the one " +
			"recorded when the calls were made",
	}
}

// Compare asks each question under each of the seed's configurations on
// the same corpus, one after the other, and measures every run as its
// journal and meter record it: its tokens and cost, and its wall time
// from the journal (journalWall), so that a run replayed from its journal
// reports what the run that made its calls measured, marked Replayed. Its
// tensions are counted one way in every configuration (Definitions). The
// runs share the response cache, so the calls two configurations have in
// common are paid once, and each keeps its journal, so comparing again
// costs nothing. It also counts the corpus's sources that carry SoT
// metadata, and names the comparison by its runs (Comparison.ID).
// newOptions returns fresh options (with their own copy of the
// configuration) for a question.
func Compare(ctx context.Context, questions []string, newOptions func(question string) *ask.Options) (*Comparison, error) {
	c := &Comparison{}
	threshold := -1.0
	for _, q := range questions {
		var control *Measured
		for _, cf := range Configurations {
			o := newOptions(q)
			cf.apply(o)
			if threshold < 0 {
				threshold = o.Config.Ask.ConflictThreshold
			}
			m := Measured{Question: q, Configuration: cf.Name}
			p, err := ask.Prepare(ctx, o)
			if err == nil && c.Metadata == nil {
				c.Metadata, err = metadataCoverage(ctx, ask.ProjectTop(o.Dir), p)
			}
			if err == nil {
				if cf.Groups {
					n := p.GroupCount
					m.Groups = &n
				}
				var out *ask.Outcome
				if out, err = ask.Execute(ctx, p, o); err == nil {
					err = measure(&m, out, o.Config.Ask.ConflictThreshold)
				}
			}
			if ctx.Err() != nil {
				return c, ctx.Err()
			}
			if err != nil {
				m.Error = err.Error()
			}
			if cf.Name == "Control" {
				mc := m
				control = &mc
			}
			if control != nil && control.Error == "" && m.Error == "" {
				if t := control.InputTokens + control.OutputTokens; t > 0 {
					m.TokenOverhead = float64(m.InputTokens+m.OutputTokens)/float64(t) - 1
				}
				if control.WallMS > 0 && !control.FromCache && !m.FromCache {
					l := float64(m.WallMS)/float64(control.WallMS) - 1
					m.Latency = &l
				}
			}
			c.Runs = append(c.Runs, m)
		}
	}
	c.Definitions = definitions(max(threshold, 0))
	c.Rates = rates(c.Runs)
	c.ID = comparisonID(c.Runs)
	return c, nil
}

// measure fills m with what a configuration's run cost and found: its
// usage, its wall time from its journal, whether it was replayed, and the
// tensions and agreements the lexical detector finds between its readings
// at threshold: the run's ask.conflict_threshold, which its plan and its
// answer's conflict summary used too.
func measure(m *Measured, out *ask.Outcome, threshold float64) error {
	a := out.Answer
	m.RunID, m.ByGroup, m.Missing = a.RunID, a.ByGroup, len(a.Missing)
	u := a.Usage
	m.Calls, m.InputTokens, m.CachedTokens, m.OutputTokens, m.CostUSD = u.Calls, u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.CostUSD
	m.Replayed = u.NewCalls == 0 && u.Replayed+u.CacheHits > 0
	wall, made, cached, err := journalWall(filepath.Join(out.Plan.OutputDir, run.JournalFile))
	if err != nil {
		return err
	}
	m.WallMS, m.FromCache = wall.Milliseconds(), made == 0 && cached > 0
	// Only the counts are wanted: no pair is listed, and the inter-group
	// conflicts are counted as the pairs go by.
	inter := 0
	an, err := ask.DetectConflicts(a.Evidence, threshold, 0, func(c conflict.Pair) error {
		if c.Type == conflict.TypeConflict && a.Evidence[c.Source1.Index].Source != a.Evidence[c.Source2.Index].Source {
			inter++
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.Tensions, m.Agreements = an.TotalConflicts, an.TotalAgreements
	if a.ByGroup {
		m.InterGroupTensions = &inter
	}
	return nil
}

// rates are the seed's metrics of each configuration over runs. The
// conflict detection rate counts every question the configuration
// answered; the group decomposition rate only the questions whose sources
// fell into two or more groups, and only for the configurations that ask
// for groups; the inter-group conflict rate the questions read by group.
func rates(runs []Measured) []Rates {
	var out []Rates
	for _, cf := range Configurations {
		r := Rates{Configuration: cf.Name}
		withGroups, byGroup, read, interGroup := 0, 0, 0, 0
		for _, m := range runs {
			if m.Configuration != cf.Name || m.Error != "" {
				continue
			}
			r.Questions++
			if m.Tensions > 0 {
				r.Conflicts++
			}
			if m.GroupsExisted() {
				withGroups++
				if m.ByGroup {
					byGroup++
				}
			}
			if m.ByGroup {
				read++
				if m.interGroup() {
					interGroup++
				}
			}
		}
		if r.Questions > 0 {
			r.ConflictRate = float64(r.Conflicts) / float64(r.Questions)
		}
		if cf.Groups {
			r.WithGroups, r.ByGroup, r.InterGroup = &withGroups, &read, &interGroup
			r.GroupRate = ratio(byGroup, withGroups)
			r.InterGroupRate = ratio(interGroup, read)
		}
		out = append(out, r)
	}
	return out
}

// ratio is n/d, or nil when d is 0.
func ratio(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	f := float64(n) / float64(d)
	return &f
}

// comparisonID names a comparison by its runs: each question, its
// configuration and the run's id (a failed run has none).
func comparisonID(runs []Measured) string {
	id := run.NewID("sot-ask-compare-v1")
	for _, m := range runs {
		id.Add(m.Question, m.Configuration, m.RunID)
	}
	return id.String()
}

// metadataCoverage counts the sources of the plan's corpus that carry SoT
// metadata: an export's payload, else what sot sources analyze stored in
// the index of the project at top.
func metadataCoverage(ctx context.Context, top string, p *ask.Plan) (*MetadataCoverage, error) {
	ix, err := ask.OpenIndex(top)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	docs, err := ix.List(ctx)
	if err != nil {
		return nil, err
	}
	analysed := map[string]bool{}
	for _, d := range docs {
		if ask.AnalysisMetadata(d) != nil {
			analysed[d.ID] = true
		}
	}
	mc := &MetadataCoverage{Sources: len(p.Sources), Target: ask.CoverageTarget}
	for id, s := range p.Sources {
		switch {
		case s.Metadata != nil:
			mc.FromPayload++
		case analysed[id]:
			mc.FromAnalysis++
		}
	}
	mc.WithMetadata = mc.FromPayload + mc.FromAnalysis
	if mc.Sources > 0 {
		mc.Coverage = float64(mc.WithMetadata) / float64(mc.Sources)
	}
	mc.MeetsTarget = mc.Sources > 0 && mc.Coverage > mc.Target
	return mc, nil
}

// String is the comparison as a table, one row a run; the run column says
// whether the run was replayed.
func (m Measured) String() string {
	wall, latency := fmt.Sprintf("%dms", m.WallMS), "-"
	if m.FromCache {
		wall = "-"
	}
	if m.Latency != nil {
		latency = relative(*m.Latency)
	}
	return fmt.Sprintf("%-18s %5d %8d %8d %7d  $%.4f %9s %-8s %3d %3d %7s %7s",
		m.Configuration, m.Calls, m.InputTokens, m.CachedTokens, m.OutputTokens, m.CostUSD, wall, m.RunKind(), m.Tensions, m.Agreements, relative(m.TokenOverhead), latency)
}

// RunKind is "replayed" for a run this comparison sent no call for, else
// "new".
func (m Measured) RunKind() string {
	if m.Replayed {
		return "replayed"
	}
	return "new"
}

// The files a comparison writes in its directory.
const (
	ComparisonFile = "comparison.json"
	HTMLFile       = "compare.html" // when asked for html
)

// compareLayout: a comparison's directory holds its two files and the
// engine's ignore file; it has no record or journal, as its runs keep
// theirs in their own directories.
var compareLayout = run.Layout{
	Owns:    func(name string) bool { return name == ComparisonFile || name == HTMLFile },
	Outputs: []string{ComparisonFile, HTMLFile},
	Field:   "--output-dir",
}

// Dir is where a comparison is written by default:
// .sot/answers/compare-<id> at the top of the project holding dir.
func Dir(dir string, c *Comparison) string {
	return project.FromWorkDir(filepath.Join(ask.ProjectTop(dir), ".sot", "answers", "compare-"+c.ID))
}

// CheckDir refuses an output directory a comparison cannot be
// written to (one holding files sot did not write, or a symlink on the way
// from the top of the project holding dir), before any run; "" is the
// default directory, which passes.
func CheckDir(dir, outputDir string) error {
	return run.Check(ask.ProjectTop(dir), outputDir, compareLayout)
}

// Write writes comparison.json, and compare.html when html is set, in
// outputDir (default Dir), never through a symlink; a compare.html
// of an earlier comparison not asked for again is removed, so none
// describes other runs. dir is where the project is looked for. It returns
// the files written.
func (c *Comparison) Write(dir, outputDir string, html bool) ([]string, error) {
	top := ask.ProjectTop(dir)
	if outputDir == "" {
		outputDir = Dir(dir, c)
	}
	if err := run.Check(top, outputDir, compareLayout); err != nil {
		return nil, err
	}
	d, err := run.Open(top, outputDir, compareLayout, run.Key())
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.EnsureIgnore(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := d.WriteFile(ComparisonFile, append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	files := []string{filepath.Join(outputDir, ComparisonFile)}
	if !html {
		if err := d.Remove(HTMLFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return files, nil
	}
	h, err := c.HTML()
	if err != nil {
		return nil, err
	}
	if err := d.WriteFile(HTMLFile, h, 0o644); err != nil {
		return nil, err
	}
	return append(files, filepath.Join(outputDir, HTMLFile)), nil
}
