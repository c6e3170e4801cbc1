package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Search defaults.
const (
	// DefaultLimit is the number of hits Search returns when
	// SearchOptions.Limit is 0.
	DefaultLimit = 10
	// DefaultRecencyWeight is the recency bonus of a source as new as the
	// reference time, against a Relevance of at most 1.
	DefaultRecencyWeight = 0.1
	// DefaultHalfLife is the age at which the recency bonus has halved:
	// two quarters.
	DefaultHalfLife = 182 * 24 * time.Hour
	// TitleWeight is the weight of a match in a source's title against a
	// match in its text (weight 1) in the bm25() ranking.
	TitleWeight = 4.0
	// MaxTerms is the number of distinct search terms a query keeps; the
	// rest are ignored.
	MaxTerms = 32
)

// SearchOptions tune Search. The zero value searches with the defaults.
type SearchOptions struct {
	// Limit is the most hits returned; 0 means DefaultLimit.
	Limit int
	// RecencyWeight is the bonus of a source dated at the reference time;
	// 0 means DefaultRecencyWeight and a negative weight turns the bonus
	// off.
	RecencyWeight float64
	// HalfLife is the age at which the bonus has halved; 0 means
	// DefaultHalfLife.
	HalfLife time.Duration
	// Now is the reference time ages are counted from. When zero it is the
	// newest Date in the index, so that the ranking of a corpus does not
	// change with the day it is searched on.
	Now time.Time
}

// Hit is one source Search found.
type Hit struct {
	Doc Doc `json:"doc"`
	// BM25 is SQLite's bm25() of the source for the query: negative, and
	// lower for a better match.
	BM25 float64 `json:"bm25"`
	// Relevance is BM25 normalised over every source the query matches:
	// BM25 divided by the best (lowest) BM25, in (0, 1], 1 for the best
	// match. It does not depend on Limit.
	Relevance float64 `json:"relevance"`
	// Recency is the bonus for the source's Date, in [0, RecencyWeight].
	Recency float64 `json:"recency"`
}

// Score is what hits are ranked by: Relevance + Recency.
func (h Hit) Score() float64 { return h.Relevance + h.Recency }

// Search returns the sources that match query, best first, at most
// opts.Limit of them.
//
// The query is plain text, never FTS5 syntax: [Terms] takes its words, and
// a source matches when it contains any of them (after Porter stemming, case
// and diacritics folded), ranked by bm25() over its title (weighted
// TitleWeight) and text. A query with no terms (empty, only stopwords or
// punctuation) matches nothing and is no error.
//
// Each match gets a recency bonus
//
//	Recency = RecencyWeight × 0.5^(age / HalfLife),  age = max(0, Now − Date)
//
// (0 for a source without a Date), and hits are sorted by Relevance +
// Recency, descending, ties by ID. With the defaults a source two quarters
// older than another gets 0.05 less, so recency decides between sources of
// about equal relevance and does not outweigh a clearly better match.
//
// A term found in at least half of the indexed sources has next to no
// weight in bm25(): SQLite gives it an IDF of 10⁻⁶. When the query's other
// terms find at least Limit sources that score higher than any source
// matching only such common terms could (see [commonBound]), the sources
// matching only common terms are not scored, and each hit's BM25 leaves
// out the common terms' share: less than 2.2×10⁻⁶ a term, at most 10⁻⁴
// of the best match's. The hits are the ones a full scoring finds, in its
// order except between scores that close. Over 10,000 notes whose words
// are mostly common this scores a seventh of the matches.
func (x *Index) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	terms := Terms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	weight := opts.RecencyWeight
	switch {
	case weight == 0:
		weight = DefaultRecencyWeight
	case weight < 0:
		weight = 0
	}
	halfLife := opts.HalfLife
	if halfLife <= 0 {
		halfLife = DefaultHalfLife
	}

	// The ranking runs in SQLite: every match's bm25() is computed once
	// into a temporary table, normalised by the best, given its recency
	// bonus, and sorted; only the best limit rows come back, and then those
	// sources in full. Both queries read one snapshot.
	tx, err := x.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	defer tx.Rollback()
	var now any // seconds since the epoch; NULL for the newest date in the index
	if !opts.Now.IsZero() {
		now = float64(opts.Now.Unix()) + float64(opts.Now.Nanosecond())/1e9
	}
	rank := func(terms []string) ([]Hit, []any, error) {
		return rankMatches(ctx, tx, orOf(terms), weight, now, halfLife, limit)
	}
	rare, common, err := splitCommon(ctx, tx, terms, limit)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	var hits []Hit
	var ns []any
	if len(rare) > 0 && common > 0 {
		if hits, ns, err = rank(rare); err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		if len(hits) < limit || !commonBound(hits[len(hits)-1], hits[0], common, weight) {
			hits = nil
		}
	}
	if hits == nil {
		if hits, ns, err = rank(terms); err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
	}
	if len(hits) == 0 {
		return nil, nil
	}

	rows, err := tx.QueryContext(ctx, "SELECT n, "+docColumns+" FROM docs WHERE n IN (?"+strings.Repeat(", ?", len(ns)-1)+")", ns...)
	if err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	defer rows.Close()
	docs := make(map[int64]Doc, len(ns))
	for rows.Next() {
		var n int64
		d, err := scanDoc(rows, &n)
		if err != nil {
			return nil, fmt.Errorf("index: search: %w", err)
		}
		docs[n] = d
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("index: search: %w", err)
	}
	for i := range hits {
		hits[i].Doc = docs[ns[i].(int64)]
	}
	return hits, nil
}

// rankMatches runs rankQuery for the FTS5 expression expr: the best limit
// matches, and their rowids.
func rankMatches(ctx context.Context, tx *sql.Tx, expr string, weight float64, now any, halfLife time.Duration, limit int) ([]Hit, []any, error) {
	if testHookRank != nil {
		testHookRank(expr)
	}
	rows, err := tx.QueryContext(ctx, rankQuery, expr, weight, now, halfLife.Seconds(), limit)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var hits []Hit
	var ns []any
	for rows.Next() {
		var h Hit
		var n int64
		if err := rows.Scan(&n, &h.BM25, &h.Relevance, &h.Recency); err != nil {
			return nil, nil, err
		}
		hits = append(hits, h)
		ns = append(ns, n)
	}
	return hits, ns, rows.Err()
}

// testHookRank, when set, is told each expression a search ranks.
var testHookRank func(expr string)

// bm25 constants of SQLite's FTS5: the IDF it gives a term found in at
// least half of the rows, and k1 + 1, which bounds a term's share of a
// row's bm25() to its IDF times that.
const (
	commonIDF = 1e-6
	bm25K1p1  = 1.2 + 1
)

// splitCommon sorts the terms by how many indexed sources hold them: rare
// are those in fewer than half of them (each has an IDF above 0 in bm25()),
// and common counts the others that some source holds. Terms no source
// holds are rare: they cost nothing to match. An index of fewer than
// 2 × limit sources is not looked at (all terms are rare): scoring every
// match costs less there than counting.
func splitCommon(ctx context.Context, tx *sql.Tx, terms []string, limit int) (rare []string, common int, err error) {
	if len(terms) < 2 {
		return terms, 0, nil
	}
	var total int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM docs_fts_docsize").Scan(&total); err != nil {
		return nil, 0, err
	}
	if total < 2*int64(limit) {
		return terms, 0, nil
	}
	// A term's sources are counted up to half of them: past that it is
	// common, however many more hold it.
	half := (total + 1) / 2
	cols := make([]string, len(terms))
	args := make([]any, len(terms))
	held := make([]int64, len(terms))
	counts := make([]any, len(terms))
	for i, t := range terms {
		cols[i] = fmt.Sprintf("(SELECT count(*) FROM (SELECT 1 FROM docs_fts WHERE docs_fts MATCH ?%d LIMIT %d))", i+1, half)
		args[i], counts[i] = orOf([]string{t}), &held[i]
	}
	if err := tx.QueryRowContext(ctx, "SELECT "+strings.Join(cols, ", "), args...).Scan(counts...); err != nil {
		return nil, 0, err
	}
	for i, t := range terms {
		if n := held[i]; n > 0 && n >= half {
			common++
			continue
		}
		rare = append(rare, t)
	}
	return rare, common, nil
}

// commonBound reports whether last, the last of the hits a search of the
// rare terms found, outranks every source that holds only the query's
// common terms (common of them), best being the first hit. Such a source's
// bm25() is above −common × commonIDF × bm25K1p1 (= −d), so its Relevance is
// below d / |best| and its Score below that plus the recency weight; last's
// Relevance over every match is at least its Relevance here times |best| /
// (|best| + d), since scoring the common terms too can lower the best
// bm25() by d at most. It also asks that d be at most 10⁻⁴ of |best|, so
// that the scores the rare terms give are those of a full scoring to that
// precision.
func commonBound(last, best Hit, common int, weight float64) bool {
	if best.BM25 >= 0 || best.Relevance <= 0 {
		return false
	}
	b := -best.BM25 / best.Relevance // |min bm25()|
	d := float64(common) * commonIDF * bm25K1p1
	if d > 1e-4*b {
		return false
	}
	return last.Relevance*b/(b+d)+last.Recency > d/b+max(weight, 0)
}

// rankQuery ranks the matches of an FTS5 expression (?1) with a recency
// weight (?2), a reference time in seconds since the epoch (?3, NULL for
// the newest date in the index) and a half-life in seconds (?4), and
// returns the best ?5 as (n, bm25, relevance, recency). bm25() is negative,
// lower for a better match, so relevance = bm25 / min(bm25) lies in (0, 1].
// Each match's date and ID, which the order needs besides its score, are
// read from the index docs_rank, which holds them by rowid: a document's
// row holds its body too, and reading every match's row made a search of
// 10,000 notes take 75 ms, where it takes 30 without.
var rankQuery = fmt.Sprintf(`
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
FROM m, b, r JOIN docs d INDEXED BY docs_rank ON d.n = m.n
ORDER BY relevance + recency DESC, d.id
LIMIT ?5`, TitleWeight)

// Terms returns the search terms of a plain-text query, in order: its words
// (maximal runs of letters, digits and combining marks; everything else
// separates words, so FTS5 syntax such as quotes, *, -, ^, :, parentheses
// and braces is only a separator), lowercased, without stopwords (common
// English words and the FTS5 operators AND, OR, NOT and NEAR), each once, at
// most MaxTerms of them.
func Terms(query string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(query, func(r rune) bool { return !isWordRune(r) }) {
		w = strings.ToLower(w)
		if stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		terms = append(terms, w)
		if len(terms) == MaxTerms {
			break
		}
	}
	return terms
}

// MatchExpression is the FTS5 expression Search runs for a plain-text
// query: each of its Terms quoted as a string, joined by OR; "" when the
// query has no terms. A term holds only letters, digits and marks, so it
// never contains a quote and the expression is never anything but a list
// of alternatives.
func MatchExpression(query string) string {
	return orOf(Terms(query))
}

// orOf is the FTS5 expression that matches any of terms (see
// MatchExpression).
func orOf(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(`"` + t + `"`)
	}
	return b.String()
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// stopwords are words too common to help find a source, and the FTS5
// operators.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		and or not near
		a an the this that these those there here
		i me my we us our you your he him his she her it its they them their
		am is are was were be been being
		do does did done doing have has had having
		will would shall should can could may might must
		of in on at by for with about into onto from to as than then so if
		what which who whom whose when where why how
		all any both each few more most some such no nor only own same too very
		just also again further once out over under up down off
		s t`) {
		m[w] = true
	}
	return m
}()
