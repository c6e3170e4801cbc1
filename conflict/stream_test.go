package conflict

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// generated returns n answers drawn from markers of both kinds and a small
// vocabulary, so that pairs of every type occur, many with the same
// confidence; one answer in nine is empty.
func generated(n int, seed uint64) []Response {
	rng := rand.New(rand.NewPCG(seed, 23))
	vocab := strings.Fields(`migration billing vendor contract license pilot savings budget
		quarter finance platform support security renewal customers invoices schedule`)
	markers := []string{"however", "but", "risk", "concern", "also", "confirms", "supports", "on the other hand", "as well"}
	roles := []string{"Analyst", "Critic", "Advocate", ""}
	rs := make([]Response, n)
	for i := range rs {
		var b strings.Builder
		if i%9 != 4 {
			for w := range 6 + rng.IntN(14) {
				if w > 0 {
					b.WriteByte(' ')
				}
				if rng.IntN(5) == 0 {
					b.WriteString(markers[rng.IntN(len(markers))])
				} else {
					b.WriteString(vocab[rng.IntN(len(vocab))])
				}
			}
			b.WriteByte('.')
		}
		rs[i] = Response{Response: b.String(), AgentName: fmt.Sprintf("note %d", i), Perspective: roles[i%len(roles)]}
	}
	return rs
}

// everyPair is northstar's detector as it was, every pair kept: the
// reference the bounded Analysis is checked against.
func everyPair(rs []Response, threshold float64) (conflicts, agreements []Pair) {
	as := make([]refAnswer, len(rs))
	for i, r := range rs {
		as[i] = refRead(i, r)
	}
	for i := range as {
		for j := i + 1; j < len(as); j++ {
			p, ok := refCompare(&as[i], &as[j], threshold)
			switch {
			case !ok:
			case p.Type == TypeConflict:
				conflicts = append(conflicts, p)
			default:
				agreements = append(agreements, p)
			}
		}
	}
	return conflicts, agreements
}

// northstarThemes is northstar's theme count over a list of conflicts,
// as the detector computed it when it kept them all.
func northstarThemes(conflicts []Pair) []string {
	out := []string{}
	var texts []string
	for _, c := range conflicts {
		texts = append(texts, c.Source1.Excerpt+" "+c.Source2.Excerpt)
	}
	freq := map[string]int{}
	var order []string
	for _, w := range strings.Fields(strings.ToLower(strings.Join(texts, " "))) {
		if utf8.RuneCountInString(w) <= 4 {
			continue
		}
		w = strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsMark(r) {
				return r
			}
			return -1
		}, w)
		if utf8.RuneCountInString(w) <= 4 || stopWords[w] {
			continue
		}
		if freq[w] == 0 {
			order = append(order, w)
		}
		freq[w]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return freq[b] - freq[a] })
	return append(out, order[:min(len(order), MaxThemes)]...)
}

// strongestOf is the reference for a bounded list: the keep pairs of the
// highest confidence, the earlier in the input first among equals, put
// back in the order of the input.
func strongestOf(ps []Pair, keep int) []Pair {
	s := slices.Clone(ps) // ps is in the order of the input
	slices.SortStableFunc(s, func(x, y Pair) int {
		switch {
		case x.Confidence > y.Confidence:
			return -1
		case x.Confidence < y.Confidence:
			return 1
		}
		return 0
	})
	s = s[:min(keep, len(s))]
	slices.SortFunc(s, func(x, y Pair) int { return inputOrder(&x, &y) })
	return append([]Pair{}, s...)
}

// The totals, the themes and the summary count every pair, as northstar's
// detector did, while each list holds at most Keep pairs: the strongest,
// in the order of the input. Each sees every pair in that order.
func TestDetectBoundsTheLists(t *testing.T) {
	tests := []struct {
		n, keep   int
		threshold float64
	}{
		{n: 2, keep: DefaultKeep, threshold: DefaultThreshold},
		{n: 12, keep: DefaultKeep, threshold: DefaultThreshold},
		{n: 40, keep: 0, threshold: DefaultThreshold},
		{n: 40, keep: 1, threshold: DefaultThreshold},
		{n: 40, keep: 7, threshold: 0.3},
		{n: 90, keep: 50, threshold: 0.6},
		{n: 120, keep: DefaultKeep, threshold: DefaultThreshold},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d answers, keep %d, threshold %v", tt.n, tt.keep, tt.threshold), func(t *testing.T) {
			rs := generated(tt.n, uint64(tt.n))
			conflicts, agreements := everyPair(rs, tt.threshold)
			var seen []Pair
			got, err := Detect(rs, Options{Threshold: tt.threshold, Keep: tt.keep, Each: func(p Pair) error {
				seen = append(seen, p)
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if got.TotalConflicts != len(conflicts) || got.TotalAgreements != len(agreements) {
				t.Errorf("totals %d conflicts, %d agreements; every pair gives %d, %d", got.TotalConflicts, got.TotalAgreements, len(conflicts), len(agreements))
			}
			if len(got.Conflicts) > tt.keep || len(got.Agreements) > tt.keep {
				t.Errorf("the lists hold %d conflicts and %d agreements, more than %d", len(got.Conflicts), len(got.Agreements), tt.keep)
			}
			if diff := cmp.Diff(strongestOf(conflicts, tt.keep), got.Conflicts); diff != "" {
				t.Errorf("conflicts listed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(strongestOf(agreements, tt.keep), got.Agreements); diff != "" {
				t.Errorf("agreements listed (-want +got):\n%s", diff)
			}
			wantTruncated := len(conflicts) > tt.keep || len(agreements) > tt.keep
			if got.Truncated != wantTruncated || got.HasConflicts != (len(conflicts) > 0) {
				t.Errorf("truncated %v, hasConflicts %v; want %v, %v", got.Truncated, got.HasConflicts, wantTruncated, len(conflicts) > 0)
			}
			if diff := cmp.Diff(northstarThemes(conflicts), got.ConflictThemes); diff != "" {
				t.Errorf("themes (-northstar +got):\n%s", diff)
			}
			if want := summary(len(conflicts), len(agreements)); got.Summary != want {
				t.Errorf("summary %q, want %q", got.Summary, want)
			}
			all := append(slices.Clone(conflicts), agreements...)
			slices.SortStableFunc(all, func(x, y Pair) int { return inputOrder(&x, &y) })
			if diff := cmp.Diff(all, seen); diff != "" {
				t.Errorf("the pairs Each saw (-every pair +seen):\n%s", diff)
			}
		})
	}
	// The larger cases must have truncated something, or they test
	// nothing.
	rs := generated(120, 120)
	if c, a := everyPair(rs, DefaultThreshold); len(c) <= DefaultKeep || len(a) <= DefaultKeep {
		t.Fatalf("120 answers give %d conflicts and %d agreements; the test needs more than %d of each", len(c), len(a), DefaultKeep)
	}
}

// NDJSON writes every pair, one JSON line each, in the order of the
// input, whatever the lists keep.
func TestNDJSONHoldsEveryPair(t *testing.T) {
	rs := generated(60, 7)
	rs[3].Response = "A line\nbreak, a \u2028 separator and <b>markup</b>, but a risk."
	var buf bytes.Buffer
	a, err := Detect(rs, Options{Threshold: DefaultThreshold, Keep: 5, Each: NDJSON(&buf)})
	if err != nil {
		t.Fatal(err)
	}
	conflicts, agreements := everyPair(rs, DefaultThreshold)
	want := append(conflicts, agreements...)
	slices.SortStableFunc(want, func(x, y Pair) int { return inputOrder(&x, &y) })
	var got []Pair
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var p Pair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("line %d: %v: %s", len(got)+1, err, sc.Bytes())
		}
		got = append(got, p)
	}
	if len(got) != a.TotalConflicts+a.TotalAgreements || len(got) != len(want) {
		t.Fatalf("%d lines; the analysis counts %d pairs, and there are %d", len(got), a.TotalConflicts+a.TotalAgreements, len(want))
	}
	// The index of a source is not written; the rest is the pair.
	for i := range want {
		want[i].Source1.Index, want[i].Source2.Index = 0, 0
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the NDJSON pairs (-want +got):\n%s", diff)
	}
	if !a.Truncated || len(a.Conflicts) != 5 || len(a.Agreements) != 5 {
		t.Errorf("truncated %v, %d conflicts and %d agreements listed; want 5 of each", a.Truncated, len(a.Conflicts), len(a.Agreements))
	}
}

// The same answers give the same analysis and the same lines, byte for
// byte, however often they are compared.
func TestDetectIsDeterministic(t *testing.T) {
	rs := generated(80, 80)
	run := func() ([]byte, []byte) {
		var lines bytes.Buffer
		a, err := Detect(rs, Options{Threshold: DefaultThreshold, Keep: 20, Each: NDJSON(&lines)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return b, lines.Bytes()
	}
	a1, l1 := run()
	for range 3 {
		a2, l2 := run()
		if !bytes.Equal(a1, a2) || !bytes.Equal(l1, l2) {
			t.Fatal("two runs over the same answers differ")
		}
	}
}

// An error of Each stops the comparison and is Detect's.
func TestDetectStopsOnEachError(t *testing.T) {
	stop := errors.New("disk full")
	calls := 0
	_, err := Detect(generated(30, 3), Options{Threshold: DefaultThreshold, Keep: DefaultKeep, Each: func(Pair) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("error %v after %d pairs; want %v after 3", err, calls, stop)
	}
}
