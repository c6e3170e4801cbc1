// Package graphcmd implements "sot graph": the argument graph that sot
// debate --graph grows (package debate/graph), summarized or exported.
package graphcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/debate/graph/export"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/termsafe"
	"github.com/sotlabs/sot/prompt"
)

// ShowOptions are the inputs of "sot graph show".
type ShowOptions struct {
	IO *cmdutil.IOStreams
	// WorkDir is where a relative File is found.
	WorkDir string
	// File is the graph file, or "-" for standard input.
	File string
	// JSON prints the summary as JSON.
	JSON bool
}

// ExportOptions are the inputs of "sot graph export".
type ExportOptions struct {
	IO *cmdutil.IOStreams
	// WorkDir is where a relative File is found.
	WorkDir string
	// File is the graph file, or "-" for standard input.
	File string
	// Format is one of export.Formats.
	Format string
}

// NewCmd returns "sot graph" and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "The argument graph sot debate --graph grows: show it, export it",
		Long: `An argument graph keeps what debates over many passages arrived at. Each
debate adds a node for its main debate and one for each branch, joined by
"branches from" edges; a model gives each node its type (synthesis,
impasse, lemma, question, exploration, clarification), topic, resolution,
summary, theme tags and key claims with the turns that made them. Nodes
of different passages that share tags or words are judged in pairs, and
the relations found with enough confidence become edges: contradicts,
elaborates, supports, requires, applies to, analogy. The graph never holds
a cycle.

sot debate --graph FILE PASSAGE... writes the graph as JSON. These
commands read that file (or, given -, standard input) and call no model.`,
		Example: `  sot graph show debates.json
  sot graph show debates.json --json | jq '.node_types'
  sot graph export debates.json --format mermaid > debates.mmd
  sot graph export debates.json --format dot | dot -Tsvg > debates.svg
  sot graph export debates.json --format markdown > DEBATES.md`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cmdutil.UsageError("unknown command %q for sot graph; use show or export (see 'sot graph --help')", args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cmdutil.AsUsage(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
	})
	cmd.AddCommand(newShowCmd(f), newExportCmd(f))
	return cmd
}

// newShowCmd returns "sot graph show".
func newShowCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ShowOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "Summarize a graph: its nodes by type and by passage, its edges, each node in order",
		Long: `Print a summary of the graph in FILE: how many nodes and edges of each
type it holds, its passages with their main debate and branches, and every
node in the graph's order (each after the nodes it builds on) with its
type and one-line summary. With --json the same summary is printed as JSON.`,
		Example: `  sot graph show debates.json
  sot graph show debates.json --json`,
		Args: exactlyOne("show"),
		RunE: func(c *cobra.Command, args []string) error {
			o.WorkDir, o.File = f.WorkDir(), args[0]
			return Show(o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the summary as JSON")
	return cmd
}

// newExportCmd returns "sot graph export".
func newExportCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ExportOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "export FILE",
		Short: "Write a graph to standard output as JSON, Mermaid, DOT, Markdown or Argdown",
		Long: `Write the graph in FILE to standard output in one of these formats:

  json      the canonical graph file: the same graph always gives the same
            bytes (sot-argument-graph, version 1)
  mermaid   a Mermaid flowchart (.mmd), nodes coloured by type and grouped
            by passage; GitHub renders it in a mermaid code block
  dot       Graphviz DOT, coloured by type, with a legend: render it with
            dot -Tsvg or dot -Tpng
  markdown  the graph told as one narrative in the graph's order, each
            node's section linking to the sections of the nodes it relates
            to (the text sot debate --graph gives debaters)
  argdown   Argdown (argdown.org), for argument-mapping tools: a statement
            per node, supports as +>, contradicts as ><, the relations
            Argdown has no notation for as comments

The default is markdown.`,
		Example: `  sot graph export debates.json --format json
  sot graph export debates.json --format mermaid > debates.mmd
  sot graph export debates.json --format dot | dot -Tpng > debates.png
  sot graph export debates.json --format argdown > debates.argdown`,
		Args: exactlyOne("export"),
		RunE: func(c *cobra.Command, args []string) error {
			o.WorkDir, o.File = f.WorkDir(), args[0]
			return Export(o)
		},
	}
	cmd.Flags().StringVarP(&o.Format, "format", "f", export.FormatMarkdown, "output format: "+strings.Join(export.Formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return export.Formats, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func exactlyOne(sub string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return cmdutil.UsageError("%s takes one graph FILE (the JSON sot debate --graph writes), or - for standard input; got %d arguments (see 'sot graph %s --help')", sub, len(args), sub)
		}
		return nil
	}
}

// load reads the graph in file (- for standard input, in), a relative
// path found in workDir; every problem with the file is a usage error.
func load(in io.Reader, workDir, file string) (*graph.DebateDAG, error) {
	if file == "-" {
		data, err := io.ReadAll(in)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		g, err := graph.Parse(data)
		if err != nil {
			return nil, cmdutil.UsageError("standard input: %v", err)
		}
		return g, nil
	}
	path := file
	if !filepath.IsAbs(path) && workDir != "" {
		path = filepath.Join(workDir, path)
	}
	g, err := graph.Load(path)
	if err != nil {
		var ue *engine.UserError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, cmdutil.UsageError("%s: no such file; give the graph file sot debate --graph FILE writes", file)
		case errors.As(err, &ue):
			ue.Field = file // as the user named it
			return nil, cmdutil.AsUsage(ue)
		}
		return nil, err
	}
	return g, nil
}

// Export writes the graph in o.Format to standard output.
func Export(o *ExportOptions) error {
	if !slices.Contains(export.Formats, o.Format) {
		return cmdutil.UsageError("--format %q is not an export format; use one of %s", o.Format, strings.Join(export.Formats, ", "))
	}
	g, err := load(o.IO.In, o.WorkDir, o.File)
	if err != nil {
		return err
	}
	return export.Export(o.IO.Out, g, o.Format)
}

// Summary is what show prints.
type Summary struct {
	File    string `json:"file"`
	Format  string `json:"format"`
	Version int    `json:"version"`
	graph.Stats
	// Order is every node in the graph's order.
	Order []NodeLine `json:"order"`
}

// NodeLine is one node in the summary.
type NodeLine struct {
	ID      string         `json:"id"`
	Type    graph.NodeType `json:"type"`
	Passage string         `json:"passage"`
	Branch  string         `json:"branch_question,omitempty"`
	Topic   string         `json:"topic"`
	Summary string         `json:"summary"`
}

// Show prints the summary of the graph.
func Show(o *ShowOptions) error {
	g, err := load(o.IO.In, o.WorkDir, o.File)
	if err != nil {
		return err
	}
	name := o.File
	if name == "-" {
		name = "standard input"
	}
	s := Summary{File: name, Format: graph.FormatName, Version: graph.FormatVersion, Stats: g.Stats(), Order: []NodeLine{}}
	for _, n := range g.Order() {
		s.Order = append(s.Order, NodeLine{ID: n.ID, Type: n.Type, Passage: n.Passage.ID, Branch: n.Branch, Topic: n.Topic, Summary: n.Summary})
	}
	if o.JSON {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			return err
		}
		_, err := o.IO.Out.Write(termsafe.JSON(b.Bytes()))
		return err
	}
	return writeSummary(o.IO.Out, &s)
}

// writeSummary prints the summary for people. Every text from the file
// (ids, titles, summaries, why a node is missing) is flattened to one
// line with control characters escaped (termsafe.Line), so that it can
// neither break the layout, nor forge a line, nor drive the terminal.
func writeSummary(w io.Writer, s *Summary) error {
	clean := func(t string) string { return termsafe.Line(prompt.Inline(t)) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s from %s, %s\n", clean(s.File), plural(s.Nodes, "node"), plural(len(s.Passages), "passage"), plural(s.Edges, "edge"))
	if s.Nodes == 0 {
		b.WriteString("\nThe graph is empty: sot debate --graph FILE PASSAGE... adds the nodes of each passage it debates.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nNodes by type")
	for _, t := range graph.NodeTypes {
		if n := s.NodeTypes[t]; n > 0 {
			fmt.Fprintf(tw, "  %s\t%d\n", t, n)
		}
	}
	if s.Edges > 0 {
		fmt.Fprintln(tw, "\nEdges by type")
		for _, t := range graph.EdgeTypes {
			if n := s.EdgeTypes[t]; n > 0 {
				fmt.Fprintf(tw, "  %s\t%d\n", t, n)
			}
		}
	}
	fmt.Fprintln(tw, "\nPassages")
	for _, p := range s.Passages {
		parts := []string{}
		if p.Main {
			parts = append(parts, "main debate")
		} else {
			parts = append(parts, "no main debate")
		}
		if p.Branches > 0 {
			parts = append(parts, plural(p.Branches, "branch"))
		}
		if len(p.Missing) > 0 {
			var ms []string
			for _, m := range p.Missing {
				ms = append(ms, clean(m.ID)+": "+clean(m.Reason))
			}
			parts = append(parts, fmt.Sprintf("%s missing (%s); run the same sot debate --graph command again to add them", plural(len(p.Missing), "node"), strings.Join(ms, "; ")))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", clean(p.ID), clean(p.Title), strings.Join(parts, ", "))
	}
	fmt.Fprintln(tw, "\nNodes, each after those it builds on")
	for i, n := range s.Order {
		summary := n.Summary
		if summary == "" {
			summary = n.Topic
		}
		fmt.Fprintf(tw, "  %d.\t%s\t%s\t%s\n", i+1, clean(n.ID), n.Type, clean(summary))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
