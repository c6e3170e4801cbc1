package ask

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sotlabs/sot/lexical"
)

// Evidence is one MAP answer as the REDUCE step and its check see it: the
// answer's id (A1, A2, ...), the source it read and from which role, the
// text of the source (or part) it read, and what it answered.
type Evidence struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	// Members are the sources of a group read as one.
	Members []string `json:"members,omitempty"`
	Title   string   `json:"title"`
	Role    string   `json:"role,omitempty"`
	// Weight is the role's weight (its persona's weight), 0 without a
	// role; the reduce step reads the answers weightiest first.
	Weight float64 `json:"weight,omitempty"`
	Text   string  `json:"-"`
	Points []Point `json:"points"`
	// Summary is the answer in a few sentences; Addresses is false when the
	// source does not bear on the question.
	Summary   string `json:"summary"`
	Addresses bool   `json:"addresses"`
}

// Point is one claim a MAP answer draws from its source, with the passage
// that supports it.
type Point struct {
	Point string `json:"point"`
	Quote string `json:"quote"`
	// QuoteFound is false when the quote is not in the source: the point is
	// kept, but its quote is not shown as the source's words.
	QuoteFound bool `json:"quote_found"`
}

// Dropped is a sentence the check kept out of the answer, and why.
type Dropped struct {
	Sentence Sentence `json:"sentence"`
	Reason   string   `json:"reason"`
}

// Verdict is what Check found in an answer.
type Verdict struct {
	Kept    []Sentence `json:"kept"`
	Dropped []Dropped  `json:"dropped,omitempty"`
	// Untreated lists the tensions the answer neither addressed nor listed
	// as open; Unknown the tension ids it treated that the debate never
	// named.
	Untreated []string `json:"untreated,omitempty"`
	Unknown   []string `json:"unknown_tensions,omitempty"`
	// Empty: the answer held no sentence at all.
	Empty bool `json:"empty,omitempty"`
}

// Clean reports whether the answer passed whole.
func (v Verdict) Clean() bool {
	return len(v.Dropped) == 0 && len(v.Untreated) == 0 && len(v.Unknown) == 0 && !v.Empty
}

// Problems lists what failed, one line each, as the answer's writer is told
// when it is asked once more.
func (v Verdict) Problems() []string {
	var out []string
	if v.Empty {
		out = append(out, "the answer has no sentence: write the answer to the question, one sentence at a time, each citing the answers it rests on (if the sources do not answer it, say so and cite the answers that show it)")
	}
	for _, d := range v.Dropped {
		out = append(out, fmt.Sprintf("%q: %s", d.Sentence.Text, d.Reason))
	}
	for _, id := range v.Untreated {
		out = append(out, fmt.Sprintf("tension %s is neither addressed nor listed as open", id))
	}
	for _, id := range v.Unknown {
		out = append(out, fmt.Sprintf("tension %s does not exist", id))
	}
	return out
}

// Check holds an answer to its sources, which is how sot keeps the
// synthesis from adding what no perspective found. A sentence stays only
// when it cites answers that exist, when its quote (if it has one) is in
// the text of a source it cites, and when it says only what those answers
// and their sources say (lexical.Support at lexical.SentenceSupport, with
// no contradicted word). Every tension the debate named must be addressed
// or listed as open.
func Check(a reduceAnswer, evidence []Evidence, tensions []string) Verdict {
	byID := map[string]*cited{}
	for _, e := range evidence {
		byID[e.ID] = &cited{Evidence: e}
	}
	v := Verdict{Empty: len(a.Sentences) == 0}
	for _, s := range a.Sentences {
		if why := checkSentence(s, byID); why != "" {
			v.Dropped = append(v.Dropped, Dropped{Sentence: s, Reason: why})
			continue
		}
		v.Kept = append(v.Kept, s)
	}
	treated := map[string]bool{}
	for _, t := range a.Tensions {
		id := strings.ToUpper(strings.TrimSpace(t.ID))
		if !slices.Contains(tensions, id) {
			v.Unknown = append(v.Unknown, t.ID)
			continue
		}
		if t.Treatment == "addressed" || t.Treatment == "open" {
			treated[id] = true
		}
	}
	for _, id := range tensions {
		if !treated[id] {
			v.Untreated = append(v.Untreated, id)
		}
	}
	return v
}

// cited is an answer as the sentences that cite it are checked against
// it: its words and its source's text squashed (for quotes) are made once,
// on the first citation, however many sentences cite it. Made again for
// each sentence, they were most of the check, a millisecond after the
// last answer of a question.
type cited struct {
	Evidence
	pool     lexical.Set
	squashed string
}

// words is the pool of the answer's words and its source's.
func (c *cited) words() lexical.Set {
	if c.pool == nil {
		texts := []string{c.Summary}
		for _, p := range c.Points {
			texts = append(texts, p.Point, p.Quote)
		}
		c.pool = lexical.Pool(append(texts, c.Text)...)
	}
	return c.pool
}

// holds reports whether the source's text holds quote (QuoteIn).
func (c *cited) holds(quote string) bool {
	if c.squashed == "" {
		c.squashed = squash(c.Text)
	}
	return quoteInSquashed(quote, c.squashed)
}

// checkSentence says what is wrong with one sentence, or "".
func checkSentence(s Sentence, byID map[string]*cited) string {
	if strings.TrimSpace(s.Text) == "" {
		return "it is empty"
	}
	if len(s.Answers) == 0 {
		return "it cites no answer"
	}
	var cites []*cited
	for _, id := range s.Answers {
		c, ok := byID[strings.ToUpper(strings.TrimSpace(id))]
		if !ok {
			return fmt.Sprintf("it cites %s, which is no answer", id)
		}
		cites = append(cites, c)
	}
	if q := strings.TrimSpace(s.Quote); q != "" && !slices.ContainsFunc(cites, func(c *cited) bool { return c.holds(q) }) {
		return "its quote is not in the sources it cites"
	}
	pools := make([]lexical.Set, len(cites))
	for i, c := range cites {
		pools[i] = c.words()
	}
	share, contradicted := lexical.SupportAny(s.Text, pools...)
	if len(contradicted) > 0 {
		return fmt.Sprintf("it contradicts its sources on %s", strings.Join(contradicted, ", "))
	}
	if share < lexical.SentenceSupport {
		return fmt.Sprintf("only %.0f%% of its words are in the answers it cites", share*100)
	}
	return ""
}

// QuoteIn reports whether quote appears in text, letter for letter, with
// case, runs of spaces and the style of quotation marks and dashes set
// aside. An empty quote is in no text.
func QuoteIn(quote, text string) bool { return quoteInSquashed(quote, squash(text)) }

// quoteInSquashed is QuoteIn over a text squashed already.
func quoteInSquashed(quote, text string) bool {
	q := squash(quote)
	return q != "" && strings.Contains(text, q)
}

// squash lowers case, folds curly quotes and dashes to plain ones, drops
// the quotation marks at the ends, and makes every run of spaces one space.
func squash(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if r < utf8.RuneSelf { // the common case, without the tables
			switch {
			case 'A' <= r && r <= 'Z':
				r += 'a' - 'A'
			case r == ' ' || '\t' <= r && r <= '\r':
				space = b.Len() > 0
				continue
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteByte(byte(r))
			continue
		}
		// unicode.ToLower of each rune is strings.ToLower, without the
		// lowered copy of s.
		r = unicode.ToLower(r)
		switch r {
		case '‘', '’', '‚', '′':
			r = '\''
		case '“', '”', '„', '″':
			r = '"'
		case '–', '—', '−':
			r = '-'
		case '…':
			b.WriteString("...")
			space = false
			continue
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return strings.Trim(b.String(), `"' `)
}
