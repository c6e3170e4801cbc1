package ask

import (
	"strings"
	"testing"
)

var evidence = []Evidence{
	{ID: "A1", Source: "q3-planning", Role: "critic", Addresses: true,
		Text:    "We agreed to delay the billing migration to Q4 because the vendor contract is not signed.",
		Summary: "The billing migration was delayed to Q4 because the vendor contract is unsigned.",
		Points:  []Point{{Point: "The migration moved to Q4.", Quote: "delay the billing migration to Q4"}}},
	{ID: "A2", Source: "q3-retro", Role: "advocate", Addresses: true,
		Text:    "The team shipped the billing migration pilot in August and customers liked it.",
		Summary: "A pilot of the billing migration shipped in August and was well received.",
		Points:  []Point{{Point: "The pilot shipped in August.", Quote: "shipped the billing migration pilot in August"}}},
}

// The check keeps what the answers and their sources say, and drops, with
// the reason, what cites nothing, cites what does not exist, quotes what
// no cited source holds, or says what its sources do not.
func TestCheckSentences(t *testing.T) {
	tests := []struct {
		name string
		s    Sentence
		why  string // "" when the sentence stays
	}{
		{"grounded", Sentence{Text: "The billing migration was delayed to Q4 because the vendor contract is unsigned.", Answers: []string{"A1"}}, ""},
		{"grounded across two answers", Sentence{Text: "A billing migration pilot shipped in August, yet the migration itself was delayed to Q4.", Answers: []string{"A1", "A2"}}, ""},
		{"quote in the source", Sentence{Text: "The migration moved to Q4.", Answers: []string{"a1"}, Quote: "“delay the billing  migration to Q4”"}, ""},
		{"uncited", Sentence{Text: "The billing migration was delayed to Q4."}, "cites no answer"},
		{"unknown answer", Sentence{Text: "The billing migration was delayed to Q4.", Answers: []string{"A9"}}, "A9, which is no answer"},
		{"quote from elsewhere", Sentence{Text: "The migration moved to Q4.", Answers: []string{"A2"}, Quote: "delay the billing migration to Q4"}, "quote is not in the sources"},
		{"says more than its sources", Sentence{Text: "Leadership cancelled the entire payments roadmap after legal objections from regulators.", Answers: []string{"A1"}}, "of its words"},
		{"empty", Sentence{Text: "  ", Answers: []string{"A1"}}, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Check(reduceAnswer{Sentences: []Sentence{tt.s}}, evidence, nil)
			switch {
			case tt.why == "" && len(v.Dropped) > 0:
				t.Errorf("dropped: %s", v.Dropped[0].Reason)
			case tt.why != "" && len(v.Dropped) == 0:
				t.Errorf("kept, want it dropped because %s", tt.why)
			case tt.why != "" && !strings.Contains(v.Dropped[0].Reason, tt.why):
				t.Errorf("dropped because %q, want %q", v.Dropped[0].Reason, tt.why)
			}
		})
	}
}

// Every tension of the debate is addressed or listed as open; one the
// answer passes over, or one it invents, is reported.
func TestCheckTensions(t *testing.T) {
	a := reduceAnswer{Sentences: []Sentence{{Text: "The migration was delayed to Q4.", Answers: []string{"A1"}}},
		Tensions: []TensionTreatment{{ID: "t1", Treatment: "addressed", How: "Q4"}, {ID: "T7", Treatment: "open"}}}
	v := Check(a, evidence, []string{"T1", "T2"})
	if strings.Join(v.Untreated, ",") != "T2" || strings.Join(v.Unknown, ",") != "T7" || v.Clean() {
		t.Errorf("untreated %v, unknown %v, clean %v", v.Untreated, v.Unknown, v.Clean())
	}
	if got := len(v.Problems()); got != 2 {
		t.Errorf("%d problems, want 2: %q", got, v.Problems())
	}
}

func TestQuoteIn(t *testing.T) {
	tests := []struct {
		quote, text string
		want        bool
	}{
		{"delay the billing", "We agreed to Delay the  billing migration", true},
		{"‘it’s signed’ — finally", "he said 'it's signed' - finally", true},
		{"", "anything", false},
		{"not there", "anything", false},
		{"billing\nmigration", "the billing migration", true},
	}
	for _, tt := range tests {
		if got := QuoteIn(tt.quote, tt.text); got != tt.want {
			t.Errorf("QuoteIn(%q, %q) = %v, want %v", tt.quote, tt.text, got, tt.want)
		}
	}
}
