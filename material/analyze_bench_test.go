package material

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// largeDiff is rendered diff material of files×lines added lines of Go, as
// review's benchmarks generate it, with a few security words, mixed-case
// identifiers and removed lines among them.
func largeDiff(files, lines int) *Material {
	m := &Material{Type: TypeDiff}
	for f := range files {
		var b strings.Builder
		fmt.Fprintf(&b, "## svc%02d/handler%03d.go (added, +%d)\n", f%20, f, lines)
		for l := 1; l <= lines; l++ {
			switch {
			case l%8 == 0:
				fmt.Fprintf(&b, "%6d +| // Handle%d_%d validates request field %d before its session token is stored.\n", l, f, l, l)
			case l%37 == 0:
				fmt.Fprintf(&b, "       -| func oldHTTPHandler%d(w http.ResponseWriter, r *http.Request) { r.FormValue(\"x\") }\n", l)
			default:
				fmt.Fprintf(&b, "%6d +| func Handle%d_%d(v int) int { if v < %d { return %d }; return v * %d }\n", l, f, l, l, l, f+1)
			}
		}
		m.Files = append(m.Files, File{Path: fmt.Sprintf("svc%02d/handler%03d.go", f%20, f), Status: StatusAdded, Language: "go", Text: b.String(), Additions: lines})
	}
	return m
}

// BenchmarkAnalyze: the signals of a 50,000-line diff (250 files of 200
// lines), which review reads before choosing lenses (Categorize) or
// specialists (Analyze), on the way to its first request. Reported:
// milliseconds per analysis.
func BenchmarkAnalyze(b *testing.B) {
	m := largeDiff(250, 200)
	for _, f := range []struct {
		name    string
		analyze func() Signals
	}{{"Analyze", m.Analyze}, {"Categorize", m.Categorize}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.analyze()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/analysis")
		})
	}
}

// Categorize finds what Analyze finds but the keywords.
func TestCategorizeIsAnalyzeWithoutKeywords(t *testing.T) {
	m := largeDiff(20, 50)
	full, cats := m.Analyze(), m.Categorize()
	if len(full.Keywords) == 0 || len(cats.Keywords) != 0 {
		t.Fatalf("keywords: Analyze %d, Categorize %d", len(full.Keywords), len(cats.Keywords))
	}
	full.Keywords = cats.Keywords
	if fmt.Sprint(full) != fmt.Sprint(cats) {
		t.Errorf("Categorize differs from Analyze:\n%v\n%v", cats, full)
	}
}

// referenceWords is addWords and trustMatch's word rule as they were first
// written, word by word: the words a line adds to the counts, and its
// first trust word.
func referenceWords(text string, counts map[string]int) (trust string) {
	for _, id := range identifiers(text) {
		words := []string{strings.ToLower(id)}
		if parts := splitIdentifier(id); len(parts) > 1 {
			words = append(words, parts...)
		}
		for _, w := range words {
			if trust == "" && isTrustWord([]byte(w)) {
				trust = w
			}
			if len(w) >= 3 && !stopWords[w] {
				counts[w]++
			}
		}
	}
	return trust
}

// The word counts and trust words of addWords are those of the plain
// word-by-word rule, on ASCII, Unicode, long and many-part identifiers.
func TestAddWordsMatchesTheReference(t *testing.T) {
	lines := []string{
		"func Handle12_3(v int) int { if v < 3 { return 3 }; return v * 4 }",
		"// Handle1_8 validates request field 8 before its session token is stored.",
		"parseHTTPRequest, userID, XMLHttpRequest, __init__, _x, a_b_c, HTTPServer2Go",
		"ÜberToken größeSession naïveAuth ΑΒΓδεζ jwtSecret oauth2Client",
		"a_b_c_d_e_f_g_h_i_j_k_l_m_n_o_p_q_r_s_t_u_v_w_x_y_z aVeryLongIdentifierThatIsMuchLongerThanSixtyFourBytesAndKeepsGoingOnAndOnForever",
		"PASSWORD = os.Getenv(\"API_KEY\") // the ApiKey of the CSRFToken and the JWT",
		"", "123 456", "x", "the and for with",
	}
	got := &analysis{keywords: true}
	want := map[string]int{}
	for _, l := range lines {
		if g, w := got.addWords(l), referenceWords(l, want); g != w {
			t.Errorf("trust word of %q: got %q, want %q", l, g, w)
		}
	}
	gotCounts := map[string]int{}
	for w, i := range got.wordAt {
		gotCounts[w] = got.wordCount[i]
	}
	if fmt.Sprint(gotCounts) != fmt.Sprint(want) {
		t.Errorf("word counts:\n got %v\nwant %v", gotCounts, want)
	}
}

// topKeywords keeps the most frequent words, ties broken alphabetically,
// as sorting every word would.
func TestTopKeywordsMatchesSorting(t *testing.T) {
	a := &analysis{keywords: true}
	for i := range 3000 {
		a.addWords(fmt.Sprintf("word%d common%d rare%dx", i%7, i%300, i))
	}
	for _, n := range []int{1, 10, 200, 5000} {
		words := map[string]int{}
		for w, i := range a.wordAt {
			words[w] = a.wordCount[i]
		}
		keys := slices.Collect(maps.Keys(words))
		slices.SortFunc(keys, func(x, y string) int {
			if words[x] != words[y] {
				return words[y] - words[x]
			}
			return strings.Compare(x, y)
		})
		want := map[string]int{}
		for _, k := range keys[:min(n, len(keys))] {
			want[k] = words[k]
		}
		if got := topKeywords(a.wordAt, a.wordCount, n); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("top %d: got %v, want %v", n, got, want)
		}
	}
}

// keyHits finds the rules whose keys a line holds, lower-cased, as
// searching the lower-cased line for each key does.
func TestKeyHitsMatchesSearching(t *testing.T) {
	lines := []string{
		`http.HandleFunc("/x", h)`, `SELECT * FROM t`, `r.FormValue("a")`, `exec.Command("ls")`, `os.Getenv("HOME")`,
		`json.Marshal(v)`, `@app.route("/")`, `$_GET['x']`, `CREATE TABLE x`, `func Handle1_2(v int) int { return v }`,
		"ÜberFile JSON \u212a token", `Database/SQL`, `x := fs.readFile()`, `.URL.Query()`, `ChildProcess child_process`, "",
		`eval(x) spawn(y) Popen( system(`, `the quick brown fox`, `raw( Raw(`, `( "/`, "(`/", `('/`,
	}
	for _, l := range lines {
		lower := strings.ToLower(l)
		var want uint32
		for _, r := range keyedRules {
			for _, k := range r.keys {
				if strings.Contains(lower, k) {
					want |= r.bit
				}
			}
		}
		if got := keyHits(l); got != want {
			t.Errorf("keyHits(%q) = %b, want %b", l, got, want)
		}
	}
}
