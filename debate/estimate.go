package debate

import (
	"cmp"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm"
)

// Estimate is what a plan is expected to cost, and the most it can cost.
type Estimate struct {
	// Calls is the most model calls the plan makes (Plan.Calls) and Steps
	// the most Executes (Plan.Steps), the critical path.
	Calls int `json:"calls"`
	Steps int `json:"steps"`
	// Typical assumes answers of a typical length (OutputTokens in all);
	// Bound assumes every answer as long as its call allows and every
	// structured answer asked for twice, with no prompt cache: no run of
	// the plan sends more (counted with sot's tokenizer).
	Typical       engine.Estimate `json:"typical"`
	TypicalOutput int             `json:"typical_output_tokens"`
	Bound         engine.Estimate `json:"bound"`
	BoundOutput   int             `json:"bound_output_tokens"`
}

// embedded is model text a call's prompt carries (an earlier turn, a
// question): its typical and its largest size in tokens.
type embedded struct{ typical, max int }

// planned is one call the plan may make.
type planned struct {
	base       int // tokens of the prompt without what it embeds
	embeds     []embedded
	outTypical int
	outMax     int
	structured bool
	shared     int // tokens of the shared prefix (the passage)
	// prefix names the shared prefix ("": the passage's).
	prefix string
	// extraMax is how many more tokens the prompt may hold at most than
	// base says (the argument graph's context: see graphContextMax).
	extraMax int
	// times is how many such calls there are; extra how many more the
	// worst case makes (regenerations).
	times, extra int
}

// embedOverhead is the most tokens quoting a text adds: a heading, and a
// "> " before each line, at worst one line a token.
func embedMax(n int) int { return 2*n + 16 }

// Estimate counts the tokens of the plan's calls and prices them. It loads
// the tokenizer; no model is called.
func (p *Plan) Estimate(prices llm.PriceTable) Estimate {
	var typ, bound []engine.Planned
	outTyp, outMax := 0, 0
	for _, c := range p.planned() {
		in, inMax := c.base, c.base+c.extraMax
		for _, e := range c.embeds {
			in += e.typical + 8
			inMax += embedMax(e.max)
		}
		for i := range c.times + c.extra {
			if i < c.times {
				typ = append(typ, engine.Planned{Model: p.Model, InputTokens: in, PrefixTokens: c.shared, Prefix: cmp.Or(c.prefix, "passage")})
				outTyp += c.outTypical
			}
			bound = append(bound, engine.Planned{Model: p.Model, InputTokens: inMax})
			outMax += c.outMax
			if c.structured {
				// The schema check asks once more with the first answer and
				// what was wrong with it.
				bound = append(bound, engine.Planned{Model: p.Model, InputTokens: inMax + embedMax(c.outMax) + 200})
				outMax += c.outMax
			}
		}
	}
	e := Estimate{Calls: p.Calls(), Steps: p.Steps(), TypicalOutput: outTyp, BoundOutput: outMax}
	// Cost is linear in output tokens and every call has the same model, so
	// pricing each call at the mean output is exact.
	e.Typical = engine.Estimates(typ, prices, outTyp/max(1, len(typ)))
	e.Typical.Cost += remainderCost(prices, p.Model, outTyp%max(1, len(typ)))
	e.Bound = engine.Estimates(bound, prices, outMax/max(1, len(bound)))
	e.Bound.Cost += remainderCost(prices, p.Model, outMax%max(1, len(bound)))
	return e
}

// remainderCost prices output tokens that the mean per call rounded away.
func remainderCost(prices llm.PriceTable, model string, out int) float64 {
	price, _ := prices.Lookup(model)
	return price.Cost(llm.Usage{OutputTokens: out})
}

// turnEmbedded is a turn's size, typical and largest, at the plan's turn
// length.
func (p *Plan) turnEmbedded() embedded {
	w := p.turnWords()
	return embedded{turnTypicalTokens(w), turnMaxTokens(w)}
}

// count is the tokens of a request as sent.
func count(r *llm.Request) int {
	n := tokens.Count(r.System)
	for _, m := range r.Messages {
		n += tokens.Count(m.Content)
	}
	return n
}

// planned lists the plan's calls with the texts their prompts embed.
func (p *Plan) planned() []planned {
	c := newComposer(p)
	shared := tokens.Count(c.passage)
	if p.noPrefix {
		shared = 0 // no prompt cache to read it from
	}
	var out []planned
	// A turn's shared prefix is the passage and what the argument graph
	// gives the debaters.
	graphMax, turnShared, turnPrefix := p.graphContextMax(c), shared, ""
	if c.graph != "" && shared > 0 {
		turnShared, turnPrefix = tokens.Count(c.passage+c.graph), "passage and graph"
	}
	turn := p.turnEmbedded()
	// fence is what fencing the embedded texts adds to a prompt whose base
	// was counted with none (the fence statement and its markers).
	fence := tokens.Count(c.fenced(turnsData, ""))
	nd := len(p.Debaters)
	turns := func(n int) []embedded {
		e := make([]embedded, n)
		for i := range e {
			e[i] = turn
		}
		return e
	}
	// The main debate: each turn embeds the turns before it.
	for slot := range nd * p.Rounds {
		d := p.Debaters[slot%nd]
		before := slot
		if p.Turns == Simultaneous {
			before = slot / nd * nd
		}
		base := count(c.turnRequest("", d, slot+1, slot/nd+1, nil))
		if before > 0 {
			base += fence
		}
		out = append(out, planned{base: base, embeds: turns(before),
			outTypical: turn.typical, outMax: turn.max, shared: turnShared, prefix: turnPrefix, times: 1, extraMax: graphMax})
	}
	// Each turn's summary, and the phase summary.
	out = append(out, planned{base: count(c.turnSummaryRequest("", &Turn{Name: p.Debaters[0].DisplayName()})), embeds: turns(1),
		outTypical: typicalSummaryTokens, outMax: maxSummaryTokens, times: nd * p.Rounds})
	out = append(out, planned{base: count(c.phaseSummaryRequest("", "The main debate", nil)), embeds: turns(nd * p.Rounds),
		outTypical: typicalPhaseTokens, outMax: maxPhaseTokens, times: 1})

	// The observers generated, each seeing every earlier one, and the
	// attempts discarded for it.
	observer := embedded{typicalObserverTokens, maxObserverTokens}
	for k := range p.ObserverSpec.Generate {
		e := make([]embedded, k+p.Settings.Regenerations)
		for i := range e {
			e[i] = observer
		}
		base := count(c.generateRequest("", nil, nil, 0))
		if len(e) > 0 {
			base += fence
		}
		out = append(out, planned{base: base, embeds: e,
			outTypical: typicalObserverTokens, outMax: maxObserverTokens, structured: true, shared: shared, times: 1, extra: p.Settings.Regenerations})
	}
	// The observers' questions, each reading the main debate.
	b := p.Branches()
	var ob *Observer
	if len(p.Observers) > 0 {
		ob = p.Observers[0]
	} else if p.ObserverSpec.Generate > 0 {
		ob = &Observer{Origin: "generated"}
	}
	for i := range b {
		if len(p.Observers) > i {
			ob = p.Observers[i]
		}
		q := planned{base: count(c.questionRequest("", ob, nil)), embeds: turns(nd * p.Rounds),
			outTypical: typicalQuestionTokens, outMax: maxQuestionTokens, structured: true, shared: shared, times: 1}
		if p.ObserverSpec.Generate > 0 {
			q.embeds = append(q.embeds, embedded{typicalObserverTokens, maxObserverTokens})
		}
		out = append(out, q)
	}
	// Each branch: its turns (each embedding the question, the observer's
	// summary of the main debate and the branch's earlier turns), their
	// summaries, its phase summary, synthesis and merge-back.
	question := embedded{typicalQuestionTokens, maxQuestionTokens}
	q := &Question{}
	for slot := range nd * p.BranchRounds {
		d := p.Debaters[slot%nd]
		before := slot
		if p.Turns == Simultaneous {
			before = slot / nd * nd
		}
		out = append(out, planned{base: count(c.branchTurnRequest("", d, q, slot+1, slot/nd+1, nil)), embeds: append(turns(before), question),
			outTypical: turn.typical, outMax: turn.max, shared: turnShared, prefix: turnPrefix, times: b, extraMax: graphMax})
	}
	out = append(out, planned{base: count(c.turnSummaryRequest("", &Turn{Name: p.Debaters[0].DisplayName()})), embeds: turns(1),
		outTypical: typicalSummaryTokens, outMax: maxSummaryTokens, times: b * nd * p.BranchRounds})
	out = append(out, planned{base: count(c.phaseSummaryRequest("", "Branch debate on: ", nil)), embeds: append(turns(nd*p.BranchRounds), question),
		outTypical: typicalPhaseTokens, outMax: maxPhaseTokens, times: b})
	out = append(out, planned{base: count(c.synthesisRequest("", q, nil)), embeds: append(turns(nd*p.BranchRounds), question),
		outTypical: typicalSynthTokens, outMax: maxSynthTokens, structured: true, shared: shared, times: b})
	synthesis := embedded{typicalSynthTokens, maxSynthTokens}
	out = append(out, planned{base: count(c.mergeRequest("", nil, q, &Synthesis{})), embeds: append(turns(nd*p.Rounds), question, synthesis),
		outTypical: typicalMergeTokens, outMax: maxMergeTokens, shared: shared, times: b})
	if b > 1 {
		var merged []embedded
		for range b {
			merged = append(merged, question, embedded{typicalMergeTokens, maxMergeTokens})
		}
		out = append(out, planned{base: count(c.finalRequest("", nil)), embeds: merged,
			outTypical: typicalFinalTokens, outMax: maxFinalTokens, shared: shared, times: 1})
	}
	return append(out, p.graphPlanned()...)
}
