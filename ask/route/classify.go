package route

import (
	"fmt"
	"strings"
	"unicode"
)

// Intent is what a question asks for.
type Intent string

// The five intents, from northstar's query classifier.
const (
	// IntentFactual asks for a fact or a decision: "What was decided about X?"
	// It is the default when no other rule fires.
	IntentFactual Intent = "factual"
	// IntentComparative asks how things differ: "How does X differ from Y?"
	IntentComparative Intent = "comparative"
	// IntentAggregative asks for everything of a kind: "What are all the action items?"
	IntentAggregative Intent = "aggregative"
	// IntentAnalytical asks for patterns: "What patterns emerge across meetings?"
	IntentAnalytical Intent = "analytical"
	// IntentTemporal asks how something developed: "How has X evolved over time?"
	IntentTemporal Intent = "temporal"
)

// Intents lists every intent, in the order ParseIntent's error names them.
var Intents = []Intent{IntentFactual, IntentComparative, IntentAggregative, IntentAnalytical, IntentTemporal}

// Complexity is how much of the corpus a question needs.
type Complexity string

// The four complexities, from northstar's query classifier.
const (
	// ComplexitySimple needs one or two sources and a direct answer.
	ComplexitySimple Complexity = "simple"
	// ComplexityComparative needs a few sources set side by side.
	ComplexityComparative Complexity = "comparative"
	// ComplexityAggregate needs many sources whose content is gathered and synthesized.
	ComplexityAggregate Complexity = "aggregate"
	// ComplexityExploratory has an open scope: several questions in one.
	ComplexityExploratory Complexity = "exploratory"
)

// Classification is a question's intent and complexity and the rules that
// gave them.
type Classification struct {
	Intent     Intent     `json:"intent"`
	Complexity Complexity `json:"complexity"`
	// Rule is the rule that fired, to print: for example
	// `intent aggregative: "all" (aggregative words); complexity aggregate: follows the aggregative intent`.
	Rule string `json:"rule"`
	// Match is the phrase in the question that decided the intent, as it
	// appears there after lowercasing; empty when no intent rule fired or
	// the intent was set by --intent.
	Match string `json:"match,omitempty"`
	// Overridden is true when the intent came from --intent (ClassifyAs).
	Overridden bool `json:"overridden,omitempty"`
	// Summary is true when the question asks for a summary or overview.
	Summary bool `json:"summary,omitempty"`
}

// A wordRule names an intent by whole words or whole phrases of words. The
// phrases list every inflection that counts: "all" does not match inside
// "call" or "allocation", "change" does not match inside "exchange".
type wordRule struct {
	intent  Intent
	name    string
	phrases []string
}

// intentRules are tried in this order; the first that matches decides.
// northstar tried comparative, aggregative, analytical, temporal; here the
// specific intents come before the aggregative quantifiers ("all", "across",
// "every") because those quantifiers also appear in analytical and temporal
// questions. northstar's own example of an analytical question, "What
// patterns emerge across meetings?", is aggregative under its order.
var intentRules = []wordRule{
	{IntentComparative, "comparative words", []string{
		"compare", "compares", "compared", "comparing", "comparison", "comparisons",
		"differ", "differs", "differed", "differing",
		"difference", "differences", "different", "differently",
		"versus", "vs", "between",
	}},
	{IntentTemporal, "temporal words", []string{
		"over time",
		"evolution", "evolve", "evolves", "evolved", "evolving",
		"change", "changes", "changed", "changing",
		"progress", "progressed", "progresses", "progressing", "progression",
		"history",
	}},
	{IntentAnalytical, "analytical words", []string{
		"pattern", "patterns", "trend", "trends",
		"theme", "themes", "common", "commonly", "commonality", "commonalities",
		"recurring", "recur", "recurs", "recurred", "recurrent",
		"emerge", "emerges", "emerged", "emerging",
	}},
	{IntentAggregative, "aggregative words", []string{
		"all", "every", "everyone", "everybody", "everything",
		"total", "totals", "combined", "combine", "across", "overall",
	}},
}

// summaryPhrases make a question a summary request: a factual one becomes
// aggregative, a simple one aggregate (as in northstar).
var summaryPhrases = []string{
	"summary", "summaries", "summarize", "summarise", "summarized", "summarised",
	"overview", "highlight", "highlights",
}

// exploratoryPhrases make a question exploratory, as do two question marks.
var exploratoryPhrases = []string{"and also", "additionally", "furthermore"}

// Classify names a question's intent and complexity by whole-word rules in a
// fixed order. The intent is decided by the first of these that matches:
// comparative, temporal, analytical, aggregative words, then a summary
// request (aggregative); otherwise it is factual. The complexity follows the
// intent (comparative → comparative; aggregative, analytical, temporal →
// aggregate); for a factual question it is exploratory with two question
// marks or "and also", "additionally", "furthermore", aggregate for a
// summary request, and simple otherwise.
func Classify(question string) Classification {
	words := tokenize(question)
	c := Classification{Intent: IntentFactual, Summary: findPhrase(words, summaryPhrases) != ""}
	intentWhy := "factual: no intent rule matched (the default)"
	for _, r := range intentRules {
		if m := findPhrase(words, r.phrases); m != "" {
			c.Intent, c.Match = r.intent, m
			intentWhy = fmt.Sprintf("%s: %q (%s)", r.intent, m, r.name)
			break
		}
	}
	if c.Match == "" && c.Summary {
		m := findPhrase(words, summaryPhrases)
		c.Intent, c.Match = IntentAggregative, m
		intentWhy = fmt.Sprintf("aggregative: %q (a summary request)", m)
	}
	cx, cxWhy := complexity(c.Intent, question, words, c.Summary)
	c.Complexity = cx
	c.Rule = "intent " + intentWhy + "; complexity " + cxWhy
	return c
}

// ClassifyAs is Classify with the intent set by the user (--intent, read
// with ParseIntent). The complexity is derived from that intent and the
// question by Classify's rules, and Rule says what the rules alone would
// have chosen. An empty intent is Classify.
func ClassifyAs(question string, intent Intent) Classification {
	auto := Classify(question)
	if intent == "" {
		return auto
	}
	words := tokenize(question)
	cx, cxWhy := complexity(intent, question, words, auto.Summary)
	return Classification{
		Intent:     intent,
		Complexity: cx,
		Rule: fmt.Sprintf("intent %s: set by --intent (the rules gave %s); complexity %s",
			intent, auto.Intent, cxWhy),
		Overridden: true,
		Summary:    auto.Summary,
	}
}

// ParseIntent reads an intent name, as --intent and configuration give it;
// case and surrounding space do not matter.
func ParseIntent(s string) (Intent, error) {
	v := Intent(strings.ToLower(strings.TrimSpace(s)))
	for _, in := range Intents {
		if v == in {
			return in, nil
		}
	}
	names := make([]string, len(Intents))
	for i, in := range Intents {
		names[i] = string(in)
	}
	return "", fmt.Errorf("unknown intent %q: want one of %s", s, strings.Join(names, ", "))
}

func complexity(intent Intent, question string, words words, summary bool) (Complexity, string) {
	switch intent {
	case IntentComparative:
		return ComplexityComparative, "comparative: follows the comparative intent"
	case IntentAggregative, IntentAnalytical, IntentTemporal:
		return ComplexityAggregate, fmt.Sprintf("aggregate: follows the %s intent", intent)
	}
	if strings.Count(question, "?") >= 2 {
		return ComplexityExploratory, "exploratory: more than one question mark"
	}
	if m := findPhrase(words, exploratoryPhrases); m != "" {
		return ComplexityExploratory, fmt.Sprintf("exploratory: %q", m)
	}
	if summary {
		return ComplexityAggregate, "aggregate: a summary request"
	}
	return ComplexitySimple, "simple: no complexity rule matched (the default)"
}

// words are a text's lowercased words of letters and digits. joined[i]
// says that word i follows word i-1 across nothing but white space, so
// that a phrase of several words matches "over time" but not "over? Time".
type words struct {
	list   []string
	joined []bool
}

// tokenize lowercases s and splits it into words of letters and digits;
// everything else separates words, so "vs." is "vs" and "call?" is "call".
func tokenize(s string) words {
	var w words
	var cur []rune
	onlySpace := false
	flush := func() {
		if len(cur) > 0 {
			w.joined = append(w.joined, onlySpace && len(w.list) > 0)
			w.list = append(w.list, string(cur))
			cur = cur[:0]
			onlySpace = true
		}
	}
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			cur = append(cur, r)
			continue
		}
		flush()
		if !unicode.IsSpace(r) {
			onlySpace = false
		}
	}
	flush()
	return w
}

// findPhrase returns the phrase that occurs earliest among words (the
// longest one when several start at the same word), or "" when none occurs.
// A phrase matches whole words only, and its words must follow each other
// across white space alone.
func findPhrase(w words, phrases []string) string {
	best, bestAt := "", len(w.list)
	for _, p := range phrases {
		pw := strings.Fields(p)
		if len(pw) == 0 {
			continue
		}
		for i := 0; i+len(pw) <= len(w.list) && i <= bestAt; i++ {
			if !w.equalAt(i, pw) {
				continue
			}
			if i < bestAt || len(p) > len(best) {
				best, bestAt = p, i
			}
			break
		}
	}
	return best
}

func (w words) equalAt(i int, pw []string) bool {
	for j, p := range pw {
		if w.list[i+j] != p || (j > 0 && !w.joined[i+j]) {
			return false
		}
	}
	return true
}
