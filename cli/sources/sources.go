// Package sources implements "sot sources": the corpus index of sot ask,
// listed, shown, added to and removed from.
package sources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/ask"
	askanalyze "github.com/sotlabs/sot/ask/analyze"
	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/index"
)

// Options are the flags of "sot sources".
type Options struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	JSON    bool
	// FollowSymlinks is sot sources add --follow-symlinks.
	FollowSymlinks bool
}

// NewCmd returns "sot sources" and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "sources",
		Short: "The corpus index of sot ask: list, show, add, remove, analyze, export",
		Long: `Manage the corpus index sot ask reads from: an SQLite database with a
full-text index, at .sot/index/corpus.db under the project's top (ignored by
git). sot ask adds the sources it reads by itself; these commands look
inside the index and change it by hand. A source's id is the start of the
SHA-256 of its file, so a changed file is a new source.

sot sources analyze gives the sources without SoT metadata theirs, with
one model call each, and reports the coverage; sot sources export writes
a source back as a northstar agent file with its metadata. sot sources
groups lists the groups sot ask --groups would read; sot sources group
--thematic has a model name the corpus's themes.`,
		Example: `  sot sources add notes/ reports/q3.md
  sot sources list
  sot sources show 3f2a9c1e0b7d4a65
  sot sources remove 3f2a9c1e0b7d4a65
  sot sources analyze --dry-run
  sot sources export 3f2a9c1e0b7d4a65 --output q3-planning.md
  sot sources group --thematic
  sot sources groups --by thematic`,
	}
	cmd.PersistentFlags().BoolVar(&o.JSON, "json", false, "print JSON")
	pre := func() { o.WorkDir = f.WorkDir() }
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the indexed sources",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { pre(); return List(c.Context(), o) },
	}, &cobra.Command{
		Use:   "show SOURCE",
		Short: "Show one source: its metadata and text",
		Long: `Show one indexed source: its metadata, where the metadata came from, and
its text. SOURCE is the source's id (as sot sources list prints it), a
start of the id that no other source shares, the source's path (as indexed,
or from the working directory) or its exact title. A start of an id or a
title that fits several sources is a usage error that lists them.`,
		Args: exactly(1, "show takes one source id, a start of one, a source's path or its title (see 'sot sources list')"),
		RunE: func(c *cobra.Command, args []string) error { pre(); return Show(c.Context(), o, args[0]) },
	}, newAddCmd(o, pre), &cobra.Command{
		Use:   "remove ID...",
		Short: "Remove sources from the index",
		Args:  atLeast(1, "remove takes the ids of the sources to remove (see 'sot sources list')"),
		RunE:  func(c *cobra.Command, args []string) error { pre(); return Remove(c.Context(), o, args) },
	}, newAnalyzeCmd(f, o), newExportCmd(f, o), newGroupsCmd(f, o, pre), newGroupCmd(f, o))
	return cmd
}

func newAddCmd(o *Options, pre func()) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add PATH...",
		Short: "Read files and directories into the index (unchanged sources are kept as they are)",
		Args:  atLeast(1, "add takes files or directories to read"),
		RunE:  func(c *cobra.Command, args []string) error { pre(); return Add(c.Context(), o, args) },
	}
	cmdutil.AddFollowSymlinks(cmd.Flags(), &o.FollowSymlinks)
	return cmd
}

func exactly(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return cmdutil.UsageError("%s", msg)
		}
		return nil
	}
}

func atLeast(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < n {
			return cmdutil.UsageError("%s", msg)
		}
		return nil
	}
}

func open(o *Options) (*index.Index, error) {
	ix, err := ask.OpenIndex(ask.ProjectTop(o.WorkDir))
	if err == nil {
		if note := ask.RebuiltNote(ix); note != "" {
			cmdutil.Warn(o.IO.ErrOut, note)
		}
	}
	return ix, err
}

// get reads one source from the index; a name that fits none is a usage
// error.
//
// A source is named by its id, its path (as indexed, or as given from the
// working directory or the project's top), a unique start of its id, or
// its exact title, tried in that order. A start of an id or a title that
// fits several sources is a usage error that lists them.
func get(ctx context.Context, ix *index.Index, workDir, name string) (index.Doc, error) {
	d, err := ix.Get(ctx, name)
	if !errors.Is(err, index.ErrNotFound) {
		return d, err
	}
	docs, err := ix.List(ctx)
	if err != nil {
		return index.Doc{}, err
	}
	given := strings.TrimSpace(name)
	for _, match := range []func(index.Doc) bool{
		func(d index.Doc) bool { return given != "" && samePath(given, d.Path, workDir) },
		func(d index.Doc) bool { return given != "" && strings.HasPrefix(d.ID, strings.ToLower(given)) },
		func(d index.Doc) bool { return given != "" && d.Title == given },
	} {
		var found []index.Doc
		for _, d := range docs {
			if match(d) {
				found = append(found, d)
			}
		}
		switch {
		case len(found) == 1:
			return ix.Get(ctx, found[0].ID) // List leaves out the text
		case len(found) > 1:
			names := make([]string, 0, len(found))
			for _, f := range found {
				names = append(names, fmt.Sprintf("%s (%s, %s)", f.ID, oneLine(f.Title), f.Path))
			}
			return index.Doc{}, cmdutil.UsageError("%q names %d sources: %s; give one by its id", name, len(found), strings.Join(names, "; "))
		}
	}
	return index.Doc{}, cmdutil.UsageError("no source %q in the index: name one by its id, a start of its id, its path or its title (see 'sot sources list')", name)
}

// samePath reports whether a path given on the command line names the
// indexed path: the two as written, or the given one from the working
// directory against the indexed one from the working directory or the
// project's top.
func samePath(given, indexed, workDir string) bool {
	if indexed == "" {
		return false
	}
	if filepath.Clean(given) == filepath.Clean(indexed) {
		return true
	}
	abs := given
	if !filepath.IsAbs(abs) {
		if workDir == "" {
			return false
		}
		abs = filepath.Join(workDir, abs)
	}
	for _, p := range candidatePaths(indexed, workDir) {
		if filepath.Clean(p) == filepath.Clean(abs) {
			return true
		}
	}
	return false
}

// List prints the indexed sources.
func List(ctx context.Context, o *Options) error {
	ix, err := open(o)
	if err != nil {
		return err
	}
	defer ix.Close()
	docs, err := ix.List(ctx)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, nonNil(docs))
	}
	if len(docs) == 0 {
		fmt.Fprintln(o.IO.Out, "sot: the index holds no source; add some with sot sources add PATH..., or ask a question over them")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDATE\tTYPE\tMETADATA\tTITLE\tPATH")
	for _, d := range docs {
		date := "-"
		if !d.Date.IsZero() {
			date = d.Date.Format("2006-01-02")
		}
		cmdutil.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, date, or(d.Type, "-"), metadataFrom(d), oneLine(d.Title), d.Path)
	}
	return tw.Flush()
}

// Show prints one source.
func Show(ctx context.Context, o *Options, id string) error {
	ix, err := open(o)
	if err != nil {
		return err
	}
	defer ix.Close()
	d, err := get(ctx, ix, o.WorkDir, id)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, struct {
			index.Doc
			// SoTMetadata is the metadata sot ask uses (the payload's, else
			// the analysis's), and MetadataFrom where it comes from.
			SoTMetadata  *corpus.Metadata `json:"sotMetadata,omitempty"`
			MetadataFrom string           `json:"metadata_from"`
		}{d, ask.MetadataOf(d), metadataFrom(d)})
	}
	w := o.IO.Out
	cmdutil.Fprintf(w, "id:    %s\ntitle: %s\npath:  %s\ntype:  %s\n", d.ID, oneLine(d.Title), d.Path, or(d.Type, "-"))
	if !d.Date.IsZero() {
		fmt.Fprintf(w, "date:  %s\n", d.Date.Format("2006-01-02"))
	}
	printMetadata(w, d)
	fmt.Fprintf(w, "\n%s\n", cmdutil.Text(d.Text))
	return nil
}

// Add reads paths into the index.
func Add(ctx context.Context, o *Options, paths []string) error {
	srcs, skipped, err := corpus.Load(paths, corpus.Options{FollowSymlinks: o.FollowSymlinks})
	if err != nil {
		return cmdutil.AsUsage(err)
	}
	ix, err := open(o)
	if err != nil {
		return err
	}
	defer ix.Close()
	docs := make([]index.Doc, 0, len(srcs))
	for _, s := range srcs {
		docs = append(docs, ask.DocOf(s))
	}
	ch, err := ix.Add(ctx, docs...)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, struct {
			index.Changes
			Skipped []corpus.Skipped `json:"skipped"`
		}{ch, nonNil(skipped)})
	}
	fmt.Fprintf(o.IO.Out, "sot: %d source(s) added, %d updated, %d unchanged\n", ch.Added, ch.Updated, ch.Unchanged)
	for _, s := range skipped {
		cmdutil.Fprintf(o.IO.Out, "  - skipped %s: %s\n", s.Path, s.Reason)
	}
	return nil
}

// Remove removes sources by id.
func Remove(ctx context.Context, o *Options, ids []string) error {
	ix, err := open(o)
	if err != nil {
		return err
	}
	defer ix.Close()
	n, err := ix.Remove(ctx, ids...)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, map[string]int{"removed": n})
	}
	fmt.Fprintf(o.IO.Out, "sot: %d source(s) removed\n", n)
	if n < len(ids) {
		return cmdutil.UsageError("%d of the ids given are not in the index (see 'sot sources list')", len(ids)-n)
	}
	return nil
}

// printMetadata shows a source's SoT metadata and where it comes from.
func printMetadata(w io.Writer, d index.Doc) {
	m := ask.MetadataOf(d)
	switch metadataFrom(d) {
	case "payload":
		fmt.Fprintln(w, "metadata: from the export payload")
	case "analysis":
		var a askanalyze.Analysis
		_ = json.Unmarshal(d.Analysis, &a)
		line := "metadata: analysed by sot"
		if a.Model != "" {
			line += " with " + a.Model
		}
		if !a.At.IsZero() {
			line += " on " + a.At.Format("2006-01-02")
		}
		if a.Parts > 1 {
			line += fmt.Sprintf(", from the first of %d parts", a.Parts)
		}
		fmt.Fprintln(w, cmdutil.Line(line))
	default:
		fmt.Fprintln(w, "metadata: none (sot sources analyze extracts it)")
		return
	}
	field := func(name, value string) {
		if value != "" {
			cmdutil.Fprintf(w, "  %-13s %s\n", name+":", value)
		}
	}
	field("meeting type", m.MeetingType)
	field("perspective", m.SuggestedPerspective)
	field("topics", strings.Join(m.TopicTags, ", "))
	e := m.KeyEntities
	field("people", strings.Join(e.People, ", "))
	field("projects", strings.Join(e.Projects, ", "))
	field("organizations", strings.Join(e.Organizations, ", "))
	field("products", strings.Join(e.Products, ", "))
	if t := m.TemporalContext; t != nil {
		field("quarter", t.Quarter)
		field("timeframe", t.Timeframe)
		field("dates", strings.Join(t.ExplicitDates, ", "))
		field("deadlines", strings.Join(t.Deadlines, "; "))
	}
	if c := m.ContentSignals; c != nil {
		field("signals", fmt.Sprintf("%d risk(s), %d decision(s), %d action(s), %d question(s), %d conflict(s)",
			c.RiskMentions, c.DecisionsMade, c.ActionsAssigned, c.QuestionsRaised, c.ConflictIndicators))
	}
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// oneLine puts a value from the material (a title, a theme's name) on one
// line of the terminal: its whitespace collapsed, its control characters
// escaped.
func oneLine(s string) string { return cmdutil.Line(strings.Join(strings.Fields(s), " ")) }
