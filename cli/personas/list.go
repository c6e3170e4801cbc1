package personas

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/persona"
)

// ListOptions are the inputs of "sot personas list".
type ListOptions struct {
	IO *cmdutil.IOStreams
	// Library discovers the personas (and warns about skipped files).
	Library func() (*persona.Library, error)
	// Kind is --kind: only this kind; "" lists every kind.
	Kind string
	JSON bool
}

func newListCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ListOptions{IO: f.IO, Library: f.Library}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every persona found, with its kind, level, source file, context and model",
		Long: `List every persona found, with its kind, level, source file, context and
model. A file that failed validation is not used; its row is marked with !
and names the file used in its place (a built-in, say), and the reasons
follow the table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return RunList(o) },
	}
	cmd.Flags().StringVar(&o.Kind, "kind", "", "only this kind: specialist, lens, role, debater, observer, shared-rules")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

// RunList prints the personas found, as a table or as JSON.
func RunList(o *ListOptions) error {
	k, err := parseKind(o.Kind)
	if err != nil {
		return err
	}
	lib, err := o.Library()
	if err != nil {
		return err
	}
	es := entries(lib, k)
	if o.JSON {
		return writeJSON(o.IO.Out, es)
	}
	return writeList(o.IO.Out, es)
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
func writeList(w io.Writer, es []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
		fmt.Fprintf(w, "\n! rejected persona files, not used for reviews (fix them, then run sot personas validate):\n%s\n", strings.Join(notes, "\n"))
	}
	return nil
}
