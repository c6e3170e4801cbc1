package route

import (
	"strings"
	"testing"
)

func TestClassifyIntent(t *testing.T) {
	tests := []struct {
		q     string
		want  Intent
		match string
	}{
		// factual: the default, including words that only contain an
		// intent word.
		{"What was decided about the pricing model?", IntentFactual, ""},
		{"Who owns the migration?", IntentFactual, ""},
		{"What did the customer say in the call?", IntentFactual, ""},        // "all" inside "call"
		{"Who is responsible for the budget allocation?", IntentFactual, ""}, // "all" inside "allocation"
		{"Was the rollout finally approved?", IntentFactual, ""},             // "all" inside "finally"
		{"What is the exchange rate we assumed?", IntentFactual, ""},         // "change" inside "exchange"
		{"What did the auditors recommend?", IntentFactual, ""},              // "common" inside "recommend"
		{"Who handled the emergency?", IntentFactual, ""},                    // "emerge" inside "emergency"
		{"Was the vendor totally unresponsive?", IntentFactual, ""},          // "total" inside "totally"
		{"Which CVS report did legal cite?", IntentFactual, ""},              // "vs" inside "cvs"
		{"Is the prehistoric schema still used?", IntentFactual, ""},         // "history" is not "prehistoric"

		// comparative
		{"How does the Q1 plan differ from the Q3 plan?", IntentComparative, "differ"},
		{"Compare the vendor proposals.", IntentComparative, "compare"},
		{"Build vs. buy: what did each team argue?", IntentComparative, "vs"},
		{"What is the difference between the two pilots?", IntentComparative, "difference"},
		{"Option A versus option B?", IntentComparative, "versus"},
		{"How did every team's estimate compare?", IntentComparative, "compare"}, // comparative before aggregative

		// aggregative
		{"What are all the action items?", IntentAggregative, "all"},
		{"List every decision made in March.", IntentAggregative, "every"},
		{"What is the total spend across vendors?", IntentAggregative, "total"},
		{"What did everyone agree to?", IntentAggregative, "everyone"},
		{"What is the overall sentiment?", IntentAggregative, "overall"},
		{"Give me a summary of the launch meetings.", IntentAggregative, "summary"}, // summary request
		{"Summarise the Q2 reviews", IntentAggregative, "summarise"},

		// analytical
		{"What patterns emerge across meetings?", IntentAnalytical, "patterns"}, // northstar's own example
		{"Which themes recur in the retrospectives?", IntentAnalytical, "themes"},
		{"What are the common objections?", IntentAnalytical, "common"},
		{"Are there recurring blockers in all the standups?", IntentAnalytical, "recurring"},
		{"What trend do the support tickets show?", IntentAnalytical, "trend"},

		// temporal
		{"How has the pricing decision evolved over time?", IntentTemporal, "evolved"},
		{"How did the roadmap change after the reorg?", IntentTemporal, "change"},
		{"What is the history of the SSO project?", IntentTemporal, "history"},
		{"How has progress on hiring gone?", IntentTemporal, "progress"},
		{"How did the scope of the pilot shift over time?", IntentTemporal, "over time"},
		{"What changed across all quarters?", IntentTemporal, "changed"}, // temporal before aggregative
	}
	for _, tt := range tests {
		c := Classify(tt.q)
		if c.Intent != tt.want || c.Match != tt.match {
			t.Errorf("Classify(%q) = %s by %q (%s), want %s by %q", tt.q, c.Intent, c.Match, c.Rule, tt.want, tt.match)
		}
		if c.Rule == "" || !strings.Contains(c.Rule, "intent "+string(tt.want)) {
			t.Errorf("Classify(%q).Rule = %q, want it to name intent %s", tt.q, c.Rule, tt.want)
		}
		if tt.match != "" && !strings.Contains(c.Rule, `"`+tt.match+`"`) {
			t.Errorf("Classify(%q).Rule = %q, want it to quote %q", tt.q, c.Rule, tt.match)
		}
	}
}

func TestClassifyComplexity(t *testing.T) {
	tests := []struct {
		q    string
		want Complexity
	}{
		{"What was decided about pricing?", ComplexitySimple},
		{"What did she say in the call?", ComplexitySimple},
		{"How does A differ from B?", ComplexityComparative},
		{"What are all the risks?", ComplexityAggregate},
		{"What themes keep coming up?", ComplexityAggregate},
		{"How has the plan evolved over time?", ComplexityAggregate},
		{"Give me an overview of the launch.", ComplexityAggregate},
		{"Who owns billing? And who owns search?", ComplexityExploratory},
		{"Who owns billing, and also who signed off?", ComplexityExploratory},
		{"Additionally, was the contract renewed?", ComplexityExploratory},
		{"Who decided this? Furthermore, why?", ComplexityExploratory},
		{"Who was at the standup, and who was also on leave?", ComplexitySimple}, // "and ... also" is not "and also"
	}
	for _, tt := range tests {
		if c := Classify(tt.q); c.Complexity != tt.want {
			t.Errorf("Classify(%q).Complexity = %s (%s), want %s", tt.q, c.Complexity, c.Rule, tt.want)
		}
	}
}

func TestClassifyRuleText(t *testing.T) {
	c := Classify("What did the customer say in the call?")
	want := "intent factual: no intent rule matched (the default); complexity simple: no complexity rule matched (the default)"
	if c.Rule != want {
		t.Errorf("Rule = %q, want %q", c.Rule, want)
	}
	c = Classify("What are all the action items?")
	want = `intent aggregative: "all" (aggregative words); complexity aggregate: follows the aggregative intent`
	if c.Rule != want {
		t.Errorf("Rule = %q, want %q", c.Rule, want)
	}
}

func TestClassifyEarliestPhraseWins(t *testing.T) {
	// Two comparative words: the rule names the one that comes first.
	c := Classify("What is the difference when we compare them?")
	if c.Match != "difference" {
		t.Errorf("Match = %q, want difference", c.Match)
	}
	// A multi-word phrase is matched as whole words only.
	if c := Classify("Was it over? Time will tell."); c.Intent != IntentFactual {
		t.Errorf("%q: intent %s, want factual: \"over time\" must not match across \"?\"", "Was it over? Time will tell.", c.Intent)
	}
}

func TestClassifyAs(t *testing.T) {
	q := "What did the customer say in the call?"
	c := ClassifyAs(q, IntentAnalytical)
	if c.Intent != IntentAnalytical || !c.Overridden || c.Complexity != ComplexityAggregate {
		t.Fatalf("ClassifyAs = %+v", c)
	}
	if !strings.Contains(c.Rule, "--intent") || !strings.Contains(c.Rule, "the rules gave factual") {
		t.Errorf("Rule = %q", c.Rule)
	}
	// Overriding to factual keeps the question's own complexity rules.
	c = ClassifyAs("Who owns it? Who pays?", IntentFactual)
	if c.Intent != IntentFactual || c.Complexity != ComplexityExploratory {
		t.Errorf("ClassifyAs factual = %+v", c)
	}
	c = ClassifyAs("How do A and B differ?", IntentTemporal)
	if c.Intent != IntentTemporal || c.Complexity != ComplexityAggregate || c.Match != "" {
		t.Errorf("ClassifyAs temporal = %+v", c)
	}
}

func TestParseIntent(t *testing.T) {
	for _, in := range Intents {
		got, err := ParseIntent(" " + strings.ToUpper(string(in)) + " ")
		if err != nil || got != in {
			t.Errorf("ParseIntent(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "factualx", "compare"} {
		if _, err := ParseIntent(bad); err == nil {
			t.Errorf("ParseIntent(%q): no error", bad)
		} else if !strings.Contains(err.Error(), "factual, comparative, aggregative, analytical, temporal") {
			t.Errorf("ParseIntent(%q) error %q does not list the intents", bad, err)
		}
	}
}

// What a user sees for the questions they actually type: the intent,
// the complexity, and the rule printed as the reason. Several of these hold
// words of more than one intent; the first rule in the fixed order decides,
// and the reason names the word that did.
func TestClassifyRealQuestions(t *testing.T) {
	tests := []struct {
		q          string
		intent     Intent
		complexity Complexity
		rule       string
	}{
		{"Compare how all the themes changed over time, and also who decided?",
			IntentComparative, ComplexityComparative,
			`intent comparative: "compare" (comparative words); complexity comparative: follows the comparative intent`},
		{"How did the roadmap shift between Q1 and Q2?",
			IntentComparative, ComplexityComparative,
			`intent comparative: "between" (comparative words); complexity comparative: follows the comparative intent`},
		{"Have the customers' complaints about latency changed since the March release?",
			IntentTemporal, ComplexityAggregate,
			`intent temporal: "changed" (temporal words); complexity aggregate: follows the temporal intent`},
		{"Which risks keep recurring across the incident reviews?",
			IntentAnalytical, ComplexityAggregate,
			`intent analytical: "recurring" (analytical words); complexity aggregate: follows the analytical intent`},
		{"Summarize what every team committed to in the planning meetings.",
			IntentAggregative, ComplexityAggregate,
			`intent aggregative: "every" (aggregative words); complexity aggregate: follows the aggregative intent`},
		{"Give me an overview of the onboarding interviews.",
			IntentAggregative, ComplexityAggregate,
			`intent aggregative: "overview" (a summary request); complexity aggregate: follows the aggregative intent`},
		{"What did legal recommend about data retention?",
			IntentFactual, ComplexitySimple,
			"intent factual: no intent rule matched (the default); complexity simple: no complexity rule matched (the default)"},
		{"Which vendor is cheaper, Acme or Globex?", // no comparative word: a fact is asked for
			IntentFactual, ComplexitySimple,
			"intent factual: no intent rule matched (the default); complexity simple: no complexity rule matched (the default)"},
		{"Was the SSO migration approved? Additionally, who pays for it?",
			IntentFactual, ComplexityExploratory,
			"intent factual: no intent rule matched (the default); complexity exploratory: more than one question mark"},
		{"Who approved the budget and also who signed the contract",
			IntentFactual, ComplexityExploratory,
			`intent factual: no intent rule matched (the default); complexity exploratory: "and also"`},
	}
	for _, tt := range tests {
		c := Classify(tt.q)
		if c.Intent != tt.intent || c.Complexity != tt.complexity || c.Rule != tt.rule {
			t.Errorf("Classify(%q) = %s, %s\n  because %s\nwant %s, %s\n  because %s", tt.q, c.Intent, c.Complexity, c.Rule, tt.intent, tt.complexity, tt.rule)
		}
	}
}
