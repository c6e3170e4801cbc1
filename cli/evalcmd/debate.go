package evalcmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/internal/project"
)

// DebateOptions are the inputs of "sot eval debate".
type DebateOptions struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	// Runs are debate run directories (default: the project's finished
	// debates).
	Runs []string
	JSON bool
	Seed uint64
}

func newDebateCmd(f *cmdutil.Factory) *cobra.Command {
	o := &DebateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "debate [RUN-DIR...]",
		Short: "Check that the debate's diversity measures tell a real ensemble from a shuffled or duplicated one",
		Long: `Check the diversity measures sot debate reports: each scores the real thing
and two variants, one whose words are shuffled among its members (it looks
as varied, but says nothing coherent) and one whose members repeat one
another. A measure separates a variant when it scores the real one at least
0.1 higher.

The observers' measures (the seed's Jaccard distance and the content-word
distance) are checked on the observers sot ships; the question distinctness
on the branch questions of each finished debate (RUN-DIR arguments, or every
debate under .sot/debates). No model is called.`,
		Example: `  sot eval debate
  sot eval debate .sot/debates/r0123456789 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.WorkDir, o.Runs = f.WorkDir(), args
			lib, err := f.Library()
			if err != nil {
				return err
			}
			return RunDebate(o, debate.BuiltinEnsemble(lib))
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the checks as JSON")
	cmd.Flags().Uint64Var(&o.Seed, "seed", 1, "the seed of the shuffles")
	return cmd
}

// RunDebate checks the measures on the ensemble and the debates.
func RunDebate(o *DebateOptions, ensemble []*debate.Observer) error {
	seps, err := debate.CheckEnsemble(ensemble, o.Seed)
	if err != nil {
		return err
	}
	runs := o.Runs
	if len(runs) == 0 {
		if top, ok := project.Top(o.WorkDir); ok {
			runs, _ = filepath.Glob(filepath.Join(top, ".sot", "debates", "*"))
		}
	}
	var notes []string
	for _, dir := range runs {
		b, err := os.ReadFile(filepath.Join(dir, debate.JSONFile))
		if err != nil {
			if len(o.Runs) > 0 {
				return cmdutil.UsageError("%s: %v (give the directory of a finished debate)", dir, err)
			}
			continue
		}
		s, err := debate.CheckQuestions(b, o.Seed)
		if err != nil {
			notes = append(notes, err.Error())
			continue
		}
		seps = append(seps, s)
	}
	if o.JSON {
		b, err := json.MarshalIndent(map[string]any{"margin": debate.SeparationMargin, "checks": seps, "notes": notes}, "", "  ")
		if err != nil {
			return err
		}
		o.IO.Out.Write(append(b, '\n'))
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tof\treal\tshuffled\tduplicated\tseparates shuffled\tseparates duplicated")
	yes := map[bool]string{true: "yes", false: "no"}
	for _, s := range seps {
		cmdutil.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%s\t%s\n", s.Measure, s.Subject, s.Real, s.Shuffled, s.Duplicated, yes[s.SeparatesShuffled], yes[s.SeparatesDuplicated])
	}
	tw.Flush()
	for _, n := range notes {
		cmdutil.Note(o.IO.ErrOut, n)
	}
	if len(runs) == 0 {
		cmdutil.Note(o.IO.ErrOut, "no finished debate to check the question measure on: sot debate writes one")
	}
	return nil
}
