package persona

import (
	"slices"
	"strings"
	"unicode"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Signals are what adaptive selection looks for in a change to judge
// whether a specialist is relevant to it.
type Signals struct {
	// Terms are file patterns (holding *, ? or [: "*.agent.md"), paths
	// (holding a slash: "agents/", ".github/workflows"), file names
	// (holding a dot: "go.mod") and words.
	Terms []string
	// Domain are the words that name the persona's domain, read from its
	// text; a changed file whose path holds one ("agents/x.md" for
	// "agent") is relevant. Empty when the signals were declared.
	Domain []string
	// Derived is true when the file declared no signals and they were
	// read from its text.
	Derived bool
}

// SelectionSignals returns the frontmatter's signals when the file
// declares any, and otherwise signals derived from the persona's own
// text, so that a persona written for PAW, which has no signals field,
// can still be picked.
//
// Derived signals come from the Domain Boundary and the Cognitive
// Strategy, leaving out sentences that say what the specialist does not
// examine ("... is not your domain", "leave that to ..."): the terms are
// every file pattern, directory or file name they name, and the words of
// what the persona says its domain is (the Domain Boundary's first
// sentence and its bold phrases, the Cognitive Strategy heading's suffix
// and the bold phrases of its first paragraph). The domain words are
// those of the Domain Boundary's bold phrases ("Your domain is **agent
// instruction quality**"), or of its first sentence when it has none.
func (p *Persona) SelectionSignals() Signals {
	if len(p.Meta.Signals) > 0 {
		return Signals{Terms: p.Meta.Signals}
	}
	return Signals{Terms: p.derived, Domain: p.domain, Derived: true}
}

// maxDerivedWords bounds the words derived from a persona's text, so that
// a long Domain Boundary does not make a specialist relevant to anything.
const maxDerivedWords = 24

var (
	boldSpan     = lazyre.New(`\*\*([^*\n]+)\*\*`)
	codeSpan     = lazyre.New("`([^`\n]+)`")
	sentenceEnd  = lazyre.New(`[.!?;](?:\s+|$)|\n\s*\n|\n\s*(?:[-*+]|\d+[.)])\s+`)
	negation     = lazyre.New(`(?i)\b(?:not|never|nor|leave|leaves|belongs?|outside|except|excluding)\b|n't\b`)
	pathyPattern = lazyre.New(`^[A-Za-z0-9_.*?\[\]/-]+$`)
	fileName     = lazyre.New(`^[A-Za-z0-9_-]*\.[A-Za-z0-9._-]*[A-Za-z0-9]$`)
)

// deriveSignals reads signals from a specialist's own text: the terms
// and the domain words; see SelectionSignals.
func deriveSignals(p *Persona) ([]string, []string) {
	domain := positive(p.Section("Domain Boundary"))
	strategy := positive(p.Section("Cognitive Strategy"))

	var out, domainOut []string
	seen := map[string]bool{}
	addSignal := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, text := range [][]string{domain, strategy} {
		for _, s := range text {
			for _, pat := range patternsIn(s) {
				addSignal(pat)
			}
		}
	}

	var phrases, bold []string
	for _, s := range domain {
		for _, m := range boldSpan.Re().FindAllStringSubmatch(s, -1) {
			bold = append(bold, m[1])
		}
	}
	if len(domain) > 0 {
		phrases = append(phrases, domain[0])
		if len(bold) == 0 {
			bold = domain[:1]
		}
	}
	phrases = append(phrases, bold...)
	for _, ph := range bold {
		for _, w := range domainWords(ph) {
			if !slices.Contains(domainOut, w) {
				domainOut = append(domainOut, w)
			}
		}
	}
	if h, _, ok := p.Heading("Cognitive Strategy"); ok && len(h) > len("Cognitive Strategy") {
		phrases = append(phrases, h[len("Cognitive Strategy"):])
	}
	first, _, _ := strings.Cut(strings.TrimSpace(p.Section("Cognitive Strategy")), "\n\n")
	if !negation.Re().MatchString(first) {
		for _, m := range boldSpan.Re().FindAllStringSubmatch(first, -1) {
			phrases = append(phrases, m[1])
		}
	}
	words := 0
	stems := map[string]bool{}
	for _, ph := range phrases {
		for _, w := range domainWords(ph) {
			if words < maxDerivedWords && !stems[Stem(w)] {
				stems[Stem(w)] = true
				addSignal(w)
				words++
			}
		}
	}
	return out, domainOut
}

// positive splits text into sentences (and list items) and keeps those
// that do not say what lies outside the domain.
func positive(text string) []string {
	var out []string
	for _, s := range splitSentences(text) {
		if s = strings.TrimSpace(s); s != "" && !negation.Re().MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

func splitSentences(text string) []string {
	var out []string
	last := 0
	for _, m := range sentenceEnd.Re().FindAllStringIndex(text, -1) {
		out = append(out, text[last:m[0]+1])
		last = m[1]
	}
	return append(out, text[last:])
}

// patternsIn returns the file patterns, paths and file names a sentence
// names: in code spans anything path-like, elsewhere only what cannot be
// prose (a pattern with a wildcard, a directory with a trailing slash).
func patternsIn(s string) []string {
	var out []string
	for _, m := range codeSpan.Re().FindAllStringSubmatch(s, -1) {
		if p := pathSignal(m[1], true); p != "" {
			out = append(out, p)
		}
	}
	bare := strings.NewReplacer("**", " ", "__", " ").Replace(codeSpan.Re().ReplaceAllString(s, " "))
	for _, f := range strings.Fields(bare) {
		if p := pathSignal(f, false); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// pathSignal turns a token into a path signal, or "". quoted tokens (from
// code spans) may be plain paths and file names too.
func pathSignal(tok string, quoted bool) string {
	tok = strings.Trim(tok, `"'(),:;<>`)
	tok = strings.TrimSuffix(tok, ".")
	tok = strings.TrimPrefix(tok, "./")
	if tok == "" || strings.Contains(tok, "://") || !pathyPattern.Re().MatchString(tok) {
		return ""
	}
	hasLetter := strings.IndexFunc(tok, unicode.IsLetter) >= 0
	switch {
	case !hasLetter:
		return ""
	case strings.ContainsAny(tok, "*?["):
		// Outside code spans a star is often emphasis: a pattern needs a
		// wildcard next to a dot or a slash (*.sql, docs/*, */prompts).
		if quoted && strings.ContainsAny(tok, "./") || strings.Contains(tok, "*.") || strings.Contains(tok, "/*") || strings.Contains(tok, "*/") {
			return strings.ToLower(tok)
		}
		return ""
	case strings.HasSuffix(tok, "/") && len(tok) > 1:
		return strings.ToLower(tok)
	case quoted && strings.Contains(tok, "/"):
		return strings.ToLower(tok)
	case quoted && fileName.Re().MatchString(tok):
		return strings.ToLower(tok)
	}
	return ""
}

// domainWords returns the content words of a phrase: lower-cased, three
// letters or more, neither common English nor the vocabulary every
// reviewer shares.
func domainWords(phrase string) []string {
	var kept []string
	for _, f := range strings.Fields(codeSpan.Re().ReplaceAllString(phrase, " ")) {
		if !strings.ContainsAny(strings.Trim(f, ".,;:()*_"), "/*.") { // paths are signals of their own
			kept = append(kept, f)
		}
	}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(strings.Join(kept, " ")), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 3 || commonWords[w] || strings.IndexFunc(w, unicode.IsLetter) < 0 || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// Stem is the form in which a derived word is compared with a change's
// words and paths: lower-cased, a plural's trailing s dropped ("agents"
// and "agent" are one word).
func Stem(w string) string {
	w = strings.ToLower(w)
	if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// commonWords are left out of derived signals: they would make any
// specialist relevant to any change.
var commonWords = toSet(`the and for with that this from are not but you your all can has have was will its into then than when which
whether what who whom whose how why where while within without about above after again against also any because been before being
below between both each few more most other some such only own same too very just should would could may might must shall does did
doing done make makes made making every everything anything something nothing one two three first second one's their them they these
those there here our ours out over under upon via per etc use uses used using including include includes whatever whenever
domain domains boundary boundaries territory scope area areas specialist specialists reviewer reviewers review reviews reviewing
code change changes changed diff diffs finding findings concern concerns issue issues problem problems question questions aspect aspects
analysis analyses analyze analysing analyzing approach method methods strategy strategies cognitive thinking think reasoning reason
examine examines examining examination evaluate evaluates evaluating assessment assess check checks checking identify identifies
look looks looking read reads reading trace traces tracing find finds surface surfaces ensure ensures verify verifies validate
system systems software project projects thing things way ways part parts kind kinds level levels case cases example examples
well good bad new old real really reliable reliably intended perform performs task tasks work works working whole full main
like need needs needed given give gives take takes own owns owned run runs time times`)

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
