package personas

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/persona"
)

// ShowOptions are the inputs of "sot personas show".
type ShowOptions struct {
	IO *cmdutil.IOStreams
	// Library discovers the personas (and warns about skipped files).
	Library func() (*persona.Library, error)
	// Name is the persona to show.
	Name string
	// Kind is --kind, for a name that several kinds share; "" takes the
	// first kind that has the name.
	Kind string
	JSON bool
}

func newShowCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ShowOptions{IO: f.IO, Library: f.Library}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print the file that defines a persona, and which level won",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return RunShow(o)
		},
	}
	cmd.Flags().StringVar(&o.Kind, "kind", "", "the kind, when several kinds share the name")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

// RunShow prints the file that defines a persona, under a header that says
// which level it came from and which files it overrides.
func RunShow(o *ShowOptions) error {
	k, err := parseKind(o.Kind)
	if err != nil {
		return err
	}
	lib, err := o.Library()
	if err != nil {
		return err
	}
	var p *persona.Persona
	var ok bool
	if k != "" {
		p, ok = lib.Get(k, o.Name)
	} else {
		p, ok = lib.Find(o.Name)
	}
	if !ok {
		return cmdutil.UsageError("no persona named %q; run 'sot personas list' to see them", o.Name)
	}
	e := entry(lib, p)
	out := o.IO.Out
	if o.JSON {
		return writeJSON(out, struct {
			Entry
			Text string `json:"text"`
		}{e, rawText(p)})
	}
	cmdutil.Fprintf(out, "# %s (%s), from the %s level: %s\n", p.ID, p.Kind, p.Level, p.Path)
	for _, ov := range e.Overrides {
		cmdutil.Fprintf(out, "# overrides %s\n", ov)
	}
	fmt.Fprintln(out)
	fmt.Fprint(out, cmdutil.Text(rawText(p)))
	return nil
}

// rawText is the persona's file as written.
func rawText(p *persona.Persona) string {
	if b, err := persona.ReadSource(p.Path); err == nil {
		return string(b)
	}
	return p.Body
}
