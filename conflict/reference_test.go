package conflict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/corpusgen"
)

// This file keeps northstar's detector written the plain way, every pair
// compared with maps of words and kept in memory, as the reference the
// fast Detect must match byte for byte.

// refAnswer is one answer as the reference reads it.
type refAnswer struct {
	source    Source
	empty     bool
	conflicts int
	agrees    int
	words     map[string]bool
}

func refRead(i int, r Response) refAnswer {
	lower := strings.ToLower(r.Response)
	a := refAnswer{
		source: Source{AgentName: r.AgentName, Perspective: r.Perspective, Excerpt: refExcerpt(r.Response), Index: i},
		empty:  strings.TrimSpace(lower) == "",
		words:  map[string]bool{},
	}
	if a.source.AgentName == "" {
		a.source.AgentName = fmt.Sprintf("Source %d", i+1)
	}
	if a.source.Perspective == "" {
		a.source.Perspective = "Default"
	}
	ws := words(lower)
	a.conflicts = refCountMarkers(lower, ws, conflictMarkers)
	a.agrees = refCountMarkers(lower, ws, agreementMarkers)
	for _, w := range strings.Fields(lower) {
		if utf8.RuneCountInString(w) > 3 {
			a.words[w] = true
		}
	}
	return a
}

// word is a maximal run of word characters in a text, with its byte
// offsets.
type word struct {
	text       string
	start, end int
}

// words splits s into its words, as the detector once did before it
// counted the markers.
func words(s string) []word {
	var ws []word
	start := -1
	for i, r := range s {
		switch {
		case isWordRune(r) && start < 0:
			start = i
		case !isWordRune(r) && start >= 0:
			ws = append(ws, word{s[start:i], start, i})
			start = -1
		}
	}
	if start >= 0 {
		ws = append(ws, word{s[start:], start, len(s)})
	}
	return ws
}

// refPhraseAt reports whether the words ws are the parts of a phrase with
// only white space between them.
func refPhraseAt(s string, ws []word, parts []string) bool {
	for k, p := range parts {
		if ws[k].text != p {
			return false
		}
		if k > 0 && strings.TrimFunc(s[ws[k-1].end:ws[k].start], unicode.IsSpace) != "" {
			return false
		}
	}
	return true
}

// refExcerpt is excerpt as northstar wrote it, every rune decoded.
func refExcerpt(s string) string {
	t := strings.TrimSpace(s)
	if utf8.RuneCountInString(t) <= ExcerptLength {
		return t
	}
	head := []rune(t)[:ExcerptLength]
	for i := len(head) - 1; i > ExcerptLength/2; i-- {
		if head[i] == '.' {
			return string(head[:i+1])
		}
	}
	return string(head) + "..."
}

// refCountMarkers counts the markers one at a time over every word.
func refCountMarkers(s string, ws []word, markers []string) int {
	n := 0
	for _, m := range markers {
		parts := strings.Fields(m)
		for i := 0; i+len(parts) <= len(ws); i++ {
			if refPhraseAt(s, ws[i:i+len(parts)], parts) {
				n++
				i += len(parts) - 1
			}
		}
	}
	return n
}

func refJaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

func refCompare(x, y *refAnswer, threshold float64) (p Pair, ok bool) {
	if x.empty || y.empty {
		return Pair{}, false
	}
	p = Pair{
		Source1:        x.source,
		Source2:        y.source,
		Similarity:     refJaccard(x.words, y.words),
		ConflictScore:  x.conflicts + y.conflicts,
		AgreementScore: x.agrees + y.agrees,
	}
	switch {
	case p.ConflictScore > p.AgreementScore && p.Similarity < threshold:
		p.Type = TypeConflict
		p.Confidence = math.Min(1, 0.5+float64(float64(p.ConflictScore)*0.1))
	case p.AgreementScore > p.ConflictScore || p.Similarity >= threshold:
		p.Type = TypeAgreement
		c := 0.5 + float64(float64(p.AgreementScore)*0.1)
		c += float64(p.Similarity * 0.3)
		p.Confidence = math.Min(1, c)
	default:
		return Pair{}, false
	}
	return p, true
}

// refDetect is Detect the plain way: every pair compared and kept, the
// lists cut from them, the themes counted over every conflict's excerpts,
// and every pair returned in the order of the input.
func refDetect(rs []Response, threshold float64, keep int) (Analysis, []Pair) {
	a := Analysis{Conflicts: []Pair{}, Agreements: []Pair{}, ConflictThemes: []string{}}
	if len(rs) < 2 {
		return a, nil
	}
	conflicts, agreements := everyPair(rs, threshold)
	var all []Pair
	as := make([]refAnswer, len(rs))
	for i, r := range rs {
		as[i] = refRead(i, r)
	}
	for i := range as {
		for j := i + 1; j < len(as); j++ {
			if p, ok := refCompare(&as[i], &as[j], threshold); ok {
				all = append(all, p)
			}
		}
	}
	a.TotalConflicts, a.TotalAgreements = len(conflicts), len(agreements)
	a.HasConflicts = len(conflicts) > 0
	a.Conflicts, a.Agreements = strongestOf(conflicts, keep), strongestOf(agreements, keep)
	a.Truncated = len(a.Conflicts) < len(conflicts) || len(a.Agreements) < len(agreements)
	a.ConflictThemes = northstarThemes(conflicts)
	var parts []string
	if len(conflicts) > 0 {
		parts = append(parts, fmt.Sprintf("%d tension(s) detected", len(conflicts)))
	}
	if len(agreements) > 0 {
		parts = append(parts, fmt.Sprintf("%d point(s) of agreement", len(agreements)))
	}
	a.Summary = strings.Join(parts, "; ")
	return a, all
}

// corpusAnswers reads n notes of a generated corpus as answers, with the
// seed's roles in turn and no role for some. A few are made empty, and a
// few repeat an earlier note with its case changed, so that some pairs
// share every word.
func corpusAnswers(t testing.TB, n int, seed uint64) []Response {
	t.Helper()
	dir := t.TempDir()
	if err := corpusgen.Write(dir, n, seed); err != nil {
		t.Fatal(err)
	}
	var rs []Response
	roles := []string{"Analyst", "Critic", "Advocate", "Historian", ""}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		switch k := len(rs); {
		case k%17 == 5:
			text = " \n\t"
		case k%23 == 11 && k > 0:
			text = strings.ToUpper(rs[k-1].Response)
		}
		rs = append(rs, Response{Response: text, AgentName: filepath.Base(path), Perspective: roles[len(rs)%len(roles)]})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// The fast Detect gives what the plain one gives, byte for byte, in the
// Analysis's JSON and in every NDJSON line, over generated notes and the
// markers-and-vocabulary answers, at several thresholds and list sizes,
// with windows of every size and on one processor or several.
func TestDetectMatchesTheReference(t *testing.T) {
	notes := corpusAnswers(t, 160, 23)
	tests := []struct {
		name      string
		rs        []Response
		threshold float64
		keep      int
	}{
		{"notes", notes, DefaultThreshold, DefaultKeep},
		{"notes, threshold 0.3, keep 10", notes, 0.3, 10},
		{"notes, threshold 0.6, keep 1", notes, 0.6, 1},
		{"notes, threshold 0", notes, 0, DefaultKeep},
		{"notes, keep 0", notes, DefaultThreshold, 0},
		{"notes, keep every pair", notes, DefaultThreshold, 1 << 20},
		{"markers and vocabulary", generated(150, 5), DefaultThreshold, 30},
		{"two notes", notes[:2], DefaultThreshold, DefaultKeep},
		{"three notes, threshold 1", notes[3:6], 1, DefaultKeep},
	}
	defer func(w int) { windowPairs = w }(windowPairs)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tt := range tests {
		wantA, wantPairs := refDetect(tt.rs, tt.threshold, tt.keep)
		want := marshal(t, wantA)
		var wantLines bytes.Buffer
		enc := json.NewEncoder(&wantLines)
		enc.SetEscapeHTML(false)
		for _, p := range wantPairs {
			if err := enc.Encode(p); err != nil {
				t.Fatal(err)
			}
		}
		for _, window := range []int{1 << 16, 1000, 1} {
			for _, procs := range []int{1, 3} {
				windowPairs = window
				runtime.GOMAXPROCS(procs)
				var lines bytes.Buffer
				got, err := Detect(tt.rs, Options{Threshold: tt.threshold, Keep: tt.keep, Each: NDJSON(&lines)})
				if err != nil {
					t.Fatal(err)
				}
				if g := marshal(t, got); !bytes.Equal(g, want) {
					t.Errorf("%s, windows of %d pairs, %d processors: the analysis differs from the reference:\n got %.600s\nwant %.600s", tt.name, window, procs, g, want)
				}
				if !bytes.Equal(lines.Bytes(), wantLines.Bytes()) {
					t.Errorf("%s, windows of %d pairs, %d processors: the NDJSON differs from the reference (%d bytes, want %d)", tt.name, window, procs, lines.Len(), wantLines.Len())
				}
				// Without Each, the lists are built without a Pair for
				// every pair: they must be the same.
				bare, err := Detect(tt.rs, Options{Threshold: tt.threshold, Keep: tt.keep})
				if err != nil {
					t.Fatal(err)
				}
				if g := marshal(t, bare); !bytes.Equal(g, want) {
					t.Errorf("%s, windows of %d pairs, %d processors, no Each: the analysis differs from the reference", tt.name, window, procs)
				}
			}
		}
		if tt.name == "notes" && (wantA.TotalConflicts <= DefaultKeep || wantA.TotalAgreements == 0 || len(wantA.ConflictThemes) == 0) {
			t.Fatalf("the notes give %d conflicts, %d agreements and themes %v: too few to test the lists", wantA.TotalConflicts, wantA.TotalAgreements, wantA.ConflictThemes)
		}
	}
}

func marshal(t testing.TB, a Analysis) []byte {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each answer is read as the reference reads it: the same excerpt, byte
// for byte, and the same marker counts, over generated notes and over
// texts made to catch the edges (invalid UTF-8, a cut at exactly
// ExcerptLength runes, phrases across punctuation and line breaks).
func TestReadMatchesTheReference(t *testing.T) {
	texts := []string{
		"", "   ", "but", "on the other hand", "on the\n other hand, as well as well", "on the. other hand",
		strings.Repeat("é", ExcerptLength), strings.Repeat("é", ExcerptLength+1),
		strings.Repeat("a", ExcerptLength-1) + "\xff" + "bc. risk",
		"\xff\xfe but \xc3 however" + strings.Repeat(" risk\x80", 60),
		strings.Repeat("x", 100) + "." + strings.Repeat("\xe2\x82", 80),
		"in line with\u00a0in line\u2003with; as_well as well2 as well",
	}
	for _, r := range corpusAnswers(t, 60, 9) {
		texts = append(texts, r.Response)
	}
	for _, r := range generated(60, 9) {
		texts = append(texts, r.Response)
	}
	for _, s := range texts {
		if got, want := excerpt(s), refExcerpt(s); got != want {
			t.Errorf("excerpt of %.80q is %q; the reference's is %q", s, got, want)
		}
		lower := strings.ToLower(s)
		c, a := countMarkers(lower)
		ws := words(lower)
		if rc, ra := refCountMarkers(lower, ws, conflictMarkers), refCountMarkers(lower, ws, agreementMarkers); c != rc || a != ra {
			t.Errorf("%.80q: %d conflict and %d agreement markers; the reference counts %d and %d", s, c, a, rc, ra)
		}
	}
	for r := rune(0); r < 0x300; r++ {
		if got, want := isWordRune(r), r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r); got != want {
			t.Errorf("isWordRune(%q) = %v, want %v", r, got, want)
		}
	}
}

// NDJSON writes any Pair as encoding/json does, also those Detect never
// makes: another type, tiny and huge floats, a source whose place is out
// of range, a source changed at the same place; a NaN fails as it does
// for encoding/json.
func TestNDJSONIsEncodingJSON(t *testing.T) {
	s1 := Source{AgentName: "a <b> & \"c\"", Perspective: "Critic", Excerpt: "line\nbreak \u2028 \xff", Index: 0}
	s2 := Source{AgentName: "b", Perspective: "Default", Excerpt: "x", Index: 7}
	changed := s2
	changed.Excerpt = "y"
	pairs := []Pair{
		{Type: TypeConflict, Confidence: 0.7, Source1: s1, Source2: s2, Similarity: 0.2, ConflictScore: 2},
		{Type: TypeAgreement, Confidence: 1, Source1: s1, Source2: s2, Similarity: 1e-7, AgreementScore: 9},
		{Type: "other", Confidence: 3e21, Source1: s1, Source2: changed, Similarity: 1.5e-300},
		{Type: TypeConflict, Confidence: -0.000001, Source1: Source{Index: -3}, Source2: Source{Index: maxCachedSources + 1}, Similarity: 123456789.125},
		{Type: TypeConflict, Confidence: 0.1 + 0.2, Source1: s2, Source2: changed, Similarity: 1.0 / 3},
	}
	var got, want bytes.Buffer
	each := NDJSON(&got)
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	for _, p := range pairs {
		if err := each(p); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want.String() {
		t.Errorf("NDJSON wrote\n%s\nencoding/json writes\n%s", got.String(), want.String())
	}
	if err := each(Pair{Type: TypeConflict, Confidence: math.NaN(), Source1: s1, Source2: s2}); err == nil {
		t.Error("a NaN confidence was written")
	}
}
