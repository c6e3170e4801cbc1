package route

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func dated(id, date string) Candidate {
	c := Candidate{ID: id, Fields: map[string]string{}}
	if date != "" {
		d, err := time.Parse("2006-01-02", date)
		if err != nil {
			panic(err)
		}
		c.Date = d
	}
	return c
}

// The historian, given an undated source by the rotation, reads it with
// the most relevant source of each quarter, in date order: it spans time
// instead of reading one undated file. The other roles keep their
// sources, and every source the rotation gave the historian is in its
// span.
func TestSpansHistorianReadsAcrossTime(t *testing.T) {
	srcs := []Candidate{
		dated("a", "2025-05-02"), // analyst
		dated("b", ""),           // historian, undated
		dated("c", "2025-01-10"), // synthesizer
		dated("d", "2025-05-20"), // analyst; Q2 again
		dated("e", "2025-08-01"), // historian
		dated("f", "2024-11-30"), // synthesizer
	}
	as := Assign(srcs, RolesFor(IntentTemporal), Rotating) // analyst, historian, synthesizer
	spans, out := Spans(srcs, as, nil)
	var h *Span
	for i := range spans {
		if spans[i].Role == RoleHistorian {
			h = &spans[i]
		}
	}
	if h == nil {
		t.Fatalf("no historian span in %+v", spans)
	}
	// Own: b and e. Added: one source of each quarter they do not cover
	// (e covers Q3 2025): a for Q2 2025, c for Q1 2025, f for Q4 2024;
	// d shares a's quarter. In date order, the undated b last.
	if want := []string{"f", "c", "a", "e", "b"}; !reflect.DeepEqual(h.Members, want) {
		t.Errorf("historian reads %v, want %v", h.Members, want)
	}
	if !reflect.DeepEqual(h.Own, []string{"b", "e"}) || h.Rule != "span-time" || h.Across != "time" {
		t.Errorf("span %+v", h)
	}
	if !strings.Contains(h.Why, "each other quarter") || !strings.Contains(h.Order, "date order") {
		t.Errorf("why %q, order %q", h.Why, h.Order)
	}
	for i, a := range out {
		if a.Role != as[i].Role || a.SourceID != as[i].SourceID {
			t.Errorf("assignment %d changed: %+v, was %+v", i, a, as[i])
		}
		inSpan := a.Role == RoleHistorian || a.Role == RoleSynthesizer
		if got := strings.Contains(a.Why, "read in one reading with"); got != inSpan {
			t.Errorf("assignment %d (%s): why %q", i, a.Role, a.Why)
		}
	}
}

// All the dated sources in one quarter: the historian spans months, and
// in one month, days.
func TestSpansHistorianFinerPeriods(t *testing.T) {
	srcs := []Candidate{dated("a", "2025-04-02"), dated("b", "2025-04-20"), dated("c", "2025-05-01"), dated("d", "2025-04-25")}
	as := []Assignment{{SourceID: "a", Role: RoleAnalyst}, {SourceID: "b", Role: RoleHistorian}, {SourceID: "c", Role: RoleAnalyst}, {SourceID: "d", Role: RoleAnalyst}}
	spans, _ := Spans(srcs, as, nil)
	if len(spans) != 1 || !reflect.DeepEqual(spans[0].Members, []string{"b", "c"}) || !strings.Contains(spans[0].Why, "month") {
		t.Errorf("by month: %+v", spans)
	}
	srcs[2] = dated("c", "2025-04-01")
	spans, _ = Spans(srcs, as, nil)
	if len(spans) != 1 || !reflect.DeepEqual(spans[0].Members, []string{"c", "a", "b", "d"}) || !strings.Contains(spans[0].Why, "day") {
		t.Errorf("by day: %+v", spans)
	}
}

// Without a dated source the historian has no time to read across: it
// reads its one source alone, and its assignment says why.
func TestSpansHistorianWithoutDates(t *testing.T) {
	srcs := []Candidate{dated("a", ""), dated("b", ""), dated("c", "")}
	as := Assign(srcs, RolesFor(IntentTemporal), Rotating)
	// The synthesizer's source c has two others to read with; the
	// historian's b has no other period.
	spans, out := Spans(srcs, as, nil)
	for _, sp := range spans {
		if sp.Role == RoleHistorian {
			t.Errorf("a historian span without dates: %+v", sp)
		}
	}
	if !strings.Contains(out[1].Why, "no source is dated") {
		t.Errorf("historian's why: %q", out[1].Why)
	}
}

// The synthesizer reads one source from each theme its own sources do not
// cover, the most relevant of each; without two themes, the most
// relevant other sources. Never more than SpanSize, unless its own are
// more.
func TestSpansSynthesizerReadsAcrossThemes(t *testing.T) {
	srcs := []Candidate{
		tagged("p1", "pricing"), tagged("p2", "pricing"), tagged("c1", "churn"),
		tagged("p3", "pricing"), tagged("c2", "churn"), tagged("l1", "launch"), tagged("l2", "launch"),
	}
	as := make([]Assignment, len(srcs))
	for i, s := range srcs {
		as[i] = Assignment{SourceID: s.ID, Role: RoleAnalyst}
	}
	as[1].Role = RoleSynthesizer // p2, of the pricing theme
	spans, _ := Spans(srcs, as, nil)
	if len(spans) != 1 {
		t.Fatalf("spans %+v", spans)
	}
	sp := spans[0]
	if want := []string{"p2", "c1", "l1"}; !reflect.DeepEqual(sp.Members, want) || sp.Across != "themes" || sp.Rule != "span-themes" {
		t.Errorf("synthesizer reads %v (%s), want %v across themes", sp.Members, sp.Why, want)
	}
	// Themes named for the corpus win over the tags.
	themes := []Theme{{Name: "Money", Tags: []string{"pricing", "churn"}}, {Name: "Launch", Tags: []string{"launch"}}}
	spans, _ = Spans(srcs, as, themes)
	if want := []string{"p2", "l1"}; len(spans) != 1 || !reflect.DeepEqual(spans[0].Members, want) || !strings.Contains(spans[0].Why, "Launch") {
		t.Errorf("with themes: %+v, want %v", spans, want)
	}

	// No tags: the most relevant other sources, up to SpanSize.
	plain := sources(9)
	as = Assign(plain, RolesFor(IntentComparative), Rotating) // synthesizer: s03, s06, s09
	spans, _ = Spans(plain, as, nil)
	if want := []string{"s01", "s02", "s03", "s06", "s09"}; len(spans) != 1 || !reflect.DeepEqual(spans[0].Members, want) || spans[0].Across != "sources" {
		t.Errorf("without themes: %+v, want %v", spans, want)
	}
	// Its own sources beyond SpanSize are all read, and nothing is added.
	plain = sources(20)
	as = Assign(plain, RolesFor(IntentComparative), Rotating)
	spans, _ = Spans(plain, as, nil)
	if len(spans) != 1 || len(spans[0].Members) != 6 || !reflect.DeepEqual(spans[0].Members, spans[0].Own) {
		t.Errorf("six own sources: %+v", spans)
	}
}

// Roles that read one source each have no span, and a strategy that gives
// no cross-source role (uniform) leaves the assignments as they were.
func TestSpansOnlyCrossSourceRoles(t *testing.T) {
	srcs := sources(6)
	as := Assign(srcs, RolesFor(IntentFactual), Rotating) // analyst, advocate, critic
	spans, out := Spans(srcs, as, nil)
	if len(spans) != 0 || !reflect.DeepEqual(out, as) {
		t.Errorf("spans %+v, assignments %+v", spans, out)
	}
	if !IsCrossSource(RoleHistorian) || !IsCrossSource(RoleSynthesizer) || IsCrossSource(RoleAnalyst) {
		t.Error("IsCrossSource")
	}
}

// DateOrder: by date, then by the quarter the metadata names, undated
// last, ties in their order.
func TestDateOrder(t *testing.T) {
	q := dated("q", "")
	q.Fields[FieldQuarter] = "Q1 2025"
	srcs := []Candidate{dated("late", "2025-06-01"), dated("none", ""), q, dated("early", "2024-12-31"), dated("same", "2025-06-01")}
	got := DateOrder([]string{"late", "none", "q", "early", "same", "unknown"}, srcs)
	if want := []string{"early", "q", "late", "same", "none", "unknown"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DateOrder = %v, want %v", got, want)
	}
}
