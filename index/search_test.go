package index

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func indexOf(t *testing.T, docs ...Doc) *Index {
	t.Helper()
	x, _ := openTemp(t)
	if _, err := x.Add(context.Background(), docs...); err != nil {
		t.Fatal(err)
	}
	return x
}

// rankingCorpus is a small hand-made corpus: one source with the query's
// terms in its title, one with them (more often, and newer) in its text
// only, and two identical sources of different dates.
var rankingCorpus = []Doc{
	{ID: "in-title", Title: "Pricing decision for the Q3 launch", Type: "meeting", Date: day("2024-07-01"),
		Text: "We met and agreed on the next steps for the launch. Marketing will prepare the announcement."},
	{ID: "in-text", Title: "Weekly sync", Type: "meeting", Date: day("2024-09-01"),
		Text: "Pricing came up again. The pricing decision is postponed until the pricing team reports on the decision."},
	{ID: "unrelated", Title: "Hiring plan", Type: "report", Date: day("2024-09-15"),
		Text: "We will hire two engineers this quarter."},
	{ID: "twin-a-older", Title: "Budget review", Type: "report", Date: day("2024-01-01"),
		Text: "The budget review for the quarter."},
	{ID: "twin-b-newer", Title: "Budget review", Type: "report", Date: day("2024-06-01"),
		Text: "The budget review for the quarter."},
	{ID: "undated", Title: "Budget review", Type: "report",
		Text: "The budget review for the quarter."},
}

func TestSearchRanking(t *testing.T) {
	ctx := context.Background()
	x := indexOf(t, rankingCorpus...)
	for _, tc := range []struct {
		name  string
		query string
		opts  SearchOptions
		want  []string
	}{
		{"terms in the title rank first", "What was the pricing decision?", SearchOptions{}, []string{"in-title", "in-text"}},
		{"title first without recency", "pricing decision", SearchOptions{RecencyWeight: -1}, []string{"in-title", "in-text"}},
		{"a strong recency bonus can outweigh the title", "pricing decision", SearchOptions{RecencyWeight: 0.3, HalfLife: 30 * 24 * time.Hour}, []string{"in-text", "in-title"}},
		{"recency breaks a tie toward the newer", "budget review", SearchOptions{}, []string{"twin-b-newer", "twin-a-older", "undated"}},
		{"without recency a tie goes by ID", "budget review", SearchOptions{RecencyWeight: -1}, []string{"twin-a-older", "twin-b-newer", "undated"}},
		{"limit", "budget", SearchOptions{Limit: 1}, []string{"twin-b-newer"}},
		{"any term matches", "hiring budget", SearchOptions{Limit: 10}, []string{"unrelated", "twin-b-newer", "twin-a-older", "undated"}},
		{"stemming", "engineer hired", SearchOptions{}, []string{"unrelated"}},
		{"no match", "kubernetes", SearchOptions{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := x.Search(ctx, tc.query, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, hitIDs(hits), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tc.query, diff)
			}
			for i, h := range hits {
				if h.BM25 >= 0 || h.Relevance <= 0 || h.Relevance > 1 {
					t.Errorf("%s: BM25 %v, Relevance %v", h.Doc.ID, h.BM25, h.Relevance)
				}
				if i > 0 && (h.Score() > hits[i-1].Score() || h.Score() == hits[i-1].Score() && h.Doc.ID < hits[i-1].Doc.ID) {
					t.Errorf("hits out of order at %d: %v", i, hitIDs(hits))
				}
				if h.Doc.Text == "" {
					t.Errorf("%s: hit without its text", h.Doc.ID)
				}
			}
		})
	}
}

func TestSearchScores(t *testing.T) {
	ctx := context.Background()
	x := indexOf(t, rankingCorpus...)
	w, half := 0.2, 30*24*time.Hour
	now := day("2024-06-01").Add(half) // twin-b is one half-life old
	hits, err := x.Search(ctx, "budget review", SearchOptions{RecencyWeight: w, HalfLife: half, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"twin-b-newer": w / 2,
		"twin-a-older": w * math.Exp2(-float64(now.Sub(day("2024-01-01")))/float64(half)),
		"undated":      0,
	}
	for _, h := range hits {
		if math.Abs(h.Recency-want[h.Doc.ID]) > 1e-12 {
			t.Errorf("%s: recency %v, want %v", h.Doc.ID, h.Recency, want[h.Doc.ID])
		}
		if h.Relevance != 1 {
			t.Errorf("%s: relevance %v, want 1 for identical sources", h.Doc.ID, h.Relevance)
		}
	}

	// Without Now the newest source in the index is the reference: here
	// "unrelated", 2024-09-15, which the query does not even match.
	hits, err = x.Search(ctx, "budget", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hits[0].Recency, DefaultRecencyWeight*math.Exp2(-float64(day("2024-09-15").Sub(day("2024-06-01")))/float64(DefaultHalfLife)); math.Abs(got-want) > 1e-12 {
		t.Errorf("recency %v, want %v", got, want)
	}

	// A source dated after Now gets the full bonus, no more.
	hits, err = x.Search(ctx, "hiring", SearchOptions{Now: day("2020-01-01")})
	if err != nil {
		t.Fatal(err)
	}
	if hits[0].Recency != DefaultRecencyWeight {
		t.Errorf("future source: recency %v", hits[0].Recency)
	}

	// Relevance is bm25 over the best bm25 of every match, whatever Limit.
	all, err := x.Search(ctx, "pricing decision", SearchOptions{RecencyWeight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Relevance != 1 || math.Abs(all[1].Relevance-all[1].BM25/all[0].BM25) > 1e-12 {
		t.Errorf("relevance: %+v", all)
	}
	one, err := x.Search(ctx, "pricing decision", SearchOptions{RecencyWeight: -1, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || one[0].Relevance != all[0].Relevance || one[0].BM25 != all[0].BM25 {
		t.Errorf("Limit changed the scores: %+v", one)
	}
}

func TestSearchHostileQueries(t *testing.T) {
	ctx := context.Background()
	x := indexOf(t,
		Doc{ID: "finance", Title: "Finance notes", Text: "The budget was discussed with hiring in mind."},
		Doc{ID: "letters", Title: "Letters", Text: "An alphabet primer."},
		Doc{ID: "unicode", Title: "Café Überprüfung", Text: "Résumé review: 日本語 テキスト."},
	)
	finance, letters, unicode := []string{"finance"}, []string{"letters"}, []string{"unicode"}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Quotes, balanced or not, are separators.
		{`"budget`, finance},
		{`budget"`, finance},
		{`"budget" "hiring"`, finance},
		{`"budget hiring"`, finance},
		{`""`, nil},
		{`"`, nil},
		// No prefix queries: alph* would match alphabet.
		{`alph*`, nil},
		{`alph *`, nil},
		{`*`, nil},
		// No NOT, no column exclusion: both would drop "finance".
		{`budget NOT hiring`, finance},
		{`budget -hiring`, finance},
		{`-budget`, finance},
		{`- {body} : budget`, finance},
		// No NEAR: budget and hiring are further apart than 1.
		{`NEAR(budget hiring, 1)`, finance},
		{`budget NEAR/1 hiring`, finance},
		{`NEAR`, nil},
		// No column filters: budget is in no title.
		{`title:budget`, finance},
		{`{title}:budget`, finance},
		{`title : budget`, finance},
		{`body:alphabet`, letters},
		// No initial-token queries: budget is not the first word.
		{`^budget`, finance},
		// Operators alone, parentheses, AND/OR.
		{`AND`, nil},
		{`OR OR`, nil},
		{`AND OR NOT NEAR`, nil},
		{`(budget`, finance},
		{`budget)`, finance},
		{`((budget OR`, finance},
		{`()`, nil},
		{`budget + hiring`, finance},
		{`budget AND alphabet`, []string{"finance", "letters"}},
		// Empty, blank, punctuation, stopwords.
		{``, nil},
		{"  \t\n ", nil},
		{`:-*^"(){}[]+,.;!?/\|<>=~@#$%&`, nil},
		{`what is the of and to`, nil},
		// Unicode: folded case and diacritics, scripts without spaces, symbols.
		{`überprüfung`, unicode},
		{`UBERPRUFUNG`, unicode},
		{`cafe`, unicode},
		{`résumé`, unicode},
		{`日本語`, unicode},
		{`テキスト`, unicode},
		{`🔥`, nil},
		{"\x00budget\xff", finance},
		{"bud\u200bget", nil}, // a zero-width space separates
		// SQL stays data.
		{`budget'; DROP TABLE docs; --`, finance},
		{`docs_fts`, nil},
		{`rank`, nil},
		{strings.Repeat("alphabet ", 10000), letters},
		{strings.Repeat("x", 100000), nil},
	} {
		hits, err := x.Search(ctx, tc.query, SearchOptions{})
		if err != nil {
			t.Errorf("Search(%.40q): %v", tc.query, err)
			continue
		}
		// What matches matters here, not in which order.
		if diff := cmp.Diff(tc.want, hitIDs(hits), cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("Search(%.40q) (-want +got):\n%s", tc.query, diff)
		}
	}
	if list, err := x.List(ctx); err != nil || len(list) != 3 {
		t.Errorf("after the queries: %d sources, %v", len(list), err)
	}
}

func TestMatchExpression(t *testing.T) {
	many := ""
	for i := range MaxTerms + 5 {
		many += " w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	for _, tc := range []struct{ query, want string }{
		{"", ""},
		{"the and of", ""},
		{"Pricing decision?", `"pricing" OR "decision"`},
		{`"pricing" AND decision*`, `"pricing" OR "decision"`},
		{"pricing pricing PRICING", `"pricing"`},
		{"title:q3 -launch", `"title" OR "q3" OR "launch"`},
		{"NEAR(a b)", `"b"`},
		{"Überprüfung 日本語", `"überprüfung" OR "日本語"`},
		{"don't", `"don"`},
		{"2024-Q3", `"2024" OR "q3"`},
	} {
		if got := MatchExpression(tc.query); got != tc.want {
			t.Errorf("MatchExpression(%q) = %s, want %s", tc.query, got, tc.want)
		}
	}
	if n := len(Terms(many)); n != MaxTerms {
		t.Errorf("%d terms kept, want %d", n, MaxTerms)
	}
}

// TestRankingReadsNoDocumentRow: ranking reads each match's date and ID
// from the docs_rank index instead of the document's row, and ranks
// exactly as the query that joined the rows did: the same sources in the
// same order, ties included, with the same scores to the last bit, over a
// generated corpus with identical sources (exact ties), undated ones, and
// every kind of query and option.
func TestRankingReadsNoDocumentRow(t *testing.T) {
	ctx := context.Background()
	docs := generate(3000)
	for i := 0; i < 300; i += 3 {
		twin := docs[i]
		twin.ID, twin.Hash = fmt.Sprintf("twin-%05d", i), ""
		if i%2 == 0 {
			twin.Date = time.Time{}
		}
		docs = append(docs, twin)
	}
	for i := 1; i < 3000; i += 97 {
		docs[i].Date = time.Time{}
	}
	x := indexOf(t, docs...)
	// rowQuery is the ranking as it was before docs_rank: every match's
	// row joined for its date and ID.
	rowQuery := fmt.Sprintf(`
WITH m(n, s) AS MATERIALIZED (
  SELECT rowid, bm25(docs_fts, %g, 1.0) FROM docs_fts WHERE docs_fts MATCH ?1
),
b(best) AS (SELECT min(s) FROM m),
r(now) AS (SELECT coalesce(?3, (SELECT unixepoch(max(date), 'subsec') FROM docs)))
SELECT m.n, m.s,
  CASE WHEN b.best < 0 THEN m.s / b.best ELSE 1.0 END AS relevance,
  CASE WHEN ?2 > 0 AND d.date IS NOT NULL AND r.now IS NOT NULL
    THEN ?2 * pow(0.5, max(0.0, r.now - unixepoch(d.date, 'subsec')) / ?4)
    ELSE 0.0 END AS recency
FROM m, b, r JOIN docs d ON d.n = m.n
ORDER BY relevance + recency DESC, d.id
LIMIT ?5`, TitleWeight)

	plan := func(query string) string {
		rows, err := x.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, `"x"`, 0.1, nil, 1.0, 10)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		return strings.Join(lines, "\n")
	}
	if p := plan(rankQuery); !strings.Contains(p, "USING COVERING INDEX docs_rank") {
		t.Errorf("the ranking does not read docs_rank alone:\n%s", p)
	}
	if p := plan(rowQuery); !strings.Contains(p, "INTEGER PRIMARY KEY") {
		t.Errorf("the reference query does not read the rows:\n%s", p)
	}

	type ranked struct {
		n                        int64
		bm25, relevance, recency float64
	}
	rank := func(query, expr string, args ...any) []ranked {
		rows, err := x.r.QueryContext(ctx, query, append([]any{expr}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []ranked
		for rows.Next() {
			var r ranked
			if err := rows.Scan(&r.n, &r.bm25, &r.relevance, &r.recency); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	now := float64(day("2024-03-01").Unix())
	ties := 0
	for _, q := range []string{
		"What did we decide about the discount for enterprise renewal contracts?",
		"orion42", "team meeting update", "billing", "kubernetes outage rollback",
	} {
		expr := MatchExpression(q)
		for _, args := range [][]any{
			{DefaultRecencyWeight, nil, DefaultHalfLife.Seconds()},
			{0.0, nil, DefaultHalfLife.Seconds()},
			{0.5, now, (30 * 24 * time.Hour).Seconds()},
		} {
			args := append(args, len(docs))
			want, got := rank(rowQuery, expr, args...), rank(rankQuery, expr, args...)
			if len(want) == 0 {
				t.Fatalf("%q matches nothing", q)
			}
			if len(got) != len(want) {
				t.Fatalf("%q %v: %d ranked, want %d", q, args, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%q %v: rank %d is %+v, want %+v", q, args, i, got[i], want[i])
				}
				if i > 0 && want[i].relevance+want[i].recency == want[i-1].relevance+want[i-1].recency {
					ties++
				}
			}
		}
	}
	if ties == 0 {
		t.Error("no tie was ranked: the corpus does not test the order of ties")
	}
}

// TestSearchLeavesOutCommonTerms: a query with a term most sources hold
// scores only the sources its rarer terms find when they are enough, and
// finds the hits a full scoring finds, in the same order, with scores
// within the common terms' share; otherwise it scores every match.
func TestSearchLeavesOutCommonTerms(t *testing.T) {
	ctx := context.Background()
	x := indexOf(t, generate(3000)...)
	var ranked []string
	testHookRank = func(expr string) { ranked = append(ranked, expr) }
	t.Cleanup(func() { testHookRank = nil })
	for _, c := range []struct {
		name, query string
		opts        SearchOptions
		narrowed    bool
	}{
		{"question", "What did we decide about the discount for enterprise renewal contracts?", SearchOptions{Limit: 30}, true},
		{"common and topical", "team meeting update on the kubernetes migration", SearchOptions{Limit: 64}, true},
		{"no recency", "team meeting update on the kubernetes migration", SearchOptions{Limit: 64, RecencyWeight: -1}, true},
		{"every term common", "team meeting update", SearchOptions{Limit: 30}, false},
		{"too few rare matches", "team meeting orion42", SearchOptions{Limit: 30}, false},
		{"recency could outrank", "team meeting update on the kubernetes migration", SearchOptions{Limit: 64, RecencyWeight: 5}, false},
		{"one term", "kubernetes", SearchOptions{Limit: 30}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ranked = nil
			got, err := x.Search(ctx, c.query, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			// A narrowed search ranks the rare terms alone, once; any
			// other ranks every term last.
			full := MatchExpression(c.query)
			if narrowed := len(ranked) == 1 && ranked[0] != full; narrowed != c.narrowed || ranked[len(ranked)-1] != full && !narrowed {
				t.Fatalf("ranked %q; narrowed %v, want %v", ranked, narrowed, c.narrowed)
			}
			// The reference: every match scored.
			tx, err := x.r.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			weight := c.opts.RecencyWeight
			if weight == 0 {
				weight = DefaultRecencyWeight
			}
			want, ns, err := rankMatches(ctx, tx, full, max(weight, 0), nil, DefaultHalfLife, c.opts.Limit)
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range ns {
				if err := tx.QueryRowContext(ctx, "SELECT id FROM docs WHERE n = ?", n).Scan(&want[i].Doc.ID); err != nil {
					t.Fatal(err)
				}
			}
			if len(got) != len(want) || len(got) == 0 {
				t.Fatalf("%d hits, want %d", len(got), len(want))
			}
			terms := Terms(c.query)
			for i := range want {
				g, w := got[i], want[i]
				if g.Doc.ID != w.Doc.ID {
					t.Fatalf("hit %d is %s, want %s", i, g.Doc.ID, w.Doc.ID)
				}
				if !c.narrowed && (g.BM25 != w.BM25 || g.Relevance != w.Relevance || g.Recency != w.Recency) {
					t.Fatalf("hit %d: %+v, want exactly %+v", i, g, w)
				}
				if d := math.Abs(g.BM25 - w.BM25); d > float64(len(terms))*commonIDF*bm25K1p1 {
					t.Errorf("hit %d: bm25 %v, want %v (within the common terms' share)", i, g.BM25, w.BM25)
				}
				if g.Recency != w.Recency || math.Abs(g.Relevance-w.Relevance) > 1e-4 {
					t.Errorf("hit %d: relevance %v + recency %v, want %v + %v", i, g.Relevance, g.Recency, w.Relevance, w.Recency)
				}
			}
		})
	}

	// An index of fewer than twice Limit sources is scored whole.
	small := indexOf(t, generate(100)...)
	ranked = nil
	q := "team meeting update on the kubernetes migration"
	if _, err := small.Search(ctx, q, SearchOptions{Limit: 64}); err != nil {
		t.Fatal(err)
	}
	if want := []string{MatchExpression(q)}; !slices.Equal(ranked, want) {
		t.Errorf("100 sources, 64 wanted: ranked %q, want %q", ranked, want)
	}
}
