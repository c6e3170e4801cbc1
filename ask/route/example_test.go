package route_test

import (
	"fmt"

	"github.com/sotlabs/sot/ask/route"
)

// Planning an answer: classify the question, choose sources for relevance
// and diversity, and give each chosen source its perspective role, with the
// rule behind every step.
func Example() {
	question := "How has the pricing decision evolved over time?"
	c := route.Classify(question)
	fmt.Println(c.Intent, c.Complexity)
	fmt.Println(c.Rule)

	// What retrieval found, most relevant first (want 3, so up to 6).
	cands := []route.Candidate{
		{ID: "q1-planning", Relevance: 12.0, Fields: map[string]string{
			route.FieldSourceType: "transcript", route.FieldMeetingType: "planning", route.FieldQuarter: "Q1 2026"}},
		{ID: "q1-planning-followup", Relevance: 11.5, Fields: map[string]string{
			route.FieldSourceType: "transcript", route.FieldMeetingType: "planning", route.FieldQuarter: "Q1 2026"}},
		{ID: "q2-review", Relevance: 10.8, Fields: map[string]string{
			route.FieldSourceType: "transcript", route.FieldMeetingType: "review", route.FieldQuarter: "Q2 2026"},
			Signals: route.Signals{RiskMentions: 5}},
		{ID: "q3-report", Relevance: 9.0, Fields: map[string]string{
			route.FieldSourceType: "report", route.FieldMeetingType: "report", route.FieldQuarter: "Q3 2026"},
			Suggested: "historian"},
	}
	chosen := route.Select(cands, 3, route.DefaultDiversity())
	for _, ch := range chosen {
		fmt.Printf("%-20s relevance %4.1f  bonus %.2f  score %.3f\n", ch.ID, ch.Relevance, ch.Bonus, ch.Score)
	}

	if skip, note := route.SkipSoT(len(chosen), route.DefaultMinAgents); skip {
		fmt.Println(note)
		return
	}
	roles := route.RolesFor(c.Intent)
	for _, a := range route.Assign(route.Sources(chosen), roles, route.Adaptive) {
		fmt.Printf("%-20s %-11s %s\n", a.SourceID, a.Role, a.Why)
	}
	// Output:
	// temporal aggregate
	// intent temporal: "evolved" (temporal words); complexity aggregate: follows the temporal intent
	// q1-planning          relevance 12.0  bonus 0.30  score 1.000
	// q2-review            relevance 10.8  bonus 0.20  score 0.830
	// q3-report            relevance  9.0  bonus 0.30  score 0.825
	// q1-planning          analyst     no suggested perspective or signal over its threshold; rotation: source 1 over analyst, historian, synthesizer
	// q2-review            critic      content signal: riskMentions 5 > 3
	// q3-report            historian   suggested perspective: the source suggests historian
}
