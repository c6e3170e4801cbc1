package corpus_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/sotlabs/sot/ask/corpus"
)

// Load a directory of knowledge sources and a northstar agent export, and
// write one source back as a northstar agent file.
func Example() {
	sources, skipped, err := corpus.Load([]string{
		"testdata/plain",
		"testdata/northstar/000_addec4909cf46908.txt",
	}, corpus.Options{PartTokens: 2000})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range sources {
		date := "-"
		if !s.Date.IsZero() {
			date = s.Date.Format("2006-01-02")
		}
		fmt.Printf("%-9s | %-25.25s | %-15s | %s\n", s.Format, s.Title, s.Type, date)
	}
	fmt.Println("skipped:", len(skipped))

	seed := sources[len(sources)-1]
	fmt.Println(seed.Metadata.MeetingType, seed.Metadata.TemporalContext.Quarter, seed.Metadata.SuggestedPerspective)
	fmt.Println(strings.SplitN(seed.Transcript, "\n", 4)[2])
	for _, p := range seed.Parts {
		fmt.Printf("part %d of %d: %.20q...\n", p.Index+1, p.Count, p.Text)
	}

	agent := string(corpus.Export(seed))
	fmt.Println(strings.SplitN(agent, "\n", 3)[1])
	// Output:
	// markdown  | Standup, March 14         | markdown        | 2025-03-14
	// markdown  | Decision: keep PostgreSQL | decision-record | 2025-05-20
	// text      | field-notes               | text            | -
	// text      | Quarterly report          | text            | -
	// payload   | Sprint 12 Retro           | text            | 2025-09-30
	// markdown  | untitled                  | markdown        | -
	// northstar | Societies of Thought Expe | documentation   | 2026-01-20
	// skipped: 0
	// report Q1 2026 analyst
	// ## Overview
	// part 1 of 2: "## Summary\n\nThe Soci"...
	// part 2 of 2: "### Diversity-Aware "...
	// agent_type: northstar-meeting-agent
}
