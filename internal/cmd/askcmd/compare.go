package askcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/internal/cmdutil"
)

// compare runs --compare: every question under every configuration, then
// the table and the rates.
func compare(ctx context.Context, f *cmdutil.Factory, o *Options, base *ask.Options) error {
	questions := []string{o.Question}
	if o.Questions != "" {
		b, err := os.ReadFile(o.Questions)
		if err != nil {
			return cmdutil.UsageError("--questions: %v", err)
		}
		questions = nil
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				questions = append(questions, l)
			}
		}
		if len(questions) == 0 {
			return cmdutil.UsageError("--questions %s holds no question (one a line; # starts a comment)", o.Questions)
		}
	}
	if o.DryRun || o.OutputDir != "" {
		return cmdutil.UsageError("--compare makes a run of each configuration in its own directory: leave out --dry-run and --output-dir")
	}
	base.Progress = nil
	newOptions := func(q string) *ask.Options {
		ao := *base
		cfg := *base.Config
		ao.Config, ao.Question = &cfg, q
		return &ao
	}
	c, err := ask.Compare(ctx, questions, newOptions)
	if err != nil {
		return err
	}
	if o.JSON {
		b, _ := json.MarshalIndent(c, "", "  ")
		f.IO.Out.Write(append(b, '\n'))
		return nil
	}
	w := f.IO.Out
	for i, m := range c.Runs {
		if i%len(ask.Configurations) == 0 {
			fmt.Fprintf(w, "\n%s\n%-18s %5s %8s %8s %7s  %7s %9s %3s %3s %7s %7s\n", m.Question, "configuration", "calls", "input", "cached", "output", "cost", "wall", "ten", "agr", "tokens", "latency")
		}
		if m.Error != "" {
			fmt.Fprintf(w, "%-18s failed: %s\n", m.Configuration, m.Error)
			continue
		}
		fmt.Fprintln(w, m.String())
	}
	if len(questions) > 1 {
		fmt.Fprintf(w, "\n%-18s %9s %9s %9s\n", "configuration", "conflicts", "by group", "inter-grp")
		for _, r := range c.Rates {
			fmt.Fprintf(w, "%-18s %8.0f%% %8.0f%% %8.0f%%\n", r.Configuration, r.ConflictRate*100, r.GroupRate*100, r.InterGroupRate*100)
		}
		fmt.Fprintln(w, "(the seed's targets: conflict detection 15-30% of questions, group decomposition over 60%, inter-group conflicts 20-40%)")
	}
	return nil
}
