package conflict_test

import (
	"fmt"

	"github.com/sotlabs/sot/conflict"
)

func ExampleDetect() {
	answers := []conflict.Response{
		{AgentName: "Q1 planning", Perspective: "Advocate",
			Response: "The migration to the new billing system is on track and the pilot confirms the savings."},
		{AgentName: "Q2 review", Perspective: "Critic",
			Response: "However, the migration slipped: the pilot exposed a data-loss risk, and finance raised a concern about the savings."},
		{AgentName: "Q2 finance", Perspective: "Analyst",
			Response: "Finance also supports the savings estimate; the pilot confirms it."},
	}
	a, err := conflict.Detect(answers, conflict.Options{Threshold: conflict.DefaultThreshold, Keep: conflict.DefaultKeep})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Summary)
	for _, p := range append(a.Conflicts, a.Agreements...) {
		fmt.Printf("%s: %s (%s) / %s (%s), confidence %.2f, similarity %.2f\n",
			p.Type, p.Source1.AgentName, p.Source1.Perspective, p.Source2.AgentName, p.Source2.Perspective, p.Confidence, p.Similarity)
	}
	fmt.Println("themes:", a.ConflictThemes)
	// The review and the finance answers tie (three conflict markers,
	// three agreement markers) and share few words: they are neutral.
	// Output:
	// 1 tension(s) detected; 1 point(s) of agreement
	// conflict: Q1 planning (Advocate) / Q2 review (Critic), confidence 0.80, similarity 0.19
	// agreement: Q1 planning (Advocate) / Q2 finance (Analyst), confidence 0.95, similarity 0.17
	// themes: [migration pilot savings billing system]
}
