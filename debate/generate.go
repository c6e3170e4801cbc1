package debate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/prompt"
)

// observerSchema is a generated observer, as seed 003's generation loop
// asks for it. The conviction comes first and the name that sums it up
// after it: a model commits to what it writes first, and the bias is the
// design, the name its label.
var observerSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "bias": {"type": "string", "pattern": "\\S", "description": "One or two sentences: the conviction the observer reads through."},
    "focus": {"type": "string", "pattern": "\\S", "description": "The specific things in a text the observer attends to."},
    "blind_spots": {"type": "array", "items": {"type": "string", "pattern": "\\S"}, "minItems": 3, "maxItems": 3, "description": "Exactly three things the observer systematically misses."},
    "name": {"type": "string", "pattern": "\\S", "description": "A short title for the observer that sums up its bias, such as \"The Cartographer of Silences\"."},
    "example_questions": {"type": "array", "items": {"type": "string", "pattern": "\\S"}, "minItems": 2, "maxItems": 3, "description": "Good branch questions this observer would ask about a debate over this passage, each specific to it; a question that names a debater names one of this debate's."},
    "anti_examples": {"type": "array", "items": {"type": "string", "pattern": "\\S"}, "minItems": 2, "maxItems": 2, "description": "Generic questions this observer must never ask, because any observer could ask them of any text."}
  },
  "required": ["bias", "focus", "blind_spots", "name", "example_questions", "anti_examples"],
  "additionalProperties": false
}`)

const observerSchemaName = "debate_observer"

type observerAnswer struct {
	Bias             string   `json:"bias"`
	Focus            string   `json:"focus"`
	BlindSpots       []string `json:"blind_spots"`
	Name             string   `json:"name"`
	ExampleQuestions []string `json:"example_questions"`
	AntiExamples     []string `json:"anti_examples"`
}

const generateTask = `# Your task

You design an observer for a dialectical debate over the passage above. Debaters with fixed stances will argue about what the passage means; an observer then reads their transcript and, from one strong bias, names the question they failed to ask. An observer is useful when its bias is specific and its blind spots are honest: it sees what a general reader passes over, and it admits what it will miss.

Answer with one JSON object with these fields, in this order:
- bias: one or two sentences on the conviction it reads through;
- focus: the specific things in a text it attends to;
- blind_spots: exactly three things it systematically misses;
- name: a short title for the observer that sums up its bias;
- example_questions: two or three branch questions it would ask about a debate over this passage, each specific to this passage; where one names a debater, it names one of the debaters listed below, by that name;
- anti_examples: two generic questions it must never ask, because any observer could ask them of any text.`

// debatersSection names the run's debaters and their stances for the
// observer's designer, so that an example question that names a debater
// names one of this debate's.
func (c *composer) debatersSection() string {
	if len(c.debaters) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n# The debaters\n\n")
	for _, d := range c.debaters {
		fmt.Fprintf(&b, "- %s", prompt.Inline(d.DisplayName()))
		if st := strings.TrimSpace(d.Meta.Stance); st != "" {
			fmt.Fprintf(&b, ": %s", prompt.Inline(st))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// observerBlock lists observers for a later prompt, each as a numbered
// item; a model wrote them, so the prompt fences them.
func observerBlock(obs []*Observer) string {
	var b strings.Builder
	for i, o := range obs {
		fmt.Fprintf(&b, "%d. %s\n   Bias: %s\n   Focus: %s\n   Blind spots: %s\n", i+1, oneLine(o.Name), oneLine(o.Bias), oneLine(o.Focus), strings.Join(lines(o.BlindSpots), "; "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// generateRequest asks for the next observer: the first freely, each next
// one as different as possible from every observer before it. tooClose,
// on a regeneration, are the attempts discarded for this observer.
func (c *composer) generateRequest(label string, before []*Observer, tooClose []Attempt, floor float64) *llm.Request {
	var u strings.Builder
	if len(before) == 0 && len(tooClose) == 0 {
		u.WriteString("Design the first observer for this passage. Choose freely the angle that would find the most in it.")
	} else {
		var d strings.Builder
		d.WriteString(observerBlock(before))
		what := observersData
		if len(tooClose) > 0 {
			what = attemptsData
			d.WriteString("\n\n# Attempts already discarded\n\n")
			for _, a := range tooClose {
				fmt.Fprintf(&d, "- %s (bias: %s; focus: %s) was %.2f from %s\n", oneLine(a.Name), oneLine(a.Bias), oneLine(a.Focus), a.Distance, oneLine(a.CloseTo))
			}
		}
		u.WriteString("# Observers already designed\n\n" + c.fenced(what, strings.TrimRight(d.String(), "\n")))
		u.WriteString("\n\nDesign one more observer that is as different as possible from every observer above: a different conviction, a different focus and a different vocabulary. Do not reuse their key terms.")
		if len(tooClose) > 0 {
			fmt.Fprintf(&u, "\n\nThe attempts listed as discarded came out too close to an earlier observer, judged by the words their bias and focus share (a distance below %.2f is too close). Change the conviction itself, not only its wording.", floor)
		}
	}
	return c.request(label, generateTask+c.debatersSection(), u.String(), c.temps.Generation, maxObserverTokens, &llm.Schema{Name: observerSchemaName, JSON: observerSchema})
}

// chain generates observers one after another, each seeing every earlier
// one, so each link is a step of its own; a link rides in whatever step is
// due (a turn of the main debate) instead of taking one of its own.
type chain struct {
	want  int
	floor float64 // Settings.MinObserverDistance
	regen int     // Settings.Regenerations
	obs   []*Observer
	// tries are the attempts at the observer being generated that came out
	// too close to an earlier one.
	tries   []try
	pending bool
	stopped bool
}

type try struct {
	ob  *Observer
	att Attempt
}

func (ch *chain) done() bool { return ch.stopped || len(ch.obs) >= ch.want }

// ready reports whether the next link can go now.
func (ch *chain) ready() bool { return !ch.done() && !ch.pending }

// links is the most links the chain can take.
func (ch *chain) links() int { return ch.want * (1 + ch.regen) }

// next is the next link's task.
func (ch *chain) next(c *composer) *engine.Task {
	ch.pending = true
	label := fmt.Sprintf("debate/observer/%d", len(ch.obs)+1)
	if n := len(ch.tries); n > 0 {
		label += fmt.Sprintf("/again/%d", n)
	}
	var tooClose []Attempt
	for _, t := range ch.tries {
		tooClose = append(tooClose, t.att)
	}
	return &engine.Task{ID: label, Group: "observers", Support: true, Request: c.generateRequest(label, ch.obs, tooClose, ch.floor)}
}

// take records a link's result: an observer far enough from every earlier
// one is kept; one too close is generated again, up to the bound, after
// which the most distant attempt is kept and a note says so.
func (ch *chain) take(pr *protocol, r engine.Result) {
	ch.pending = false
	k := len(ch.obs) + 1
	var a observerAnswer
	err := r.Err
	if err == nil {
		if err = decode(r.Resp, &a); err != nil {
			err = fmt.Errorf("unreadable answer: %w", err)
		}
	}
	if err != nil {
		pr.missing("observers", fmt.Sprintf("generated observer %d of %d", k, ch.want), err)
		ch.stopped = true
		return
	}
	ob := &Observer{ID: slug(a.Name), Name: oneLine(a.Name), Bias: oneLine(a.Bias), Focus: oneLine(a.Focus), BlindSpots: lines(a.BlindSpots),
		ExampleQuestions: lines(a.ExampleQuestions), AntiExamples: lines(a.AntiExamples), Origin: "generated"}
	closest, dist := nearest(ob, ch.obs)
	if closest == nil || dist >= ch.floor {
		ch.keep(ob, -1)
		return
	}
	ch.tries = append(ch.tries, try{ob, Attempt{Name: ob.Name, Bias: ob.Bias, Focus: ob.Focus, CloseTo: closest.Name, Distance: round3(dist)}})
	if len(ch.tries) <= ch.regen {
		pr.hooks.Warnf("generated observer %d, %s, is too close to %s (distance %.2f, below %.2f); generating it again", k, ob.Name, closest.Name, dist, ch.floor)
		return
	}
	// Out of attempts: keep the most distant one, and say so.
	best := 0
	for i, t := range ch.tries {
		if t.att.Distance > ch.tries[best].att.Distance {
			best = i
		}
	}
	kept := ch.tries[best]
	pr.res.Notes = append(pr.res.Notes, fmt.Sprintf("generated observer %d stayed too close to an earlier one after %d regeneration(s); the most distant attempt, %s (distance %.2f from %s), was kept",
		k, ch.regen, kept.ob.Name, kept.att.Distance, kept.att.CloseTo))
	ch.keep(kept.ob, best)
}

// keep adds ob to the ensemble, with the attempts but the one at skip as
// its rejected attempts.
func (ch *chain) keep(ob *Observer, skip int) {
	for i, t := range ch.tries {
		if i != skip {
			ob.Rejected = append(ob.Rejected, t.att)
		}
	}
	ch.obs = append(ch.obs, ob)
	uniqueIDs(ch.obs)
	ch.tries = nil
}

// nearest is the observer of obs closest to ob by content words, with its
// distance; nil when obs is empty.
func nearest(ob *Observer, obs []*Observer) (*Observer, float64) {
	var at *Observer
	best := 2.0
	for _, o := range obs {
		if d := ContentDistance(ob, o); d < best {
			at, best = o, d
		}
	}
	return at, best
}
