// Package personas implements "sot personas": listing, showing, creating and
// validating persona files.
package personas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/persona"
)

// NewCmd returns "sot personas".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "personas",
		Aliases: []string{"persona"},
		Short:   "List, show, create and validate personas",
		Long: `Personas are Markdown files with YAML frontmatter. sot finds them at four
levels; for the same name the most specific level wins:

  1. explicit   files named by the caller (--specialists ./path/to/x.md)
  2. project    .sot/personas/ and .sot/lenses/ (also .paw/personas/ and .paw/perspectives/)
  3. user       $XDG_CONFIG_HOME/sot/personas/ and .../lenses/ (also ~/.paw/personas/ and ~/.paw/perspectives/)
  4. built-in   nine specialists, four lenses, seven roles, three debaters, three observers

Kinds: specialist, lens, role, debater, observer (and the shared rules,
_shared-rules.md, which a project or user file of that name overrides).`,
	}
	cmd.AddCommand(newListCmd(f), newShowCmd(f), newNewCmd(f), newValidateCmd(f))
	return cmd
}

func parseKind(s string) (persona.Kind, error) {
	if s == "" {
		return "", nil
	}
	for _, k := range persona.Kinds {
		if strings.EqualFold(string(k), s) {
			return k, nil
		}
	}
	return "", cmdutil.UsageError("--kind %q: use specialist, lens, role, debater, observer or shared-rules", s)
}

// Entry is one row of "sot personas list".
type Entry struct {
	Name      string        `json:"name"`
	Kind      persona.Kind  `json:"kind"`
	Level     persona.Level `json:"level"`
	Source    string        `json:"source"`
	Context   string        `json:"context,omitempty"`
	Model     string        `json:"model,omitempty"`
	Overrides []string      `json:"overrides,omitempty"`
	// Rejected are files of this name that would have been used but
	// failed validation, each with its problems; Source is used in their
	// place.
	Rejected []Rejected `json:"rejected,omitempty"`
	// Unusable is set on a row for a rejected file that nothing of its
	// name replaces: the persona does not exist for reviews.
	Unusable bool `json:"unusable,omitempty"`
}

// Rejected is a persona file skipped because of errors.
type Rejected struct {
	Source   string            `json:"source"`
	Problems []persona.Problem `json:"problems"`
}

func entry(lib *persona.Library, p *persona.Persona) Entry {
	e := Entry{Name: p.ID, Kind: p.Kind, Level: p.Level, Source: p.Path, Model: p.Meta.Model}
	if p.Kind == persona.Specialist {
		e.Context = p.Context()
	}
	for _, s := range lib.Chain(p.Kind, p.ID)[1:] {
		e.Overrides = append(e.Overrides, s.Path)
	}
	for _, r := range lib.RejectedFor(p.Kind, p.ID) {
		e.Rejected = append(e.Rejected, Rejected{r.Persona.Path, r.Problems})
	}
	return e
}

// entries lists the personas of kind k ("" for all) as "personas list"
// shows them: the personas in use, then rows for rejected files that
// nothing of their name replaces.
func entries(lib *persona.Library, k persona.Kind) []Entry {
	var out []Entry
	for _, p := range lib.All() {
		if k == "" || p.Kind == k {
			out = append(out, entry(lib, p))
		}
	}
	for _, r := range lib.Rejected {
		p := r.Persona
		if (k != "" && p.Kind != k) || hasEntry(out, p.Kind, p.ID) {
			continue
		}
		e := Entry{Name: p.ID, Kind: p.Kind, Level: p.Level, Source: p.Path, Unusable: true}
		for _, o := range lib.RejectedFor(p.Kind, p.ID) {
			e.Rejected = append(e.Rejected, Rejected{o.Persona.Path, o.Problems})
		}
		out = append(out, e)
	}
	return out
}

func hasEntry(es []Entry, kind persona.Kind, id string) bool {
	for _, e := range es {
		if e.Kind == kind && e.Name == id {
			return true
		}
	}
	return false
}

// writeList prints the entries as a table, marking with ! the rows where a
// rejected file was replaced (or left nothing), and then the reasons.
func writeList(f *cmdutil.Factory, es []Entry) error {
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tLEVEL\tCONTEXT\tMODEL\tSOURCE")
	var notes []string
	for _, e := range es {
		name, source := e.Name, e.Source
		if len(e.Rejected) > 0 {
			name += " !"
			var files []string
			for _, r := range e.Rejected {
				files = append(files, r.Source)
				for _, p := range r.Problems {
					notes = append(notes, "  "+cmdutil.Line(p.Error()))
				}
			}
			if e.Unusable {
				source = "none: rejected " + strings.Join(files, ", ")
			} else {
				source += " (in place of rejected " + strings.Join(files, ", ") + ")"
			}
		}
		cmdutil.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, e.Kind, e.Level, dash(e.Context), dash(e.Model), source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintf(f.IO.Out, "\n! rejected persona files, not used for reviews (fix them, then run sot personas validate):\n%s\n", strings.Join(notes, "\n"))
	}
	return nil
}

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	var kind string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every persona found, with its kind, level, source file, context and model",
		Long: `List every persona found, with its kind, level, source file, context and
model. A file that failed validation is not used; its row is marked with !
and names the file used in its place (a built-in, say), and the reasons
follow the table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := parseKind(kind)
			if err != nil {
				return err
			}
			lib, err := f.Library()
			if err != nil {
				return err
			}
			es := entries(lib, k)
			if asJSON {
				return writeJSON(f, es)
			}
			return writeList(f, es)
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind: specialist, lens, role, debater, observer, shared-rules")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newShowCmd(f *cmdutil.Factory) *cobra.Command {
	var kind string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print the file that defines a persona, and which level won",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := parseKind(kind)
			if err != nil {
				return err
			}
			lib, err := f.Library()
			if err != nil {
				return err
			}
			var p *persona.Persona
			var ok bool
			if k != "" {
				p, ok = lib.Get(k, args[0])
			} else {
				p, ok = lib.Find(args[0])
			}
			if !ok {
				return cmdutil.UsageError("no persona named %q; run 'sot personas list' to see them", args[0])
			}
			e := entry(lib, p)
			if asJSON {
				return writeJSON(f, struct {
					Entry
					Text string `json:"text"`
				}{e, rawText(p)})
			}
			cmdutil.Fprintf(f.IO.Out, "# %s (%s), from the %s level: %s\n", p.ID, p.Kind, p.Level, p.Path)
			for _, o := range e.Overrides {
				cmdutil.Fprintf(f.IO.Out, "# overrides %s\n", o)
			}
			fmt.Fprintln(f.IO.Out)
			fmt.Fprint(f.IO.Out, cmdutil.Text(rawText(p)))
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "the kind, when several kinds share the name")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// rawText is the persona's file as written.
func rawText(p *persona.Persona) string {
	if b, err := persona.ReadSource(p.Path); err == nil {
		return string(b)
	}
	return p.Body
}

func newNewCmd(f *cmdutil.Factory) *cobra.Command {
	var kind, dir string
	var user, force bool
	cmd := &cobra.Command{
		Use:   "new NAME --kind specialist|lens|role|debater|observer",
		Short: "Write a new persona file from a template to fill in",
		Long: `Write a new persona file from a template to fill in. Specialists, roles,
debaters and observers go to .sot/personas/NAME.md, lenses to .sot/lenses/NAME.md
(with --user, under $XDG_CONFIG_HOME/sot/ instead).

Every part you must write is a placeholder <<TODO: what to write>>. Until
each one is replaced, the file takes no part in reviews, and 'sot personas
validate' names the placeholders left, with their lines.`,
		Example: `  sot personas new billing --kind specialist
  sot personas new regulator --kind lens --user`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := parseKind(kind)
			if err != nil {
				return err
			}
			if k == "" {
				k = persona.Specialist
			}
			name := strings.ToLower(args[0])
			text, err := persona.Template(k, name)
			if err != nil {
				return cmdutil.AsUsage(err)
			}
			if dir == "" {
				base := filepath.Join(persona.RepoRoot(f.WorkDir()), ".sot")
				if user {
					base = f.PersonaDirs().User
				}
				sub := "personas"
				if k == persona.Lens {
					sub = "lenses"
				}
				dir = filepath.Join(base, sub)
			}
			path := filepath.Join(dir, name+".md")
			if _, err := os.Stat(path); err == nil && !force {
				return cmdutil.UsageError("%s already exists; pass --force to overwrite it", path)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.Out, "wrote %s\n", path)
			fmt.Fprintf(f.IO.ErrOut, "Replace its %d <<TODO: ...>> placeholders with your own text; until then it takes no part in reviews. Then check it with: sot personas validate %s\n",
				strings.Count(text, "<<TODO:"), path)
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "specialist", "specialist, lens, role, debater or observer")
	cmd.Flags().StringVar(&dir, "dir", "", "write into this directory instead")
	cmd.Flags().BoolVar(&user, "user", false, "write to the user level ($XDG_CONFIG_HOME/sot) instead of the project")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing file")
	return cmd
}

func newValidateCmd(f *cmdutil.Factory) *cobra.Command {
	var strict, asJSON bool
	cmd := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check persona files and report problems as file:line messages",
		Long: `Check persona files and report problems as file:line messages. Without
arguments, every persona file at the project and user levels is checked. A
PATH may be a file or a directory (its .md files are checked; files in a
directory named lenses or perspectives are lenses).

Exits 1 when a file has an error (it would be skipped at review time); with
--strict, warnings count too.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var probs []persona.Problem
			var checked int
			if len(args) == 0 {
				files := persona.Files(f.PersonaDirs())
				for _, file := range files {
					probs = append(probs, persona.ValidateFile(file.Path, file.Kind)...)
				}
				checked = len(files)
			}
			for _, a := range args {
				files, err := expand(a)
				if err != nil {
					return cmdutil.AsUsage(err)
				}
				for _, file := range files {
					probs = append(probs, persona.ValidateFile(file.Path, file.Kind)...)
				}
				checked += len(files)
			}
			if asJSON {
				if err := writeJSON(f, struct {
					Checked  int               `json:"checked"`
					Problems []persona.Problem `json:"problems"`
				}{checked, probs}); err != nil {
					return err
				}
			} else {
				for _, p := range probs {
					fmt.Fprintln(f.IO.Out, cmdutil.Line(p.Error()))
				}
				fmt.Fprintf(f.IO.ErrOut, "checked %d persona file(s): %s\n", checked, summary(probs))
			}
			for _, p := range probs {
				if !p.Warning || strict {
					return &cmdutil.ExitError{Code: cmdutil.ExitFailure}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on warnings too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

// expand turns a path argument into the files to check.
func expand(arg string) ([]persona.File, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", arg, errors.Unwrap(err))
	}
	if !fi.IsDir() {
		return []persona.File{{Path: arg, Kind: persona.KindForDir(filepath.Dir(arg))}}, nil
	}
	var files []persona.File
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(strings.ToLower(p), ".md") {
			files = append(files, persona.File{Path: p, Kind: persona.KindForDir(filepath.Dir(p))})
		}
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, err
}

func summary(probs []persona.Problem) string {
	var errs, warns int
	for _, p := range probs {
		if p.Warning {
			warns++
		} else {
			errs++
		}
	}
	if errs+warns == 0 {
		return "no problems"
	}
	return fmt.Sprintf("%d error(s), %d warning(s)", errs, warns)
}

func writeJSON(f *cmdutil.Factory, v any) error {
	enc := json.NewEncoder(f.IO.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
