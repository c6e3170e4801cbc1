package ask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
)

// Tension is where the perspectives' answers pull apart, as the debate
// step names it.
type Tension struct {
	ID    string `json:"id"` // T1, T2, ...
	Topic string `json:"topic"`
	Sides []Side `json:"sides"`
	// Treatment and How are the answer's: addressed or open, and how.
	Treatment string `json:"treatment,omitempty"`
	How       string `json:"how,omitempty"`
}

// Side is one position on a tension and the answers that hold it.
type Side struct {
	Position string   `json:"position"`
	Answers  []string `json:"answers"`
}

// Debate is the outcome of the debate step.
type Debate struct {
	Tensions        []Tension    `json:"tensions"`
	UniqueRisks     []UniqueRisk `json:"unique_risks"`
	Assumptions     []Assumption `json:"assumptions"`
	Recommendations []string     `json:"recommendations"`
}

// UniqueRisk is a risk only one answer raises.
type UniqueRisk struct {
	Risk   string `json:"risk"`
	Answer string `json:"answer"`
}

// Assumption is an assumption some answers make and others do not.
type Assumption struct {
	Assumption string   `json:"assumption"`
	Answers    []string `json:"answers"`
}

// Missing is a part of the answer that could not be made: a reading whose
// call failed, or a step that did not run.
type Missing struct {
	Step  string `json:"step"` // map, debate or reduce
	What  string `json:"what"` // the answer id, or the step
	Error string `json:"error"`
	// Budget: the part was not run because a budget was reached.
	Budget bool `json:"budget,omitempty"`
	err    error
}

// protocol runs map-debate-reduce over readings through an Executor. It
// starts no goroutine, reads no clock and asks nobody: every call goes
// through x.
type protocol struct {
	x        engine.Executor
	model    string
	nonce    string
	question string
	// seed orders the answers the debate step reads, so that a position
	// bias of the model is the same on every run of the question.
	seed int64
}

// mapStep reads every source at once and returns the evidence in the
// order of the readings, with the readings whose call failed.
func (pr *protocol) mapStep(ctx context.Context, readings []Reading) ([]Evidence, []Missing) {
	tasks := make([]*engine.Task, len(readings))
	for i, r := range readings {
		group := "plain"
		if r.Role != nil {
			group = r.Role.ID
		}
		tasks[i] = &engine.Task{ID: r.ID, Group: group, Request: composeMap(r, pr.question, pr.nonce, pr.model)}
	}
	var evidence []Evidence
	var missing []Missing
	for i, res := range pr.x.Execute(ctx, tasks) {
		r := readings[i]
		if res.Err != nil {
			missing = append(missing, Missing{Step: "map", What: fmt.Sprintf("%s (%s)", r.ID, r.Title), Error: llm.Redact(res.Err.Error()), Budget: errors.Is(res.Err, llm.ErrBudget), err: res.Err})
			continue
		}
		var a mapAnswer
		if err := json.Unmarshal(res.Resp.JSON, &a); err != nil {
			missing = append(missing, Missing{Step: "map", What: fmt.Sprintf("%s (%s)", r.ID, r.Title), Error: "unreadable answer: " + err.Error()})
			continue
		}
		e := Evidence{ID: r.ID, Source: r.Source, Members: r.Members, Title: r.Title, Text: r.Text, Summary: strings.TrimSpace(a.Summary), Addresses: a.Addresses}
		if r.Role != nil {
			e.Role, e.Weight = r.Role.ID, r.Role.Meta.Weight
		}
		var text string // r.Text squashed once, for every point's quote
		for _, p := range a.Points {
			if strings.TrimSpace(p.Point) == "" {
				continue
			}
			if text == "" {
				text = squash(r.Text)
			}
			e.Points = append(e.Points, Point{Point: strings.TrimSpace(p.Point), Quote: strings.TrimSpace(p.Quote), QuoteFound: quoteInSquashed(p.Quote, text)})
		}
		evidence = append(evidence, e)
	}
	return evidence, missing
}

// debateStep names the tensions between the answers, in one call.
func (pr *protocol) debateStep(ctx context.Context, evidence []Evidence) (*Debate, error) {
	shown := slices.Clone(evidence)
	engine.Shuffle(pr.seed, shown)
	res := pr.x.Execute(ctx, []*engine.Task{{ID: "ask/debate", Group: "debate", Support: true,
		Request: composeDebate(pr.question, shown, pr.nonce, pr.model)}})[0]
	if res.Err != nil {
		return nil, res.Err
	}
	var a debateAnswer
	if err := json.Unmarshal(res.Resp.JSON, &a); err != nil {
		return nil, fmt.Errorf("unreadable debate: %w", err)
	}
	known := map[string]bool{}
	for _, e := range evidence {
		known[e.ID] = true
	}
	ids := func(in []string) []string {
		var out []string
		for _, id := range in {
			if id = strings.ToUpper(strings.TrimSpace(id)); known[id] {
				out = append(out, id)
			}
		}
		return out
	}
	d := &Debate{Recommendations: a.Recommendations}
	for _, t := range a.Tensions {
		tn := Tension{ID: fmt.Sprintf("T%d", len(d.Tensions)+1), Topic: strings.TrimSpace(t.Topic)}
		for _, s := range t.Sides {
			if as := ids(s.Answers); len(as) > 0 {
				tn.Sides = append(tn.Sides, Side{Position: strings.TrimSpace(s.Position), Answers: as})
			}
		}
		// A tension needs two sides held by answers that exist.
		if len(tn.Sides) >= 2 {
			d.Tensions = append(d.Tensions, tn)
		}
	}
	for _, r := range a.UniqueRisks {
		if as := ids([]string{r.Answer}); len(as) == 1 {
			d.UniqueRisks = append(d.UniqueRisks, UniqueRisk{Risk: strings.TrimSpace(r.Risk), Answer: as[0]})
		}
	}
	for _, as := range a.Assumptions {
		if ids := ids(as.Answers); len(ids) > 0 {
			d.Assumptions = append(d.Assumptions, Assumption{Assumption: strings.TrimSpace(as.Assumption), Answers: ids})
		}
	}
	return d, nil
}

// reduceStep writes the answer and holds it to its sources: what fails the
// check is sent back once with the reasons, and what fails again is
// dropped and recorded.
func (pr *protocol) reduceStep(ctx context.Context, evidence []Evidence, d *Debate) (reduceAnswer, Verdict, error) {
	var tensions []Tension
	var recs, ids []string
	if d != nil {
		tensions, recs = d.Tensions, d.Recommendations
		for _, t := range tensions {
			ids = append(ids, t.ID)
		}
	}
	var problems []string
	for attempt := 1; ; attempt++ {
		req := composeReduce(pr.question, evidence, tensions, recs, problems, pr.nonce, pr.model)
		res := pr.x.Execute(ctx, []*engine.Task{{ID: req.Label, Group: "reduce", Support: true, Request: req}})[0]
		if res.Err != nil {
			return reduceAnswer{}, Verdict{}, res.Err
		}
		var a reduceAnswer
		if err := json.Unmarshal(res.Resp.JSON, &a); err != nil {
			return reduceAnswer{}, Verdict{}, fmt.Errorf("unreadable answer: %w", err)
		}
		v := Check(a, evidence, ids)
		if v.Clean() || attempt == 2 {
			return a, v, nil
		}
		problems = v.Problems()
	}
}
