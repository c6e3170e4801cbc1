package material

import (
	"regexp"
	"strings"
	"testing"
)

// A line whose words hold a trust word holds one of trustWordKeys, so
// that analysis without keywords may skip reading the words of a line
// without any: on every trust word in several spellings, and on lines
// that only come near one.
func TestTrustWordKeysCoverTheWords(t *testing.T) {
	lines := []string{"", "x := y + 1", "the quick brown fox", "crypt auths", "ÜberFile JSON \u212a token",
		"func Handle1_2(v int) int { return v }", "A_VERY_LONG_IDENTIFIER_WITH_MANY_PARTS_AND_MORE_PARTS_THAN_SIXTEEN_OF_THEM_A_B_C_D_E_F_SQL",
		"über_Passwort sessionÉtat", "ΣQL sql", "\u212aEY = 1"}
	for _, w := range trustWords {
		up := strings.ToUpper(w)
		camel := strings.ToUpper(w[:1]) + w[1:]
		lines = append(lines, w, "x."+up+"()", "get"+camel+"Value(v)", "my_"+w+"_id", "é"+camel+"é", strings.Repeat("ab", 40)+camel)
	}
	found := 0
	for _, l := range lines {
		a := &analysis{}
		trust := a.addWords(l)
		if trust != "" {
			found++
		}
		if trust != "" && keyHits(l)&trustWordKeys.bit == 0 {
			t.Errorf("%q holds the trust word %q but none of the keys", l, trust)
		}
	}
	if found < 4*len(trustWords) {
		t.Errorf("trust words found in %d lines; the test means them to be in at least %d", found, 4*len(trustWords))
	}
	for _, w := range trustWords {
		if !isTrustWord([]byte(w)) {
			t.Errorf("%q is not a trust word", w)
		}
	}
}

// goExportedRE is the rule goExported writes out.
var goExportedRE = regexp.MustCompile(`^(func\s+(\([^)]*\)\s*)?|type\s+|var\s+|const\s+)\p{Lu}`)

var goExportedLines = []string{
	"", "func", "func ", "func Handle(v int) int {", "func handle()", "func\tÜber()", "func  (s *S) Serve()",
	"func (s *S) serve()", "func (s *S)Serve()", "func (s *S", "func(s *S) Serve()", "func (a, b) X", "func ((x)) Y",
	"type T struct{}", "type t struct{}", "typeT", "var X = 1", "var\n\fX", "const Pi = 3", "const pi = 3",
	"functional X", "  func X()", "var _ = 1", "func \xffX", "func (r \u212a) Éclair()", "type \u01c5x",
}

// goExported says what the regular expression it stands for says.
func TestGoExportedIsTheExpression(t *testing.T) {
	for _, l := range goExportedLines {
		if got, want := goExported(l), goExportedRE.MatchString(l); got != want {
			t.Errorf("goExported(%q) = %v, the expression says %v", l, got, want)
		}
	}
}

func FuzzGoExported(f *testing.F) {
	for _, l := range goExportedLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, l string) {
		if got, want := goExported(l), goExportedRE.MatchString(l); got != want {
			t.Errorf("goExported(%q) = %v, the expression says %v", l, got, want)
		}
	})
}
