// Package conflicts implements "sot conflicts": the lexical conflict
// detector of package conflict, run on its own over a JSON array of answers.
package conflicts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/conflict"
	"github.com/sotlabs/sot/internal/project"
)

// Options are the inputs of "sot conflicts".
type Options struct {
	IO      *cmdutil.IOStreams
	WorkDir string
	// Input is the file of answers, or "-" for standard input.
	Input string
	// Threshold is the similarity at and above which two answers agree.
	Threshold float64
	// FollowSymlinks is --follow-symlinks.
	FollowSymlinks bool
	// Keep is how many conflicts and how many agreements the analysis
	// lists, the strongest.
	Keep int
	// Pairs is the file that receives every pair, one JSON line each; ""
	// writes none.
	Pairs string
}

// NewCmd returns "sot conflicts".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "conflicts FILE|-",
		Short: "Find agreement and conflict between answers by their words (northstar's detector)",
		Long: `Compare every pair of answers the way northstar.LM's conflict detector does
and print its analysis as JSON. No model is called.

For each pair, sot counts in both answers the words that mark disagreement
(however, but, although, despite, risk, concern, on the other hand, versus,
vs, instead, ...: 24 in all) and agreement (also, similarly, confirms,
supports, as well, in line with, ...: 17 in all): as whole words in any
case, every occurrence, so "but" counts in "but," and not in "button", and
"risk" not in "risks". It measures the pair's similarity: the Jaccard index
of their lowercased, white-space-separated words longer than three
characters. The pair is
  a conflict   when it has more conflict than agreement markers and its
               similarity is below the threshold (confidence 0.5 + 0.1 per
               conflict marker, at most 1);
  an agreement when it has more agreement markers, or its similarity is at
               or above the threshold (confidence 0.5 + 0.1 per agreement
               marker + 0.3 × similarity, at most 1);
  neutral      otherwise, and not listed. A pair with an empty answer is
               not compared.

The input, from FILE or, with -, from standard input, is a JSON array of
answers in northstar's shape; agentName and perspective may be left out
("Source N", "Default"), and perspective may be northstar's object with a
roleLabel:

  [{"response": "The pilot confirms the savings.", "agentName": "Q1 planning", "perspective": "Advocate"},
   {"response": "However, the pilot exposed a risk.", "agentName": "Q2 review", "perspective": {"roleLabel": "Critic"}}]

The output has hasConflicts; conflicts and agreements, each pair with its
type, confidence, the two sources (agentName, perspective and a
150-character excerpt), similarity, conflictScore and agreementScore;
totalConflicts and totalAgreements; truncated; conflictThemes, the five
most frequent long words of the conflicting excerpts; and summary, such as
"2 tension(s) detected; 3 point(s) of agreement".

The pairs grow with the square of the answers (1,000 answers make
499,500), so the lists hold only the strongest: at most --keep (200) of
each type, those of the highest confidence (the earlier pair first among
equals), in the order of the input. truncated is true when a list left
pairs out. The counts, the themes and the summary are over every pair.
--pairs FILE writes every conflict and agreement to FILE as it is found,
one JSON object a line (NDJSON) in the shape of the lists, in the order of
the input; nothing that grows with the pairs is held in memory.

The detector reads vocabulary, not claims: a critic whose answer is full of
"risk" and "but" conflicts with everyone. It is a cheap first signal.`,
		Example: `  sot conflicts answers.json
  sot conflicts --threshold 0.6 answers.json   # the threshold northstar's app runs at
  sot conflicts - < answers.json | jq -r .summary
  sot conflicts --keep 20 --pairs pairs.ndjson answers.json   # 20 of each listed, every pair in pairs.ndjson`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.UsageError("conflicts takes one FILE of answers, or - to read them from standard input; got %d arguments (see 'sot conflicts --help')", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Input = args[0]
			o.WorkDir = f.WorkDir()
			return Run(o)
		},
	}
	cmdutil.AddFollowSymlinks(cmd.Flags(), &o.FollowSymlinks)
	cmd.Flags().Float64Var(&o.Threshold, "threshold", conflict.DefaultThreshold, "similarity, from 0 to 1, at and above which two answers agree")
	cmd.Flags().IntVar(&o.Keep, "keep", conflict.DefaultKeep, "how many conflicts and how many agreements to list, the strongest; the counts are of every pair")
	cmd.Flags().StringVar(&o.Pairs, "pairs", "", "also write every pair to `FILE`, one JSON line each (NDJSON), replacing it")
	return cmd
}

// Run reads the answers, detects, and prints the analysis.
func Run(o *Options) error {
	if !(o.Threshold >= 0 && o.Threshold <= 1) {
		return cmdutil.UsageError("--threshold %s is not a similarity from 0 to 1", strconv.FormatFloat(o.Threshold, 'g', -1, 64))
	}
	if o.Keep < 0 {
		return cmdutil.UsageError("--keep %d: name 0 or more pairs", o.Keep)
	}
	name, data, err := o.read()
	if err != nil {
		return err
	}
	rs, err := parse(name, data)
	if err != nil {
		return err
	}
	var a conflict.Analysis
	if o.Pairs == "" {
		a, err = conflict.Detect(rs, conflict.Options{Threshold: o.Threshold, Keep: o.Keep})
	} else {
		a, err = o.detectInto(rs)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(o.IO.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(a)
}

// detectInto detects and streams every pair into --pairs: into a new file
// with an unpredictable name, created exclusively beside it, renamed over
// it once whole. A symlink there is refused, never written through, and so
// is anything but a regular file.
func (o *Options) detectInto(rs []conflict.Response) (conflict.Analysis, error) {
	path := o.Pairs
	if !filepath.IsAbs(path) && o.WorkDir != "" {
		path = filepath.Join(o.WorkDir, path)
	}
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return conflict.Analysis{}, cmdutil.UsageError("--pairs %s is a symlink; sot writes nothing through a symlink: remove it or name another file", o.Pairs)
		case !fi.Mode().IsRegular():
			return conflict.Analysis{}, cmdutil.UsageError("--pairs %s is not a regular file", o.Pairs)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return conflict.Analysis{}, fmt.Errorf("--pairs %s: %w", o.Pairs, err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp") // O_CREATE|O_EXCL: never through a link
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return conflict.Analysis{}, cmdutil.UsageError("--pairs %s: the directory %s does not exist", o.Pairs, dir)
		}
		return conflict.Analysis{}, fmt.Errorf("--pairs %s: %w", o.Pairs, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 64<<10)
	a, err := conflict.Detect(rs, conflict.Options{Threshold: o.Threshold, Keep: o.Keep, Each: conflict.NDJSON(w)})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path) // replaces the name, never what a link there points to
	}
	if err != nil {
		return conflict.Analysis{}, fmt.Errorf("--pairs %s: %w", o.Pairs, err)
	}
	done = true
	return a, nil
}

// read returns the input's name for messages and its bytes.
func (o *Options) read() (string, []byte, error) {
	if o.Input == "-" {
		data, err := io.ReadAll(o.IO.In)
		if err != nil {
			return "", nil, fmt.Errorf("reading standard input: %w", err)
		}
		return "standard input", data, nil
	}
	path := o.Input
	if !filepath.IsAbs(path) && o.WorkDir != "" {
		path = filepath.Join(o.WorkDir, path)
	}
	data, err := project.ReadInput(path, o.FollowSymlinks)
	if err != nil {
		var le *project.LinkError
		if errors.As(err, &le) {
			return "", nil, cmdutil.AsUsage(err)
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", nil, cmdutil.UsageError("cannot read %s: %v", o.Input, err)
	}
	return o.Input, data, nil
}

// parse reads a JSON array of answers, naming the place of any mistake.
func parse(name string, data []byte) ([]conflict.Response, error) {
	const want = `a JSON array of answers, [{"response": "...", "agentName": "...", "perspective": "..."}, ...]`
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, cmdutil.UsageError("%s is empty; sot conflicts reads %s", name, want)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, cmdutil.UsageError("%s:%d:%d: not valid JSON: %v", name, line, col, err)
		}
		return nil, cmdutil.UsageError("%s is not %s", name, want)
	}
	if len(raw) == 0 {
		return nil, cmdutil.UsageError("%s has no answers; sot conflicts compares two or more", name)
	}
	rs := make([]conflict.Response, len(raw))
	for i, m := range raw {
		m = bytes.TrimSpace(m)
		if len(m) == 0 || m[0] != '{' {
			return nil, cmdutil.UsageError("%s: answer %d is %s, not an object like {\"response\": \"...\"}", name, i+1, kind(m))
		}
		if err := json.Unmarshal(m, &rs[i]); err != nil {
			return nil, cmdutil.UsageError("%s: answer %d: %v", name, i+1, err)
		}
	}
	return rs, nil
}

// position turns a byte offset into a line and a column, both from 1. A
// syntax error's offset is just past the byte that broke the JSON.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:max(offset-1, 0)]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// kind names the JSON value that starts m.
func kind(m []byte) string {
	switch m[0] {
	case 'n':
		return "null"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}
