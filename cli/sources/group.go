package sources

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/ask"
	askanalyze "github.com/sotlabs/sot/ask/analyze"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/config"
)

// GroupsOptions are the flags of "sot sources groups".
type GroupsOptions struct {
	// By is --by; "" takes the configuration's ask.groups, else the
	// custom groups of --group, else temporal.
	By string
	// Defs are the --group definitions.
	Defs []string
}

func newGroupsCmd(f *cmdutil.Factory, o *Options, pre func()) *cobra.Command {
	g := &GroupsOptions{}
	cmd := &cobra.Command{
		Use:   "groups",
		Short: "List the groups the indexed sources fall into, and the role each would be read from",
		Long: `List the groups the indexed sources fall into, with their members and the
perspective each group would be read from by sot ask --groups:

  --by temporal    by quarter (from the metadata, else the source's date);
                   temporal:month by month
  --by source      by source type
  --by thematic    by theme: the themes sot sources group --thematic named,
                   else the topic tags the sources share
  --by NAME[,...]  by custom groups, defined under ask.custom_groups or with
                   --group; a source goes in the first group it matches

The default is the config's ask.groups, else temporal. A group's
perspective comes from its kind (temporal: historian, thematic:
synthesizer, source: analyst); a custom group's from whole words of its
name (risk words: critic, action words: pragmatist, stakeholder words:
stakeholder, timeline words: historian); the rest take the roles no group
took, primary ones first.`,
		Example: `  sot sources groups
  sot sources groups --by thematic --json
  sot sources groups --group "Launch risks=tags:security,risk" --group "Next steps=tags:action-items"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			pre()
			return runGroups(c.Context(), f, o, g)
		},
	}
	cmd.Flags().StringVar(&g.By, "by", "", "temporal, temporal:month, source, thematic, or custom group names (default: ask.groups, else temporal)")
	cmd.Flags().StringArrayVar(&g.Defs, "group", nil, `define a custom group: "NAME=KEY:VALUE[,VALUE][;KEY:VALUE]" with the keys tags, types, from, to (YYYY-MM-DD) and paths (globs from the project's top); repeatable`)
	return cmd
}

// runGroups settles the grouping, from the flags and then the
// configuration, and prints the groups.
func runGroups(ctx context.Context, f *cmdutil.Factory, o *Options, g *GroupsOptions) error {
	cfg, _, err := f.Config()
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	custom, err := ParseGroupFlags(g.Defs)
	if err != nil {
		return err
	}
	name := g.By
	if name == "" {
		name = cfg.Ask.Groups
	}
	if name == "" && len(custom) > 0 {
		name = groupNames(custom)
	}
	if name == "" {
		name = "temporal"
	}
	return Groups(ctx, o, name, append(custom, cfg.Ask.CustomGroups...))
}

// ParseGroupFlags reads --group values.
func ParseGroupFlags(defs []string) ([]config.CustomGroup, error) {
	var out []config.CustomGroup
	for _, d := range defs {
		g, err := config.ParseCustomGroup(d)
		if err != nil {
			return nil, cmdutil.UsageError("--group %v", err)
		}
		out = append(out, g)
	}
	return out, nil
}

func groupNames(gs []config.CustomGroup) string {
	var names []string
	for _, g := range gs {
		names = append(names, strings.TrimSpace(g.Name))
	}
	return strings.Join(names, ",")
}

// Groups prints the groups of the indexed sources.
func Groups(ctx context.Context, o *Options, by string, custom []config.CustomGroup) error {
	ix, err := open(o)
	if err != nil {
		return err
	}
	defer ix.Close()
	docs, err := ix.List(ctx)
	if err != nil {
		return err
	}
	groups, err := ask.GroupsOf(docs, by, ask.ProjectTop(o.WorkDir), custom)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, nonNil(groups))
	}
	if len(groups) == 0 {
		fmt.Fprintln(o.IO.Out, "sot: the index holds no source; add some with sot sources add PATH...")
		return nil
	}
	titles := map[string]string{}
	for _, d := range docs {
		titles[d.ID] = oneLine(d.Title)
	}
	printGroups(o.IO.Out, groups, titles)
	return nil
}

func printGroups(w io.Writer, groups []route.GroupAssignment, titles map[string]string) {
	for _, g := range groups {
		cmdutil.Fprintf(w, "%s (%s, %d source(s)): read as %s (%s)\n", g.Group.Name, g.Group.Kind, len(g.Group.Members), g.Role, g.Why)
		for _, m := range g.Group.Members {
			cmdutil.Fprintf(w, "  - %s %s\n", m, titles[m])
		}
	}
}

// GroupOptions are the flags of "sot sources group".
type GroupOptions struct {
	Thematic bool
	DryRun   bool
	Fresh    bool
}

func newGroupCmd(f *cmdutil.Factory, o *Options) *cobra.Command {
	g := &GroupOptions{}
	cmd := &cobra.Command{
		Use:   "group --thematic",
		Short: "Have a model name the themes of the corpus from its topic tags",
		Long: `Name the themes of the corpus. The indexed sources' topic tags (from
northstar exports, or from sot sources analyze) go to the default model
(--model) in one structured call, which names 2 to 8 themes, each with the
tags it covers. Themes that do not fit (fewer than two, or tags the corpus
does not have) are asked for once more with the problem.

The themes are kept in .sot/index/themes.json. From then on, sot ask
--groups thematic and sot sources groups --by thematic gather each source
into the theme that shares the most of its tags, and sources that share
none into "other topics". Without named themes, thematic groups are the
tags the sources share. Run the command again after adding sources.

The call is journaled in .sot/index/themes/ and goes through the response
cache; --fresh bypasses both.

Exit codes: 0 the themes are kept; 2 usage (no tags yet, no model, no key);
1 the model's themes did not fit twice; 130 interrupted.`,
		Example: `  sot sources analyze
  sot sources group --thematic --dry-run
  sot sources group --thematic
  sot ask --groups thematic "What were the main threads this year?"`,
		Args: exactly(0, "group takes no arguments: it groups every indexed source"),
		RunE: func(c *cobra.Command, _ []string) error {
			o.WorkDir = f.WorkDir()
			return NameThemes(c.Context(), f, o, g)
		},
	}
	cmd.Flags().BoolVar(&g.Thematic, "thematic", false, "name the themes of the corpus from its topic tags, with one model call")
	cmd.Flags().BoolVar(&g.DryRun, "dry-run", false, "say what would be sent, and send nothing")
	cmd.Flags().BoolVar(&g.Fresh, "fresh", false, "neither replay the journal nor answer from the response cache")
	return cmd
}

// NameThemes runs "sot sources group", which takes --thematic; Ctrl-C
// stops it with exit code 130 and the command that resumes it.
func NameThemes(ctx context.Context, f *cmdutil.Factory, o *Options, g *GroupOptions) error {
	if !g.Thematic {
		return cmdutil.UsageError("say how to group: --thematic (the only grouping that needs a model; sot sources groups lists the others)")
	}
	return cmdutil.Interruptible(ctx, "the themes' journal", func(ctx context.Context) error { return nameThemes(ctx, f, o, g) })
}

func nameThemes(ctx context.Context, f *cmdutil.Factory, o *Options, g *GroupOptions) error {
	cfg, _, err := f.Config()
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	errOut := o.IO.ErrOut
	opts := &askanalyze.Options{Dir: o.WorkDir, Config: cfg, Getenv: f.Getenv, DryRun: g.DryRun, Fresh: g.Fresh,
		NewStack: f.NewStack(cfg, cmdutil.StackOptions{NoCache: g.Fresh})}
	opts.Warn = func(s string) { cmdutil.Warn(errOut, s) }
	opts.Progress = func(s string) { cmdutil.Say(errOut, s) }
	rep, err := askanalyze.NameThemes(ctx, opts)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, rep)
	}
	w := o.IO.Out
	fmt.Fprintf(w, "sot: %d of %d source(s) have topic tags, %d distinct\n", rep.Tagged, rep.Sources, rep.Tags)
	for _, n := range rep.Notes {
		cmdutil.Fprintf(w, "sot: note: %s\n", n)
	}
	if rep.DryRun {
		cmdutil.Fprintf(w, "sot: would name the themes with %s: %d call, about %d input token(s), one more if the themes must be asked for again; nothing was sent (--dry-run)\n",
			or(rep.Model, "the default model (none is set)"), rep.Calls, rep.Input)
		return nil
	}
	fmt.Fprintf(w, "sot: %d theme(s), kept in %s:\n", len(rep.Themes), rep.File)
	for _, t := range rep.Themes {
		cmdutil.Fprintf(w, "  - %s: %s (tags %s)\n", oneLine(t.Name), oneLine(t.Description), strings.Join(t.Tags, ", "))
	}
	titles := map[string]string{}
	if ix, err := open(o); err == nil {
		if docs, err := ix.List(ctx); err == nil {
			for _, d := range docs {
				titles[d.ID] = oneLine(d.Title)
			}
		}
		ix.Close()
	}
	fmt.Fprintln(w, "sot: the sources by theme:")
	printGroups(w, rep.Groups, titles)
	if u := rep.Usage; u != nil {
		fmt.Fprintf(w, "sot: %d call(s), $%.4f", u.Calls, u.CostUSD)
		if u.Replayed > 0 {
			fmt.Fprintf(w, " (%d replayed from the journal)", u.Replayed)
		}
		fmt.Fprintln(w)
	}
	return nil
}
