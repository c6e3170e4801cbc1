package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/review/history"
	"github.com/sotlabs/sot/review/synthesis"
)

// This file is the re-review of a change reviewed before (--since): the
// diff since the commit the earlier review saw, and its findings carried
// over, resolved or kept out as dismissed.

// SinceAuto asks for the last review of this line of work.
const SinceAuto = "auto"

// since is the earlier review a re-review continues from.
type since struct {
	// Commit is where the new diff starts: the head the earlier review
	// saw, or the commit --since named.
	Commit string
	// RunID and Dir name the earlier review ("" when --since named a
	// commit no review saw); Items are its findings and observations.
	RunID, Dir          string
	Items, Observations []synthesis.Item
}

var runIDPattern = lazyre.New(`^r[0-9a-f]{10}$`)

// priorReview is a finished review of the project's .sot/reviews that saw
// a commit.
type priorReview struct {
	dir  string
	st   run.State
	rec  *record
	head string
}

// priorReviews lists the finished diff reviews of the project that
// recorded the commit they saw, newest first.
func priorReviews(top string) []priorReview {
	dirs, _ := filepath.Glob(filepath.Join(top, ".sot", "reviews", "*"))
	var out []priorReview
	for _, dir := range dirs {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue
		}
		rec := &record{}
		st := loadState(dir, rec)
		if !st.Authentic || rec.Head == "" {
			continue // a record sot did not write for this user is never trusted
		}
		if _, err := os.Lstat(filepath.Join(dir, resultFile)); err != nil {
			continue
		}
		out = append(out, priorReview{dir: dir, st: st, rec: rec, head: rec.Head})
	}
	slices.SortStableFunc(out, func(a, b priorReview) int { return b.st.Created.Compare(a.st.Created) })
	return out
}

// findSince finds what --since spec names, for a review whose new side is
// head: auto, the newest review whose commit is head's ancestor; a run id
// or a run's directory, that review; anything else, a commit (with the
// newest review that saw it, when there is one).
func findSince(ctx context.Context, top, dir, spec, head string) (*since, error) {
	reviews := priorReviews(top)
	load := func(p priorReview) (*since, error) {
		r, err := LoadRun(p.dir)
		if err != nil {
			return nil, err
		}
		return &since{Commit: p.head, RunID: p.st.RunID, Dir: p.dir, Items: r.Result.Items, Observations: r.Result.Observations}, nil
	}
	switch {
	case spec == SinceAuto:
		for _, p := range reviews {
			if material.IsAncestor(ctx, dir, p.head, head) {
				return load(p)
			}
		}
		return nil, nil // never reviewed: the whole change is new
	case runIDPattern.Re().MatchString(spec) || strings.ContainsRune(spec, filepath.Separator):
		for _, p := range reviews {
			if p.st.RunID == spec || sameDir(p.dir, spec) {
				return load(p)
			}
		}
		return nil, &engine.UserError{Msg: fmt.Sprintf("--since %s: no finished review of a diff with that run id or directory in %s (sot runs lists them)", spec, filepath.Join(".sot", "reviews"))}
	}
	commit, err := material.Resolve(ctx, dir, spec)
	if err != nil {
		return nil, &engine.UserError{Msg: fmt.Sprintf("--since %s: not a run id, a review's directory or a commit: %v", spec, err)}
	}
	for _, p := range reviews {
		if p.head == commit {
			return load(p)
		}
	}
	return &since{Commit: commit}, nil
}

func sameDir(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// sinceRange is the diff of a re-review: from the earlier review's commit
// to the new side of the change, limited to the change's own files (a
// branch that merged its base since brings none of the base's changes).
func (o *Options) sinceRange(ctx context.Context, top, dir string) (*since, string, []string, error) {
	full := o.Diff
	head, err := material.HeadOf(ctx, dir, full)
	if err != nil {
		return nil, "", nil, err
	}
	s, err := findSince(ctx, top, dir, o.Since, head)
	if err != nil || s == nil {
		return nil, full, nil, err
	}
	paths, err := material.ChangedPaths(ctx, dir, full)
	if err != nil {
		return nil, "", nil, err
	}
	if len(paths) == 0 {
		return nil, "", nil, ErrNoChanges
	}
	rng := s.Commit // against the working tree
	if full != "" {
		rng = s.Commit + " " + head
	}
	return s, rng, paths, nil
}

// headReader reads the files of the reviewed version: the working tree's,
// or those of the commit the diff's new side is.
func headReader(ctx context.Context, m *material.Material) history.Reader {
	return func(p string) ([]string, bool) {
		if m.Worktree {
			root, err := os.OpenRoot(m.Top)
			if err != nil {
				return nil, false
			}
			defer root.Close()
			b, err := plainfile.ReadIn(root, filepath.FromSlash(p))
			if err != nil {
				return nil, false
			}
			return history.Lines(string(b)), true
		}
		b, ok, err := material.AtBase(ctx, m.Top, m.Head, p)
		if err != nil || !ok {
			return nil, false
		}
		return history.Lines(string(b)), true
	}
}

// applyHistory gives the synthesis's items their fingerprints and, for a
// diff, keeps out what the user dismissed before; a re-review adds the
// earlier review's findings, carried over or resolved.
func (p *Plan) applyHistory(ctx context.Context, res *synthesis.Result) error {
	m := p.Material
	if m.Type != material.TypeDiff || m.Head == "" {
		return nil
	}
	read := headReader(ctx, m)
	history.Stamp(res.Items, read)
	history.Stamp(res.Observations, read)
	dismissals, err := readDismissals(p.top)
	if err != nil {
		return err
	}
	// This run's own decisions stay on its items (applyResolutions): the
	// same review written again shows them where they were.
	dismissals = slices.DeleteFunc(dismissals, func(d history.Dismissal) bool { return d.RunID == res.RunID })
	var carriedA, carriedC, resolvedA, resolvedC []synthesis.Item
	if s := p.since; s != nil {
		res.Since = &synthesis.Since{RunID: s.RunID, Commit: s.Commit}
		carriedA, resolvedA = history.Carry(s.RunID, s.Items, read)
		carriedC, resolvedC = history.Carry(s.RunID, s.Observations, read)
	}
	var dismissedA, dismissedC []synthesis.Item
	res.Items, dismissedA = history.Merge(res.Items, carriedA, dismissals)
	res.Observations, dismissedC = history.Merge(res.Observations, carriedC, dismissals)
	res.DismissedEarlier = append(dismissedA, dismissedC...)
	res.Resolved = append(resolvedA, resolvedC...)
	if p.since == nil {
		// Without an earlier review there is no history to tell.
		for _, list := range [][]synthesis.Item{res.Items, res.Observations} {
			for i := range list {
				list[i].History = ""
			}
		}
	}
	renumberCarried(res.Items, "S")
	renumberCarried(res.Observations, "O")
	return nil
}

// renumberCarried gives the items carried over from an earlier review
// and not found again (which come without an id) the ids after this
// review's own, so that an id names one item in each review.
func renumberCarried(items []synthesis.Item, prefix string) {
	n := 0
	for _, it := range items {
		var k int
		if _, err := fmt.Sscanf(it.ID, prefix+"%d", &k); err == nil {
			n = max(n, k)
		}
	}
	for i := range items {
		if items[i].ID == "" {
			n++
			items[i].ID = fmt.Sprintf("%s%d", prefix, n)
		}
	}
}

// projectResolutions is the project's record of decisions on findings,
// by fingerprint, so that a dismissal holds in every later review.
var projectResolutions = filepath.Join(".sot", "resolutions.jsonl")

// readDismissals reads the findings dismissed in the project (the latest
// decision about each fingerprint wins).
func readDismissals(top string) ([]history.Dismissal, error) {
	b, err := plainfile.ReadOwn(filepath.Join(top, projectResolutions))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the project's resolutions: %w", err)
	}
	type decided struct {
		history.Dismissal
		Status string `json:"status"`
	}
	latest := map[string]decided{}
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		var d decided
		if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &d) != nil || d.Fingerprint == "" {
			continue
		}
		if _, ok := latest[d.Fingerprint]; !ok {
			order = append(order, d.Fingerprint)
		}
		latest[d.Fingerprint] = d
	}
	var out []history.Dismissal
	for _, fp := range order {
		if d := latest[fp]; d.Status == Dismissed {
			out = append(out, d.Dismissal)
		}
	}
	return out, nil
}

// limitTo is the diff's paths limit (absolute, from PATH arguments; none
// limits nothing) narrowed to the change's own files (relative to top).
func limitTo(only, changed []string, top string) []string {
	var out []string
	for _, c := range changed {
		abs := filepath.Join(top, filepath.FromSlash(c))
		if len(only) == 0 {
			out = append(out, abs)
			continue
		}
		for _, o := range only {
			if abs == o || strings.HasPrefix(abs, o+string(filepath.Separator)) {
				out = append(out, abs)
				break
			}
		}
	}
	return out
}

// sinceCoordinates tells the specialists what they review: the change
// since the earlier review.
func sinceCoordinates(full string, s *since) string {
	what := "the working tree"
	if full != "" {
		what = full
	}
	short := s.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	if s.RunID != "" {
		return fmt.Sprintf("%s since review %s (commit %s)", what, s.RunID, short)
	}
	return fmt.Sprintf("%s since commit %s", what, short)
}

// sinceRun names the earlier review in the run's record.
func (p *Plan) sinceRun() string {
	if p.since == nil {
		return ""
	}
	return p.since.RunID
}
