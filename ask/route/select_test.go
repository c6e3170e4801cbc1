package route

import (
	"math"
	"reflect"
	"testing"
)

func cand(id string, rel float64, sourceType, meetingType, quarter string) Candidate {
	f := map[string]string{}
	if sourceType != "" {
		f[FieldSourceType] = sourceType
	}
	if meetingType != "" {
		f[FieldMeetingType] = meetingType
	}
	if quarter != "" {
		f[FieldQuarter] = quarter
	}
	return Candidate{ID: id, Relevance: rel, Fields: f}
}

func ids(cs []Choice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) < eps }

// A source of a new type beats a slightly more relevant duplicate of one
// already chosen.
func TestSelectPrefersNewTypeOverDuplicate(t *testing.T) {
	cands := []Candidate{
		cand("t1", 10, "transcript", "", ""),
		cand("t2", 9.5, "transcript", "", ""),
		cand("r1", 9, "report", "", ""),
	}
	opts := DefaultDiversity()
	got := Select(cands, 2, opts)
	if !reflect.DeepEqual(ids(got), []string{"t1", "r1"}) {
		t.Fatalf("Select = %v, want [t1 r1]", ids(got))
	}
	// t1: 1.0 × 0.7 + 0.1 (new source type; the other fields are empty).
	if c := got[0]; !near(c.Normalized, 1) || !near(c.Bonus, 0.1) || !near(c.Score, 0.8) ||
		!reflect.DeepEqual(c.New, []string{FieldSourceType}) {
		t.Errorf("t1 = %+v", c)
	}
	// r1: 0.9 × 0.7 + 0.1 = 0.73, over t2's 0.95 × 0.7 = 0.665.
	if c := got[1]; !near(c.Normalized, 0.9) || !near(c.Bonus, 0.1) || !near(c.Score, 0.73) {
		t.Errorf("r1 = %+v", c)
	}
	// Without diversity, relevance alone decides.
	if got := Select(cands, 2, DiversityOptions{}); !reflect.DeepEqual(ids(got), []string{"t1", "t2"}) {
		t.Errorf("weight 0: %v, want [t1 t2]", ids(got))
	}
}

// A much more relevant duplicate still wins: the bonus is at most the weight.
func TestSelectRelevanceStillCounts(t *testing.T) {
	cands := []Candidate{
		cand("t1", 10, "transcript", "planning", "Q1 2026"),
		cand("t2", 9.9, "transcript", "planning", "Q1 2026"),
		cand("r1", 4, "report", "review", "Q2 2026"),
	}
	got := Select(cands, 2, DefaultDiversity())
	// t2: 0.99 × 0.7 = 0.693; r1: 0.4 × 0.7 + 0.3 = 0.58.
	if !reflect.DeepEqual(ids(got), []string{"t1", "t2"}) {
		t.Errorf("Select = %v, want [t1 t2]", ids(got))
	}
}

func TestSelectBonusPerField(t *testing.T) {
	cands := []Candidate{
		cand("a", 10, "transcript", "planning", "Q1 2026"),
		cand("b", 10, "transcript", "review", "Q1 2026"),     // one new value
		cand("c", 10, "report", "review", "Q2 2026"),         // three new values
		cand("d", 10, " Transcript ", "PLANNING", "q1 2026"), // none new (case and space aside)
	}
	got := Select(cands, 4, DiversityOptions{Weight: 0.3, Fields: []string{FieldSourceType, FieldMeetingType, FieldQuarter}})
	if !reflect.DeepEqual(ids(got), []string{"a", "c", "b", "d"}) {
		t.Fatalf("Select = %v", ids(got))
	}
	wantBonus := []float64{0.3, 0.3, 0, 0}
	for i, c := range got {
		if !near(c.Bonus, wantBonus[i]) || !near(c.Score, 0.7+wantBonus[i]) {
			t.Errorf("%s: bonus %v score %v, want bonus %v", c.ID, c.Bonus, c.Score, wantBonus[i])
		}
	}
}

func TestSelectTies(t *testing.T) {
	// Equal scores: higher relevance first, then the smaller ID; the input
	// order does not matter.
	a := []Candidate{cand("b", 5, "x", "", ""), cand("a", 5, "x", "", ""), cand("c", 6, "x", "", "")}
	b := []Candidate{a[2], a[0], a[1]}
	for _, in := range [][]Candidate{a, b} {
		if got := Select(in, 3, DefaultDiversity()); !reflect.DeepEqual(ids(got), []string{"c", "a", "b"}) {
			t.Errorf("Select(%v) = %v, want [c a b]", in, ids(got))
		}
	}
}

func TestSelectPoolAndEdges(t *testing.T) {
	var cands []Candidate
	for i, id := range []string{"a", "b", "c", "d", "e", "f"} {
		cands = append(cands, cand(id, 10-float64(i)/10, "transcript", "", ""))
	}
	cands[5].Fields[FieldSourceType] = "report" // f is diverse but least relevant
	// want 2 × multiple 2 = the 4 most relevant only: f is not considered.
	if got := Select(cands, 2, DefaultDiversity()); !reflect.DeepEqual(ids(got), []string{"a", "b"}) {
		t.Errorf("pool of 4: %v", ids(got))
	}
	// want 3 → pool 6: f's new type wins the second place.
	if got := Select(cands, 3, DefaultDiversity()); !reflect.DeepEqual(ids(got), []string{"a", "f", "b"}) {
		t.Errorf("pool of 6: %v", ids(got))
	}
	if p := DefaultDiversity().Pool(10); p != 20 {
		t.Errorf("Pool(10) = %d", p)
	}
	if p := (DiversityOptions{}).Pool(10); p != 10 {
		t.Errorf("zero Pool(10) = %d", p)
	}
	if got := Select(cands, 0, DefaultDiversity()); got != nil {
		t.Errorf("want 0: %v", got)
	}
	if got := Select(nil, 3, DefaultDiversity()); got != nil {
		t.Errorf("no candidates: %v", got)
	}
	if got := Select(cands[:2], 5, DefaultDiversity()); len(got) != 2 {
		t.Errorf("fewer candidates than wanted: %v", ids(got))
	}
}

func TestSelectOddInput(t *testing.T) {
	// Duplicated IDs count once, the more relevant; negative and NaN
	// relevance count as 0; a weight above 1 is 1.
	cands := []Candidate{
		cand("a", 2, "x", "", ""),
		cand("a", 8, "x", "", ""),
		cand("n", math.NaN(), "y", "", ""),
		cand("m", -3, "z", "", ""),
	}
	got := Select(cands, 5, DiversityOptions{Weight: 7, Fields: []string{FieldSourceType, FieldSourceType, ""}})
	if !reflect.DeepEqual(ids(got), []string{"a", "m", "n"}) {
		t.Fatalf("Select = %v", ids(got))
	}
	if got[0].Relevance != 8 || !near(got[0].Score, 1) || !near(got[1].Score, 1) {
		t.Errorf("scores: %+v", got)
	}
	// All relevance zero: diversity alone decides, with no NaN.
	got = Select([]Candidate{cand("a", 0, "x", "", ""), cand("b", 0, "x", "", ""), cand("c", 0, "y", "", "")}, 2, DefaultDiversity())
	if !reflect.DeepEqual(ids(got), []string{"a", "c"}) || math.IsNaN(got[0].Score) {
		t.Errorf("zero relevance: %+v", got)
	}
	got = Select([]Candidate{cand("inf", math.Inf(1), "x", "", ""), cand("b", 1, "y", "", "")}, 2, DefaultDiversity())
	for _, c := range got {
		if math.IsNaN(c.Score) {
			t.Errorf("+Inf relevance: %+v", got)
		}
	}
}

func TestSelectDeterministic(t *testing.T) {
	cands := []Candidate{
		cand("m1", 7, "transcript", "planning", "Q1 2026"),
		cand("m2", 7, "transcript", "review", "Q1 2026"),
		cand("m3", 6.5, "report", "planning", "Q2 2026"),
		cand("m4", 6.5, "document", "", "Q2 2026"),
		cand("m5", 6, "transcript", "standup", "Q3 2026"),
		cand("m6", 3, "report", "decision", "Q4 2026"),
	}
	first := Select(cands, 4, DefaultDiversity())
	for i := 0; i < 50; i++ {
		// Reverse the input every other time: the order must not matter.
		in := append([]Candidate(nil), cands...)
		if i%2 == 1 {
			for l, r := 0, len(in)-1; l < r; l, r = l+1, r-1 {
				in[l], in[r] = in[r], in[l]
			}
		}
		if got := Select(in, 4, DefaultDiversity()); !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d: %v, first %v", i, ids(got), ids(first))
		}
	}
	// Select does not change its input.
	if cands[0].ID != "m1" || cands[5].ID != "m6" {
		t.Error("input reordered")
	}
	if got := Sources(first); len(got) != 4 || got[0].ID != first[0].ID {
		t.Errorf("Sources = %v", got)
	}
}
