package evalcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/eval"
	"github.com/sotlabs/sot/internal/safedir"
)

// runner reviews the cases of one evaluation in its directory.
type runner struct {
	o   *Options
	top string // the project's top
	dir string // the evaluation's directory, under top
	out io.Writer
}

// review is one review command's result.
type review struct {
	r    eval.Review
	code int
	err  string
}

// run reviews every case in every mode and scores the reviews; it
// returns the report and how many reviews failed or were partial.
func (r *runner) run(ctx context.Context, cases []eval.Case) (*eval.Report, int, error) {
	// The evaluation's directory is reached through no symlink, and so is
	// each case's repository before it is written (see below).
	d, err := safedir.Open(r.top, r.dir)
	if err != nil {
		return nil, 0, err
	}
	d.Close()
	rep := &eval.Report{Name: r.o.Name, Model: modelName(r.o), Cases: len(cases), Matching: eval.MatchingRule,
		Budget: fmt.Sprintf("equal cost per case: single-model spends what one review call costs; self-consistency takes as many samples as the society's cost on the case buys (1 to %d); each mode's cost is what it spent", r.o.MaxSamples)}
	modes := map[string]*eval.Mode{}
	order := []string{}
	add := func(name, desc string) *eval.Mode {
		if m, ok := modes[name]; ok {
			return m
		}
		m := &eval.Mode{Name: name, Description: desc, Specialists: map[string]eval.Figures{}}
		modes[name] = m
		order = append(order, name)
		return m
	}
	specialistOutcomes := map[string]map[string][]eval.Outcome{}
	incomplete := 0
	record := func(c eval.Case, name, desc string, rv review, bySpecialist bool) {
		m := add(name, desc)
		o, _ := eval.Score(c, rv.r)
		if rv.err != "" {
			o.Error = rv.err
		}
		if o.Error != "" || o.Partial {
			incomplete++
		}
		m.Outcomes = append(m.Outcomes, o)
		if bySpecialist && rv.err == "" {
			if specialistOutcomes[name] == nil {
				specialistOutcomes[name] = map[string][]eval.Outcome{}
			}
			for s, so := range eval.BySpecialist(c, rv.r) {
				specialistOutcomes[name][s] = append(specialistOutcomes[name][s], so)
			}
		}
	}
	for i, c := range cases {
		if c.Kind == eval.KindClean {
			rep.Clean++
		}
		rep.Defects += len(c.Defects)
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		fmt.Fprintf(r.out, "sot: case %d of %d: %s\n", i+1, len(cases), c.ID)
		repo := filepath.Join(r.dir, "repos", c.ID)
		if err := safedir.Check(r.top, repo); err != nil {
			return nil, 0, err
		}
		if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
			os.RemoveAll(repo)
			if err := c.Repo(ctx, repo); err != nil {
				return nil, 0, err
			}
		}
		var society, single review
		haveSociety, haveSingle := false, false
		for _, mode := range r.o.Modes {
			switch mode {
			case ModeSociety:
				society, haveSociety = r.review(ctx, repo, c, mode, nil), true
				record(c, ModeSociety, "the society of thought in parallel, each specialist on its own", society, true)
			case ModeDebate:
				rv := r.review(ctx, repo, c, mode, []string{"--interaction-mode", "debate"})
				record(c, ModeDebate, "the society arguing in rounds", rv, true)
			case ModeSingle:
				single, haveSingle = r.review(ctx, repo, c, mode, []string{"--mode", "single-model"}), true
				record(c, ModeSingle, "one model, one generic review prompt", single, false)
			case ModeConsistency:
				// Its first sample is the single mode's review.
				if !haveSingle {
					single, haveSingle = r.review(ctx, repo, c, ModeSingle, []string{"--mode", "single-model"}), true
				}
				k := 1
				if haveSociety && single.r.CostUSD > 0 {
					k = int(math.Max(1, math.Floor(society.r.CostUSD/single.r.CostUSD)))
				}
				k = min(k, r.o.MaxSamples)
				samples := []eval.Review{single.r}
				failed := single.err
				for s := 2; s <= k; s++ {
					rv := r.review(ctx, repo, c, fmt.Sprintf("%s-%d", ModeConsistency, s), []string{"--mode", "single-model", "--no-cache"})
					if rv.err != "" && failed == "" {
						failed = rv.err
					}
					samples = append(samples, rv.r)
				}
				desc := fmt.Sprintf("the single prompt sampled as often as the society's cost buys (at most %d), findings kept when most samples report them", r.o.MaxSamples)
				record(c, ModeConsistency+" (majority)", desc, review{r: eval.Vote(samples, true), err: failed}, false)
				desc = fmt.Sprintf("the single prompt sampled as often as the society's cost buys (at most %d), every finding of any sample kept", r.o.MaxSamples)
				record(c, ModeConsistency+" (union)", desc, review{r: eval.Vote(samples, false), err: failed}, false)
			}
		}
	}
	seed := uint64(len(cases))
	for _, name := range order {
		m := modes[name]
		m.Figures = eval.Summarize(m.Outcomes, seed)
		for s, os := range specialistOutcomes[name] {
			m.Specialists[s] = eval.Summarize(os, seed)
		}
		if len(m.Specialists) == 0 {
			m.Specialists = nil
		}
		rep.Modes = append(rep.Modes, *m)
	}
	return rep, incomplete, nil
}

// review runs one sot review of a case's change into the evaluation's
// directory and reads its review.json. A review that stopped (Ctrl-C)
// stops the evaluation.
func (r *runner) review(ctx context.Context, repo string, c eval.Case, mode string, extra []string) review {
	out := filepath.Join(r.dir, "runs", mode, c.ID)
	args := []string{"review", "--diff", eval.BaseBranch + "..." + eval.ChangeBranch, "--interactive", "false", "--format", "json",
		"--output-dir", out}
	if !slices.Contains(extra, "single-model") { // one general reviewer takes no specialists or lenses
		args = append(args, "--perspectives", r.o.Perspectives)
		if r.o.Specialists != "" {
			args = append(args, "--specialists", r.o.Specialists)
		}
	}
	if r.o.Model != "" {
		args = append(args, "--model", r.o.Model)
	}
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, r.o.Exe, args...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), r.o.Env...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	code := exitCode(err)
	rv := review{code: code}
	b, rerr := os.ReadFile(filepath.Join(out, "review.json"))
	switch {
	case code == cmdutil.ExitInterrupted || ctx.Err() != nil:
		rv.err = "interrupted"
	case rerr != nil:
		rv.err = fmt.Sprintf("exit %d: %s", code, lastLine(log.String()))
	default:
		if rv.r, rerr = eval.ReadReview(b); rerr != nil {
			rv.err = rerr.Error()
		}
	}
	return rv
}

func lastLine(s string) string {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	return string(lines[len(lines)-1])
}

func modelName(o *Options) string {
	if o.Model != "" {
		return o.Model
	}
	if m := os.Getenv("SOT_MODEL"); m != "" {
		return m
	}
	return "the configuration's default"
}
