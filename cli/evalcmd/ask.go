package evalcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/eval"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/safedir"
)

// AskOptions are the inputs of "sot eval ask".
type AskOptions struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	Name    string
	Model   string
	JSON    bool
	Exe     string
	Env     []string
}

func newAskCmd(f *cmdutil.Factory) *cobra.Command {
	o := &AskOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "ask",
		Short: "Ask questions whose answers a corpus holds, and count unsupported citations and dropped sentences",
		Long: `Ask the questions sot ships over the corpus that answers them, each with the
notes that hold its answer, and report the rate of unsupported citations (a
sentence citing a reading of a note that does not hold the answer) and of
dropped sentences (those the answer's own check took out because they did not
stand on their sources), with 95% intervals by bootstrap over the questions.
Writes ASK-EVAL.md and ask-eval.json into .sot/eval/NAME; each question is a
sot ask of its own, journaled there, so the same command resumes.`,
		Example: `  sot eval ask
  sot eval ask --name gpt41 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.WorkDir = f.WorkDir()
			cfg, _, err := f.Config()
			if err != nil {
				return err
			}
			o.Model = cfg.DefaultModel
			return RunAsk(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", "default", "the evaluation's name: its directory is .sot/eval/NAME")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print ask-eval.json instead of the summary")
	return cmd
}

// RunAsk asks every question of every shipped set and scores the answers.
func RunAsk(ctx context.Context, o *AskOptions) error {
	top, ok := project.Top(o.WorkDir)
	if !ok {
		return cmdutil.UsageError("%s is not in a project (no .git, .sot or .paw above it); sot eval writes its runs under the project's .sot/eval", o.WorkDir)
	}
	if strings.ContainsAny(o.Name, `/\`) || o.Name == "" || o.Name == "." || o.Name == ".." {
		return cmdutil.UsageError("--name %q: give a plain name", o.Name)
	}
	sets, err := eval.BuiltinAskSets()
	if err != nil {
		return err
	}
	if o.Exe == "" {
		if o.Exe, err = os.Executable(); err != nil {
			return err
		}
	}
	dir := filepath.Join(top, ".sot", "eval", o.Name, "ask")
	rep := eval.AskReport{Name: o.Name, Model: o.Model, Sets: map[string]eval.AskFigures{}, Answers: map[string][]eval.AskOutcome{}}
	failed := 0
	for _, set := range sets {
		notes := filepath.Join(dir, set.Name, "notes")
		d, err := safedir.Open(top, notes)
		if err != nil {
			return err
		}
		titles := map[string]string{}
		for name, text := range set.Notes {
			titles[name] = eval.NoteTitle(name, text)
			if err := d.WriteFile(name, text, 0o644); err != nil {
				d.Close()
				return err
			}
		}
		d.Close()
		var outcomes []eval.AskOutcome
		for i, q := range set.Questions {
			fmt.Fprintf(o.IO.ErrOut, "sot: %s, question %d of %d: %s\n", set.Name, i+1, len(set.Questions), q.ID)
			out := filepath.Join(dir, set.Name, "runs", q.ID)
			args := []string{"ask", "--output-dir", out}
			if o.Model != "" {
				args = append(args, "--model", o.Model)
			}
			cmd := exec.CommandContext(ctx, o.Exe, append(args, "--", q.Question, notes)...)
			cmd.Dir = top
			cmd.Env = append(os.Environ(), o.Env...)
			var log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &log, &log
			runErr := cmd.Run()
			if ctx.Err() != nil || exitCode(runErr) == cmdutil.ExitInterrupted {
				return fmt.Errorf("interrupted: run the same command again to continue; finished questions are replayed")
			}
			b, err := os.ReadFile(filepath.Join(out, "answer.json"))
			var oc eval.AskOutcome
			if err == nil {
				oc, err = eval.ScoreAnswer(q, titles, b)
			}
			if err != nil {
				oc = eval.AskOutcome{Question: q.ID, Error: fmt.Sprintf("exit %d: %s", exitCode(runErr), lastLine(log.String()))}
				failed++
			}
			outcomes = append(outcomes, oc)
		}
		rep.Sets[set.Name] = eval.SummarizeAsk(outcomes, uint64(len(outcomes)))
		rep.Answers[set.Name] = outcomes
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	md := rep.Markdown()
	d, err := safedir.Open(top, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.WriteFile("ASK-EVAL.md", []byte(md), 0o644); err != nil {
		return err
	}
	if err := d.WriteFile("ask-eval.json", append(js, '\n'), 0o644); err != nil {
		return err
	}
	if o.JSON {
		o.IO.Out.Write(append(js, '\n'))
	} else {
		fmt.Fprint(o.IO.Out, md)
	}
	if failed > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitPartial, Err: fmt.Errorf("%d question(s) got no answer; ASK-EVAL.md lists them", failed)}
	}
	return nil
}
