package debate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/lexical"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/persona"
)

// protocol runs a debate's steps through an Executor. It starts no
// goroutine of its own, reads no clock and asks nobody: each step is one
// Execute over the calls that are due. The calls no later call reads (the
// summaries, riders) start with the next step instead of taking one of
// their own, detached from it so that they never hold it back: the
// protocol asks its Executor to detach them (engine.Detach), and an
// Executor that cannot runs them inline, before the step. The observer
// chain's next link rides in the step's Execute.
type protocol struct {
	x     engine.Executor
	hooks engine.Hooks
	c     *composer
	res   *Result

	// riders wait for the next step; detached are the riders under way
	// that no step waits for.
	riders   []rider
	detached []detached
	// chain generates the observers (generate:N): its next link rides in
	// every step until it is done.
	chain *chain
	// stopped is set when a budget ran out: no step runs after it.
	stopped error
}

// rider is a call that goes along with the next step, and done takes its
// result. A detached rider (a summary, which no later call reads) starts
// with the step but the step does not wait for it: it finishes beside the
// steps after, and flush collects it. The observer chain's next link is
// waited for, as later steps read it.
type rider struct {
	task   *engine.Task
	done   func(engine.Result)
	detach bool
}

// detached are riders under way that no step waits for.
type detached struct {
	run    *engine.Detached
	riders []rider
}

// ride queues a summary to start with the next step, detached from it.
func (pr *protocol) ride(t *engine.Task, done func(engine.Result)) {
	t.Support = true
	pr.riders = append(pr.riders, rider{task: t, done: done, detach: true})
}

// step runs tasks, with every rider queued, and returns the results of
// tasks in their order. what says what made the step due. The tasks and
// the riders that are waited for go in one Execute; detached riders start
// beside it. After a budget stopped the run, nothing is sent: every task
// and rider fails with the budget's error.
func (pr *protocol) step(ctx context.Context, what string, tasks []*engine.Task) []engine.Result {
	if pr.chain != nil && pr.chain.ready() && len(tasks) > 0 {
		pr.riders = append(pr.riders, rider{task: pr.chain.next(pr.c), done: func(r engine.Result) { pr.chain.take(pr, r) }})
	}
	riders := pr.riders
	pr.riders = nil
	if len(tasks)+len(riders) == 0 {
		return nil
	}
	all := slices.Clone(tasks)
	var waited, off []rider
	var offTasks []*engine.Task
	for _, r := range riders {
		if r.detach {
			off, offTasks = append(off, r), append(offTasks, r.task)
			continue
		}
		waited = append(waited, r)
		all = append(all, r.task)
	}
	if pr.stopped != nil || ctx.Err() != nil {
		err := pr.stopped
		if err == nil {
			err = ctx.Err()
		}
		for _, r := range riders {
			r.done(engine.Result{Task: r.task, Err: err})
		}
		results := make([]engine.Result, len(tasks))
		for i, t := range tasks {
			results[i] = engine.Result{Task: t, Err: err}
		}
		return results
	}
	st := Step{N: len(pr.res.Steps) + 1, What: what}
	for _, t := range tasks {
		st.Calls = append(st.Calls, t.Request.Label)
	}
	for _, r := range riders {
		st.Riders = append(st.Riders, r.task.Request.Label)
	}
	pr.res.Steps = append(pr.res.Steps, st)
	pr.hooks.Progressf("step %d: %s", st.N, what)
	if len(off) > 0 {
		pr.detached = append(pr.detached, detached{run: engine.Detach(ctx, pr.x, offTasks), riders: off})
	}
	var results []engine.Result
	if len(all) > 0 {
		results = pr.x.Execute(ctx, all)
	}
	for _, r := range results {
		pr.budget(r)
	}
	for i, r := range waited {
		r.done(results[len(tasks)+i])
	}
	return results[:len(tasks)]
}

// budget notes a call the budget refused: no step runs after it.
func (pr *protocol) budget(r engine.Result) {
	if r.Err != nil && errors.Is(r.Err, llm.ErrBudget) && pr.stopped == nil {
		pr.stopped = r.Err
	}
}

// finishChain generates the observers still to come, a step each, with
// any riders queued going along.
func (pr *protocol) finishChain(ctx context.Context) {
	for !pr.chain.done() {
		t := pr.chain.next(pr.c)
		r := pr.step(ctx, fmt.Sprintf("generating observer %d of %d", len(pr.chain.obs)+1, pr.chain.want), []*engine.Task{t})
		pr.chain.take(pr, r[0])
	}
}

// flush starts the riders still queued, in a step of their own (only at
// the end of a run, when no other step is due), then waits for every
// detached rider and takes its result, in the order they started.
func (pr *protocol) flush(ctx context.Context) {
	if len(pr.riders) > 0 {
		pr.step(ctx, "the summaries still due", nil)
	}
	for _, d := range pr.detached {
		for i, r := range d.run.Wait() {
			pr.budget(r)
			d.riders[i].done(r)
		}
	}
	pr.detached = nil
}

// missing records a part that could not be made.
func (pr *protocol) missing(step, what string, err error) {
	pr.res.Missing = append(pr.res.Missing, Missing{Step: step, What: what, Error: llm.Redact(err.Error()), Budget: errors.Is(err, llm.ErrBudget), err: err})
}

// stepNo is the number of the step under way, once step has begun it.
func (pr *protocol) stepNo() int { return len(pr.res.Steps) }

// debate is one debate under way: the main one, or a branch's. Each call
// to next gives the tasks of its next step; take records their results.
type debate struct {
	branch   int // 0 for the main debate
	title    string
	phase    *Phase
	debaters []*persona.Persona
	rounds   int
	simult   bool
	// slot is the next turn to give (sequential) or the next round
	// (simultaneous), from 0.
	slot int
	// question is a branch's question, and owner the branch.
	question *Question
	owner    *Branch
	// failed: a branch whose turn failed stops there.
	failed bool
}

func (d *debate) total() int {
	if d.simult {
		return d.rounds
	}
	return d.rounds * len(d.debaters)
}

func (d *debate) done() bool { return d.failed || d.slot >= d.total() }

// prefix is the label prefix of the debate's calls.
func (d *debate) prefix() string {
	if d.branch == 0 {
		return "debate/main"
	}
	return fmt.Sprintf("debate/branch/%d", d.branch)
}

// where names the debate in progress lines and missing parts.
func (d *debate) where() string {
	if d.branch == 0 {
		return "the main debate"
	}
	return fmt.Sprintf("branch %d", d.branch)
}

// pending is a turn asked for in a step.
type pending struct {
	n, round int
	d        *persona.Persona
}

// next returns the tasks of the debate's next step, with the turns they
// will be.
func (d *debate) next(c *composer) ([]*engine.Task, []pending) {
	var due []pending
	if d.simult {
		for i, db := range d.debaters {
			due = append(due, pending{n: d.slot*len(d.debaters) + i + 1, round: d.slot + 1, d: db})
		}
	} else {
		due = append(due, pending{n: d.slot + 1, round: d.slot/len(d.debaters) + 1, d: d.debaters[d.slot%len(d.debaters)]})
	}
	before := d.phase.Turns
	tasks := make([]*engine.Task, len(due))
	for i, t := range due {
		label := fmt.Sprintf("%s/turn/%02d", d.prefix(), t.n)
		var req *llm.Request
		if d.question == nil {
			req = c.turnRequest(label, t.d, t.n, t.round, before)
		} else {
			req = c.branchTurnRequest(label, t.d, d.question, t.n, t.round, before)
		}
		group := t.d.ID
		if d.branch > 0 {
			group = fmt.Sprintf("branch %d", d.branch)
		}
		tasks[i] = &engine.Task{ID: label, Group: group, Request: req}
	}
	return tasks, due
}

// take records the results of the tasks next gave: each turn that came
// back joins the transcript and sends its summary along with the next
// step. In the main debate a failed turn is recorded as missing and the
// debate goes on without it; a branch stops at its first failed turn.
func (d *debate) take(pr *protocol, due []pending, results []engine.Result) {
	d.slot++
	for i, r := range results {
		t := due[i]
		err := r.Err
		if err == nil && strings.TrimSpace(r.Resp.Text) == "" {
			err = errors.New("the model gave an empty turn")
		}
		if err != nil {
			pr.missing(d.where(), fmt.Sprintf("turn %d (%s, round %d) of %s", t.n, t.d.DisplayName(), t.round, d.where()), err)
			if d.owner != nil {
				d.failed = true
				d.owner.Failed = fmt.Sprintf("debate (turn %d)", t.n)
			}
			continue
		}
		text := strings.TrimSpace(r.Resp.Text)
		turn := &Turn{N: t.n, Round: t.round, Debater: t.d.ID, Name: t.d.DisplayName(), Text: text, Step: pr.stepNo()}
		d.phase.Turns = append(d.phase.Turns, turn)
		label := r.Task.Request.Label + "/summary"
		pr.ride(&engine.Task{ID: label, Group: "summaries", Request: pr.c.turnSummaryRequest(label, turn)}, func(sr engine.Result) {
			if sr.Err != nil {
				pr.missing("summary", fmt.Sprintf("the summary of turn %d of %s", turn.N, d.where()), sr.Err)
				return
			}
			turn.Summary = cleanSummary(sr.Resp.Text)
		})
	}
	if d.done() && !d.failed && len(d.phase.Turns) > 0 {
		label := d.prefix() + "/summary"
		pr.ride(&engine.Task{ID: label, Group: "summaries", Request: pr.c.phaseSummaryRequest(label, d.title, d.phase.Turns)}, func(sr engine.Result) {
			if sr.Err != nil {
				pr.missing("summary", "the phase summary of "+d.where(), sr.Err)
				return
			}
			d.phase.Summary = cleanPhase(sr.Resp.Text)
		})
	}
}

// cleanPhase holds a phase summary to three sentences.
func cleanPhase(s string) string {
	sent := lexical.Sentences(strings.Join(strings.Fields(s), " "))
	if len(sent) > 3 {
		sent = sent[:3]
	}
	return strings.Join(sent, " ")
}

// mainDebate runs the main debate, one step a turn (or a round).
func (pr *protocol) mainDebate(ctx context.Context, d *debate) error {
	for !d.done() && pr.stopped == nil {
		tasks, due := d.next(pr.c)
		what := fmt.Sprintf("main debate, turn %d of %d (%s)", due[0].n, d.total(), due[0].d.DisplayName())
		if d.simult {
			what = fmt.Sprintf("main debate, round %d of %d", due[0].round, d.rounds)
		}
		results := pr.step(ctx, what, tasks)
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.slot == 0 {
			// Every call of the first step failed on a key or the
			// provider's configuration: the run could not start.
			if err := engine.SetupFailure(results); err != nil {
				return err
			}
		}
		d.take(pr, due, results)
	}
	return nil
}
