package lexical

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// sorted lists a set's words in order.
func sorted(s Set) []string { return slices.Sorted(maps.Keys(s)) }

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"The token is not validated.", []string{"token", "validated"}},
		{"an API key in URL", []string{"api", "key", "url"}},
		{"Tokens, tokens and TOKENS", []string{"tokens"}},
		{"auth/session.go:41 copies it", []string{"auth", "copies", "session"}},
		{"x2 y42 z100", []string{"y42", "z100"}},
		{"Ünïcode wörds über alles", []string{"alles", "wörds", "über", "ünïcode"}},
		{"the and of to in on", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := sorted(Words(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestJaccard(t *testing.T) {
	set := func(ws ...string) Set {
		s := Set{}
		for _, w := range ws {
			s[w] = true
		}
		return s
	}
	tests := []struct {
		name string
		a, b Set
		want float64
	}{
		{"both empty", set(), set(), 0},
		{"one empty", set("token"), set(), 0},
		{"nil", nil, set("token"), 0},
		{"same", set("token", "cookie"), set("cookie", "token"), 1},
		{"disjoint", set("token"), set("cookie"), 0},
		{"half", set("token", "cookie"), set("token", "cookie", "secure", "flag"), 0.5},
		{"one of three", set("token", "cookie"), set("token", "flag"), 1.0 / 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Jaccard(tt.a, tt.b); got != tt.want {
				t.Errorf("Jaccard = %v, want %v", got, tt.want)
			}
			if got := Jaccard(tt.b, tt.a); got != tt.want {
				t.Errorf("Jaccard reversed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"validating", "validat"},
		{"validated", "validat"},
		{"validates", "validat"},
		{"validate", "validat"},
		{"tokens", "token"},
		{"access", "access"},
		{"bus", "bus"},
		{"uses", "use"},    // too short to lose "es"
		{"using", "using"}, // too short to lose "ing"
		{"used", "used"},
		{"cookie", "cooki"},
		{"token", "token"},
	}
	for _, tt := range tests {
		if got := Stem(tt.in); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPolarWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"The token is not validated.", []string{"not_validat", "token"}},
		{"There is no problem here", []string{"here", "not_problem"}},
		{"It doesn't check, the token", []string{"not_check", "token"}},
		{"It doesn’t check", []string{"not_check"}},
		{"Without validation the cookie cannot be trusted", []string{"cooki", "not_trust", "not_validation"}},
		{"No. Tokens leak", []string{"leak", "token"}},
		{"Tokens are compared in non-constant time", []string{"compar", "not_constant", "time", "token"}},
		{"The handler is a no-op here", []string{"handler", "here"}},
		{"Not only the token leaks", []string{"leak", "token"}},
		{"The token's expiry", []string{"expiry", "token"}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := sorted(PolarWords(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("PolarWords(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSupport(t *testing.T) {
	pool := Pool("The token is not validated before the cookie is set.", "session.go:41 copies the token.")
	tests := []struct {
		claim string
		share float64
		contr []string
	}{
		{"", 0, nil},
		{"The token is not validated.", 1, nil},
		{"The token is validated.", 0.5, []string{"validat"}},
		{"The token is never validated.", 1, nil},
		{"The cookie is not set and not copied.", 1.0 / 3, []string{"not_copi", "not_set"}},
		{"The database drops users.", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.claim, func(t *testing.T) {
			share, contr := Support(tt.claim, pool)
			if share != tt.share || !slices.Equal(contr, tt.contr) {
				t.Errorf("Support(%q) = %v, %q; want %v, %q", tt.claim, share, contr, tt.share, tt.contr)
			}
			// Against the two texts' pools apart, as a check of many
			// claims holds them: the same as against their union.
			share, contr = SupportAny(tt.claim, Pool("The token is not validated before the cookie is set."), Pool("session.go:41 copies the token."))
			if share != tt.share || !slices.Equal(contr, tt.contr) {
				t.Errorf("SupportAny(%q) = %v, %q; want %v, %q", tt.claim, share, contr, tt.share, tt.contr)
			}
		})
	}
}

func TestGrounded(t *testing.T) {
	pool := Pool("The session cookie is not marked Secure.", "cookie.go:9 sets the cookie over plain HTTP.")
	tests := []struct {
		name  string
		claim string
		pool  Set
		want  bool
	}{
		{"restates the sources", "The session cookie is not marked Secure.", pool, true},
		{"another negation form", "The session cookie is never marked Secure.", pool, true},
		{"negation dropped", "The session cookie is marked Secure.", pool, false},
		{"enough support, polarity reversed", "The session cookie is marked Secure and not set over plain HTTP.", pool, false},
		{"exactly the threshold", "The session cookie is not marked Secure; it is set over plain HTTP by the attacker's proxy server.", pool, true},
		{"just under the threshold", "The session cookie is not marked Secure; it is set over plain HTTP by the attacker's proxy server daemon.", pool, false},
		{"invented claim", "The migration drops the users table.", pool, false},
		{"no meaningful words", "It is so.", pool, false},
		{"empty pool", "The session cookie is not marked Secure.", Set{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Grounded(tt.claim, tt.pool); got != tt.want {
				share, contra := Support(tt.claim, tt.pool)
				t.Errorf("Grounded(%q) = %v, want %v (share %v, contradicted %q)", tt.claim, got, tt.want, share, contra)
			}
		})
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"One.", []string{"One."}},
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"Version 1.2 of api.go fails. Done.", []string{"Version 1.2 of api.go fails.", "Done."}},
		{"Wait...  then go.", []string{"Wait...", "then go."}},
		{"No end ", []string{"No end"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Sentences(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Sentences(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBrackets(t *testing.T) {
	tests := []struct {
		in   string
		ids  []string
		rest string
	}{
		{"No citation.", nil, "No citation."},
		{"One [a.1].", []string{"a.1"}, "One  ."},
		{"Commas [a.1, b.2] and [c.3].", []string{"a.1", "b.2", "c.3"}, "Commas   and  ."},
		{"Semicolons [a.1; b.2 c.3]", []string{"a.1", "b.2", "c.3"}, "Semicolons  "},
		{"Joined [a.1 and b.2 & c.3 AND d.4]", []string{"a.1", "b.2", "c.3", "d.4"}, "Joined  "},
		{"Quoted [`a.1`, 'b.2', \"c.3\"]", []string{"a.1", "b.2", "c.3"}, "Quoted  "},
		{"Empty [] and [ , ]", nil, "Empty   and  "},
		{"Nested [[a.1]]", []string{"a.1"}, "Nested [ ]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ids, rest := Brackets(tt.in)
			if !slices.Equal(ids, tt.ids) || rest != tt.rest {
				t.Errorf("Brackets(%q) = %q, %q; want %q, %q", tt.in, ids, rest, tt.ids, tt.rest)
			}
		})
	}
}

func TestNarrativeCheck(t *testing.T) {
	n := Narrative{
		Cite: Brackets,
		Sources: map[string][]string{
			"log.1":   {"The logger writes passwords to the access log in plain text.", "log.go:12 logs the whole request body."},
			"retry.1": {"The retry loop never stops when the upstream keeps failing.", "retry.go:40 loops without an attempt limit."},
		},
		Vocabulary: Set{"agre": true, "reviewer": true},
	}
	tests := []struct {
		name     string
		sentence string
		want     Verdict
	}{
		{"stands", "Passwords leak into the access log [log.1].", Verdict{Cited: []string{"log.1"}, Share: 0.75}},
		{"only vocabulary", "Reviewers agree [log.1, retry.1, log.1].", Verdict{Cited: []string{"log.1", "retry.1"}}},
		{"uncited", "Passwords leak into the access log.", Verdict{Flaw: Uncited}},
		{"unknown id", "Passwords leak [log.1, log.9, log.8].", Verdict{Flaw: UnknownID, Unknown: "log.9"}},
		{"contradicts", "The retry loop stops when the upstream keeps failing [retry.1].", Verdict{Flaw: Contradicts, Cited: []string{"retry.1"}, Share: 5.0 / 6, Contradicted: []string{"stop"}}},
		{"unsupported", "The database drops the users table [log.1].", Verdict{Flaw: Unsupported, Cited: []string{"log.1"}, Share: 0}},
		{"support from the cited source only", "The retry loop never stops [log.1].", Verdict{Flaw: Unsupported, Cited: []string{"log.1"}, Share: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := n.Check(tt.sentence)
			if got.Flaw != tt.want.Flaw || got.Unknown != tt.want.Unknown || !slices.Equal(got.Cited, tt.want.Cited) ||
				got.Share != tt.want.Share || !slices.Equal(got.Contradicted, tt.want.Contradicted) {
				t.Errorf("Check(%q) = %+v, want %+v", tt.sentence, got, tt.want)
			}
		})
	}
}

// Both word sets drop the same stop words.
func TestStopWordsDropped(t *testing.T) {
	for w := range stop {
		if len(Words(w)) > 0 || len(PolarWords(w)) > 0 {
			t.Errorf("stop word %q is kept: %q, %q", w, sorted(Words(w)), sorted(PolarWords(w)))
		}
	}
}

// polarWordsByRune is PolarWords with its tokens copied out rune by rune,
// as it was first written: the reference the reading of tokens in place
// is held to. The words are made of the tokens the same way (polarReader).
func polarWordsByRune(s string) Set {
	p := polarReader{out: Set{}}
	var tok strings.Builder
	flush := func(sep rune) {
		if tok.Len() > 0 {
			p.token(tok.String(), sep)
			tok.Reset()
		}
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			tok.WriteRune(r)
		case r == '\'' || r == '’':
			tok.WriteByte('\'')
		case strings.ContainsRune(".,;:!?()", r):
			flush(r)
			p.negated = false
		default:
			flush(r)
		}
	}
	flush(0)
	return p.out
}

// PolarWords reads tokens where they lie in the text; it gives what
// reading them rune by rune gave, for apostrophes straight and curly,
// negations, hyphens, punctuation and letters that change length when
// lower-cased.
func TestPolarWordsAsReadRuneByRune(t *testing.T) {
	for _, s := range []string{
		"", "'", "’’", "It isn’t ready; the team’s plan doesn't ship.", "The no-op is not only fast, it is never slow!",
		"Non-constant values: NOT validated (yet), 'quoted' words’ ends.", "İSTANBUL ẞTRASSE Ǆemal ΣΊΣΥΦΟΣ straße",
		"session.go:41 copies the token; cannot rotate keys without downtime.", "a b c dd eee ffff 12 123 1234",
		"We won't ship. Only then: not_ready not ready, no. No! n't 'n't",
	} {
		if got, want := PolarWords(s), polarWordsByRune(s); !maps.Equal(got, want) {
			t.Errorf("PolarWords(%q) = %v, want %v", s, got, want)
		}
	}
}

// BenchmarkPolarWords: the words of a note of about 2 KB, as the check
// of a question's answer pools each source it cites.
func BenchmarkPolarWords(b *testing.B) {
	text := strings.Repeat("The billing migration is not ready: Dana’s team won't move before March, and the auditors never signed off. ", 18)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		PolarWords(text)
	}
}
