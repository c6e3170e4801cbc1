// Package evalcmd implements "sot eval": it reviews a set of cases (the
// ones sot ships, or a directory of the same shape) in several modes at
// equal cost, scores each review against the defects the case planted,
// and writes the comparison as Markdown and JSON. Each review is a sot
// review command of its own, journaled in the evaluation's directory, so
// an interrupted evaluation resumes and modes share the calls they share.
package evalcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/eval"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/safedir"
)

// The modes an evaluation compares.
const (
	ModeSociety     = "sot"              // the society of thought, in parallel
	ModeDebate      = "sot-debate"       // the society, arguing in rounds
	ModeSingle      = "single"           // one model, one generic review prompt
	ModeConsistency = "self-consistency" // that prompt sampled k times, by majority and by union
)

var allModes = []string{ModeSociety, ModeDebate, ModeSingle, ModeConsistency}

// Options are the inputs of "sot eval review".
type Options struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	// Cases is a directory of cases (default: the cases sot ships);
	// Import a JSON Lines file of a public benchmark's cases instead.
	Cases, Import string
	// Only limits the cases to these ids.
	Only []string
	// Modes are the modes compared (default all).
	Modes []string
	// Name names the evaluation: its directory is .sot/eval/NAME.
	Name string
	// MaxSamples bounds self-consistency's samples.
	MaxSamples int
	// Specialists and Perspectives are the society's (sot review's flags).
	Specialists, Perspectives string
	// Model is the model every mode uses ("" for the configuration's).
	Model string
	JSON  bool
	// Exe is the sot executable the reviews run with (default this one),
	// and Env what their environment gets besides this process's.
	Exe string
	Env []string
}

// NewCmd returns "sot eval".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure what each way of reviewing finds, at equal cost, on changes with planted defects",
		Long: `Measure sot on your model: review changes whose defects are known, in several
modes at equal cost, and score each review against the defects.

sot eval review reviews each case (a small repository, a change to it, and the
defects the change plants, or none for a clean change) in these modes:

  sot               the society of thought, in parallel (sot review's default)
  sot-debate        the society, arguing in rounds (--interaction-mode debate)
  single            one model with one generic review prompt (--mode single-model)
  self-consistency  that prompt sampled as many times as the society's cost on
                    the case buys (at most --max-samples), its findings kept
                    by majority and by union

A finding finds a defect when it names the same file, lines within two of the
defect's, and a compatible category. The report gives, for each mode and for
each specialist, recall, precision, F1 and false findings per clean case, each
with a 95% interval by bootstrap over the cases, and cost, cost per true
finding and wall time.

sot eval ask asks questions whose answers a shipped corpus holds and counts
unsupported citations and dropped sentences. sot eval debate checks that the
debate's diversity measures tell a real
ensemble of observers (and a debate's real branch questions) from shuffled
and duplicated ones. See docs/eval.md.`,
	}
	cmd.AddCommand(newReviewCmd(f), newAskCmd(f), newDebateCmd(f))
	return cmd
}

func newReviewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "review [CASE-ID...]",
		Short: "Review the evaluation cases in each mode and compare what each found",
		Long: `Review the evaluation cases in each mode (see sot eval --help) and write
EVAL.md, eval.json and eval.html (a page with a chart of each mode's recall
and precision) into .sot/eval/NAME. Every review is journaled there:
running the same command again after Ctrl-C continues where it stopped, and a
mode added later pays only for its own calls. CASE-ID arguments limit the
cases.

Exit codes: 0 every review completed; 2 usage error; 3 some review failed or
was partial (the report says which); 130 interrupted.`,
		Example: `  sot eval review                          # the cases sot ships, every mode
  sot eval review --modes sot,single go-sql-concat py-sql-format
  sot eval review --cases ./my-cases --name mine --json
  sot eval review --import benchmark.jsonl --name public --modes sot,single`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.WorkDir, o.Only = f.WorkDir(), args
			cfg, _, err := f.Config()
			if err != nil {
				return err
			}
			o.Model = cfg.DefaultModel // --model and SOT_MODEL reach every review
			return Run(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Cases, "cases", "", "a directory of cases (.txtar, see docs/eval.md; default: the cases sot ships)")
	fl.StringVar(&o.Import, "import", "", "review the cases of a JSON Lines file (a diff and its issues a line, as public review benchmarks publish them) instead")
	cmd.MarkFlagsMutuallyExclusive("cases", "import")
	fl.StringSliceVar(&o.Modes, "modes", nil, "the modes to compare: sot, sot-debate, single, self-consistency (default all)")
	fl.StringVar(&o.Name, "name", "default", "the evaluation's name: its directory is .sot/eval/NAME")
	fl.IntVar(&o.MaxSamples, "max-samples", 9, "the most samples self-consistency takes of a case")
	fl.StringVar(&o.Specialists, "specialists", "", "the society's specialists, as sot review --specialists takes them (default all)")
	fl.StringVar(&o.Perspectives, "perspectives", "none", "the society's lenses, as sot review --perspectives takes them")
	fl.BoolVar(&o.JSON, "json", false, "print eval.json instead of the summary")
	return cmd
}

// Run reviews the cases in each mode and writes the report.
func Run(ctx context.Context, o *Options) error {
	top, ok := project.Top(o.WorkDir)
	if !ok {
		return cmdutil.UsageError("%s is not in a project (no .git, .sot or .paw above it); sot eval writes its runs under the project's .sot/eval", o.WorkDir)
	}
	if len(o.Modes) == 0 {
		o.Modes = allModes
	}
	for _, m := range o.Modes {
		if !slices.Contains(allModes, m) {
			return cmdutil.UsageError("--modes: %q is not a mode; give %s", m, strings.Join(allModes, ", "))
		}
	}
	if o.MaxSamples < 1 {
		return cmdutil.UsageError("--max-samples must be at least 1")
	}
	if strings.ContainsAny(o.Name, `/\`) || o.Name == "" || o.Name == "." || o.Name == ".." {
		return cmdutil.UsageError("--name %q: give a plain name", o.Name)
	}
	cases, err := loadCases(o)
	if err != nil {
		return err
	}
	if o.Exe == "" {
		if o.Exe, err = os.Executable(); err != nil {
			return err
		}
	}
	dir := filepath.Join(top, ".sot", "eval", o.Name)
	r := &runner{o: o, top: top, dir: dir, out: o.IO.ErrOut}
	rep, incomplete, err := r.run(ctx, cases)
	if err != nil {
		return err
	}
	md, js, page := rep.Markdown(), []byte(nil), []byte(nil)
	if js, err = rep.JSON(); err != nil {
		return err
	}
	if page, err = rep.HTML(); err != nil {
		return err
	}
	d, err := safedir.Open(top, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for name, data := range map[string][]byte{"EVAL.md": []byte(md), "eval.json": js, "eval.html": page} {
		if err := d.WriteFile(name, data, 0o644); err != nil {
			return err
		}
	}
	if o.JSON {
		o.IO.Out.Write(js)
	} else {
		summary(o.IO.Out, md)
		fmt.Fprintf(o.IO.Out, "sot: wrote %s (and eval.json, eval.html)\n", filepath.Join(dir, "EVAL.md"))
	}
	if incomplete > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: fmt.Errorf("%d review(s) failed or were partial; EVAL.md lists them", incomplete)}
	}
	return nil
}

// loadCases reads the cases and keeps those asked for.
func loadCases(o *Options) ([]eval.Case, error) {
	var cases []eval.Case
	var err error
	switch {
	case o.Import != "":
		f, ferr := os.Open(o.Import)
		if ferr != nil {
			return nil, cmdutil.UsageError("--import: %v", ferr)
		}
		defer f.Close()
		cases, err = eval.ImportJSONL(o.Import, f)
	case o.Cases != "":
		cases, err = eval.Load(os.DirFS(o.Cases))
	default:
		cases, err = eval.Builtin()
	}
	if err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	if len(o.Only) > 0 {
		var kept []eval.Case
		for _, id := range o.Only {
			i := slices.IndexFunc(cases, func(c eval.Case) bool { return c.ID == id })
			if i < 0 {
				return nil, cmdutil.UsageError("no case %q", id)
			}
			kept = append(kept, cases[i])
		}
		cases = kept
	}
	if len(cases) == 0 {
		return nil, cmdutil.UsageError("no cases to review")
	}
	return cases, nil
}

// summary prints the modes' section of the report's Markdown.
func summary(w io.Writer, md string) {
	start := strings.Index(md, "## Modes")
	end := strings.Index(md[start+1:], "\n## ")
	if end < 0 {
		end = len(md) - start - 1
	}
	fmt.Fprintln(w, strings.TrimSpace(md[start:start+1+end]))
}

// exitCode is a finished command's exit code (-1 when it could not run).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
