package debate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/lexical"
	"github.com/sotlabs/sot/persona"
)

// questions asks every observer (or, without observers, the generic
// prompt) for its branch question, all in one step, with the main
// debate's last summaries riding along. It returns the questions that
// came back, in the observers' order.
func (pr *protocol) questions(ctx context.Context, observers []*Observer, main []*Turn) []*Question {
	var tasks []*engine.Task
	asked := observers
	if len(asked) == 0 {
		asked = []*Observer{nil}
	}
	for _, ob := range asked {
		label := "debate/question/generic"
		if ob != nil {
			label = "debate/question/" + ob.ID
		}
		tasks = append(tasks, &engine.Task{ID: label, Group: "observers", Request: pr.c.questionRequest(label, ob, main)})
	}
	what := fmt.Sprintf("branch questions from %d observer(s)", len(observers))
	if len(observers) == 0 {
		what = "the generic branch question"
	}
	var out []*Question
	for i, r := range pr.step(ctx, what, tasks) {
		ob := asked[i]
		who := "the generic question"
		if ob != nil {
			who = ob.Name + "'s question"
		}
		if r.Err != nil {
			pr.missing("question", who, r.Err)
			continue
		}
		var a questionAnswer
		if err := decode(r.Resp, &a); err != nil {
			pr.missing("question", who, fmt.Errorf("unreadable answer: %w", err))
			continue
		}
		q := &Question{Question: oneLine(a.Question), Missing: oneLine(a.Missing), Why: oneLine(a.Why), Context: oneLine(a.DebateSummary)}
		if ob != nil {
			q.Observer, q.Name = ob.ID, ob.Name
		}
		out = append(out, q)
	}
	return out
}

// similarity is how alike two questions are: the Jaccard similarity of
// their content words.
func similarity(a, b string) float64 { return lexical.Jaccard(lexical.Words(a), lexical.Words(b)) }

// branchesOf numbers the questions' branches in the questions' order,
// folding each question whose words are at least threshold alike with an
// earlier branch's question into that branch.
func branchesOf(questions []*Question, threshold float64) ([]*Branch, []Merge) {
	var branches []*Branch
	var merged []Merge
	for _, q := range questions {
		best, at := 0.0, -1
		for i, b := range branches {
			if s := similarity(q.Question, b.Question.Question); s > best {
				best, at = s, i
			}
		}
		if at >= 0 && best >= threshold {
			b := branches[at]
			q.Branch = b.N
			if q.Observer != "" {
				b.Observers = append(b.Observers, q.Observer)
			}
			merged = append(merged, Merge{Observer: q.Name, Question: q.Question, Into: b.N, IntoAsker: b.Question.Name, Similarity: round3(best)})
			continue
		}
		b := &Branch{N: len(branches) + 1, Question: q}
		q.Branch = b.N
		if q.Observer != "" {
			b.Observers = []string{q.Observer}
		}
		branches = append(branches, b)
	}
	return branches, merged
}

// branchDebates debates every branch's question, in lockstep: step t
// holds turn t (or round t) of every branch still going, since no branch's
// turn depends on another branch.
func (pr *protocol) branchDebates(ctx context.Context, branches []*Branch, debaters []*persona.Persona, rounds int, simult bool) {
	var lanes []*debate
	for _, b := range branches {
		lanes = append(lanes, &debate{branch: b.N, title: "Branch debate on: " + b.Question.Question, phase: &b.Debate,
			debaters: debaters, rounds: rounds, simult: simult, question: b.Question, owner: b})
	}
	for pr.stopped == nil {
		var tasks []*engine.Task
		type owned struct {
			lane *debate
			due  []pending
			from int
		}
		var owners []owned
		for _, l := range lanes {
			if l.done() {
				continue
			}
			t, due := l.next(pr.c)
			owners = append(owners, owned{l, due, len(tasks)})
			tasks = append(tasks, t...)
		}
		if len(tasks) == 0 {
			return
		}
		first := owners[0]
		what := fmt.Sprintf("%d branch debate(s), turn %d of %d", len(owners), first.due[0].n, first.lane.total())
		if simult {
			what = fmt.Sprintf("%d branch debate(s), round %d of %d", len(owners), first.due[0].round, rounds)
		}
		results := pr.step(ctx, what, tasks)
		if ctx.Err() != nil {
			return
		}
		for _, o := range owners {
			o.lane.take(pr, o.due, results[o.from:o.from+len(o.due)])
		}
	}
}

// synthesize synthesizes every branch that was debated, in one step, with
// the branches' last summaries riding along.
func (pr *protocol) synthesize(ctx context.Context, branches []*Branch) {
	var tasks []*engine.Task
	var which []*Branch
	for _, b := range branches {
		if b.Failed != "" {
			continue
		}
		label := fmt.Sprintf("debate/branch/%d/synthesis", b.N)
		tasks = append(tasks, &engine.Task{ID: label, Group: fmt.Sprintf("branch %d", b.N), Request: pr.c.synthesisRequest(label, b.Question, b.Debate.Turns)})
		which = append(which, b)
	}
	if len(tasks) == 0 {
		return
	}
	for i, r := range pr.step(ctx, fmt.Sprintf("the synthesis of %d branch(es)", len(tasks)), tasks) {
		b := which[i]
		var a Synthesis
		err := r.Err
		if err == nil {
			if err = decode(r.Resp, &a); err != nil {
				err = fmt.Errorf("unreadable answer: %w", err)
			}
		}
		if err != nil {
			pr.failBranch(b, "synthesis", err)
			continue
		}
		b.Synthesis = &Synthesis{Perspectives: lines(a.Perspectives), Resolved: lines(a.Resolved), InTension: lines(a.InTension), Summary: oneLine(a.Summary)}
	}
}

// mergeBack merges every synthesized branch back into the main debate, in
// one step.
func (pr *protocol) mergeBack(ctx context.Context, main []*Turn, branches []*Branch) {
	var tasks []*engine.Task
	var which []*Branch
	for _, b := range branches {
		if b.Failed != "" || b.Synthesis == nil {
			continue
		}
		label := fmt.Sprintf("debate/branch/%d/merge", b.N)
		tasks = append(tasks, &engine.Task{ID: label, Group: fmt.Sprintf("branch %d", b.N), Request: pr.c.mergeRequest(label, main, b.Question, b.Synthesis)})
		which = append(which, b)
	}
	if len(tasks) == 0 {
		return
	}
	for i, r := range pr.step(ctx, fmt.Sprintf("the merge-back of %d branch(es)", len(tasks)), tasks) {
		b := which[i]
		err := r.Err
		if err == nil && strings.TrimSpace(r.Resp.Text) == "" {
			err = errors.New("the model gave an empty merge-back")
		}
		if err != nil {
			pr.failBranch(b, "merge-back", err)
			continue
		}
		b.MergeBack = strings.TrimSpace(r.Resp.Text)
	}
}

// finalMerge merges every merged-back branch into one understanding. With
// one branch, its merge-back is the understanding and no call is made.
func (pr *protocol) finalMerge(ctx context.Context, branches []*Branch) {
	var done []*Branch
	for _, b := range branches {
		if b.Complete() {
			done = append(done, b)
		}
	}
	switch len(done) {
	case 0:
		pr.res.Notes = append(pr.res.Notes, "no branch was merged back, so there is no enriched understanding")
		return
	case 1:
		pr.res.Final = done[0].MergeBack
		if len(branches) == 1 {
			pr.res.Notes = append(pr.res.Notes, "one branch: its merge-back is the enriched understanding, so no final merge was needed")
		} else {
			pr.res.Notes = append(pr.res.Notes, fmt.Sprintf("only branch %d was merged back: its merge-back is the enriched understanding", done[0].N))
		}
		return
	}
	label := "debate/final"
	r := pr.step(ctx, fmt.Sprintf("the final merge of %d branches", len(done)), []*engine.Task{{ID: label, Group: "final", Request: pr.c.finalRequest(label, done)}})[0]
	err := r.Err
	if err == nil && strings.TrimSpace(r.Resp.Text) == "" {
		err = errors.New("the model gave an empty final merge")
	}
	if err != nil {
		pr.missing("final", "the final merge across the branches", err)
		return
	}
	pr.res.Final = strings.TrimSpace(r.Resp.Text)
}

// failBranch records that branch b stopped at step.
func (pr *protocol) failBranch(b *Branch, step string, err error) {
	b.Failed = step
	pr.missing(fmt.Sprintf("branch %d", b.N), fmt.Sprintf("the %s of branch %d (%s)", step, b.N, b.Question.Question), err)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
