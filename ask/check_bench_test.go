package ask

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/internal/corpusgen"
	"github.com/sotlabs/sot/lexical"
)

// BenchmarkCheck: the check of a question's answer against the answers
// it cites and their sources (Check), for ten generated notes read one a
// call and an answer of ten sentences, each citing two answers and
// quoting one source. It runs between the last answer of a question and
// its files being written.
func BenchmarkCheck(b *testing.B) {
	dir := b.TempDir()
	if err := corpusgen.Write(dir, 10, 2026); err != nil {
		b.Fatal(err)
	}
	srcs, _, err := corpus.Load([]string{filepath.Join(dir)}, corpus.Options{})
	if err != nil || len(srcs) != 10 {
		b.Fatalf("%d sources, %v", len(srcs), err)
	}
	var evidence []Evidence
	var a reduceAnswer
	for i, s := range srcs {
		sentences := lexical.Sentences(s.Text)
		first := sentences[min(2, len(sentences)-1)]
		evidence = append(evidence, Evidence{ID: fmt.Sprintf("A%d", i+1), Source: s.ID, Title: s.Title, Text: s.Text,
			Summary: first, Points: []Point{{Point: first, Quote: first}}, Addresses: true})
	}
	for i := range evidence {
		e := evidence[i]
		a.Sentences = append(a.Sentences, Sentence{Text: e.Summary, Answers: []string{e.ID, evidence[(i+1)%len(evidence)].ID},
			Quote: strings.TrimSpace(e.Summary)})
	}
	if v := Check(a, evidence, nil); len(v.Kept) != len(a.Sentences) {
		b.Fatalf("kept %d of %d sentences: %+v", len(v.Kept), len(a.Sentences), v.Dropped)
	}
	for b.Loop() {
		Check(a, evidence, nil)
	}
}
