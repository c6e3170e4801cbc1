package eval

import (
	"math"
	"strings"
	"testing"
)

const goodCase = `A query built by concatenation.
-- case.yaml --
id: t-sql
language: go
kind: defect
summary: Look users up by name.
defects:
  - file: users.go
    lines: [3, 4]
    category: injection
    description: The name is concatenated into the SQL.
-- before/go.mod --
module example.com/t
-- after/users.go --
package t

func Q(name string) string {
	return "SELECT * FROM users WHERE name = '" + name + "'"
}
`

// A case that cannot be scored is refused with what is wrong and where.
func TestParseRefusesBadCases(t *testing.T) {
	if _, err := Parse("good.txtar", []byte(goodCase)); err != nil {
		t.Fatalf("a good case: %v", err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"unknown category", "category: injection", "category: sqli", `category "sqli" is not one of`},
		{"lines past the end", "lines: [3, 4]", "lines: [3, 40]", "run past the end of users.go (5 lines)"},
		{"a file not in the change", "file: users.go", "file: other.go", "other.go is not a file of the changed repository"},
		{"a clean case with a defect", "kind: defect", "kind: clean", "a clean case plants 1 defect"},
		{"an unknown kind", "kind: defect", "kind: maybe", `kind "maybe"`},
		{"no case.yaml", "-- case.yaml --", "-- notes.yaml --", `"notes.yaml" is neither case.yaml`},
		{"a path out of the repository", "-- after/users.go --", "-- after/../users.go --", "is not a plain relative path"},
		{"lines backwards", "lines: [3, 4]", "lines: [4, 3]", "give [start, end]"},
	} {
		_, err := Parse("bad.txtar", []byte(strings.Replace(goodCase, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// A finding finds a defect when it names its file, lines within the
// tolerance, and a compatible category; the first such finding finds it,
// a second is no false finding, and any other is.
func TestMatchFindings(t *testing.T) {
	c, err := Parse("good.txtar", []byte(goodCase))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		findings  []Finding
		found     int
		tru, fals int
	}{
		{"exact", []Finding{{File: "users.go", Start: 4, End: 4, Category: "SQL injection"}}, 1, 1, 0},
		{"a line off, a broad category", []Finding{{File: "./users.go", Start: 6, Category: "security"}}, 1, 1, 0},
		{"too far", []Finding{{File: "users.go", Start: 9, Category: "injection"}}, 0, 0, 1},
		{"another file", []Finding{{File: "db.go", Start: 4, Category: "injection"}}, 0, 0, 1},
		{"an incompatible category", []Finding{{File: "users.go", Start: 4, Category: "naming", Claim: "Q is a poor name."}}, 0, 0, 1},
		{"the claim says it", []Finding{{File: "users.go", Start: 4, Category: "other", Claim: "The name reaches the query unescaped."}}, 1, 1, 0},
		{"twice, and one false", []Finding{{File: "users.go", Start: 3, Category: "injection"}, {File: "users.go", Start: 4, End: 4, Category: "security"},
			{File: "go.mod", Start: 1, Category: "style"}}, 1, 2, 1},
		{"no line", []Finding{{File: "users.go", Category: "injection"}}, 0, 0, 1},
	} {
		m := MatchFindings(c, tt.findings)
		if m.Found() != tt.found || m.True() != tt.tru || m.False() != tt.fals {
			t.Errorf("%s: found %d, true %d, false %d; want %d, %d, %d", tt.name, m.Found(), m.True(), m.False(), tt.found, tt.tru, tt.fals)
		}
	}
}

// The figures of a mode, and their intervals: the same outcomes give the
// same intervals, and a figure the cases leave undefined is n/a.
func TestSummarize(t *testing.T) {
	os := []Outcome{
		{Case: "a", Defects: 1, Found: 1, True: 1, CostUSD: 0.02},
		{Case: "b", Defects: 1, Found: 0, False: 1, CostUSD: 0.02},
		{Case: "c", Clean: true, False: 2, CostUSD: 0.01},
		{Case: "d", Clean: true, CostUSD: 0.01},
	}
	f := Summarize(os, 1)
	if f.Recall.Value != 0.5 || f.Precision.Value != 0.25 || math.Abs(f.F1.Value-1.0/3) > 1e-9 || f.FalsePerCleanCase.Value != 1 {
		t.Fatalf("figures %+v", f)
	}
	if f.Recall.Low > f.Recall.Value || f.Recall.High < f.Recall.Value || f.Recall.Low < 0 || f.Recall.High > 1 {
		t.Errorf("recall's interval %+v does not hold its value", f.Recall)
	}
	if math.Abs(f.CostPerTrueFinding-0.06) > 1e-9 {
		t.Errorf("cost per true finding %v, want 0.06", f.CostPerTrueFinding)
	}
	if g := Summarize(os, 1); g.Recall != f.Recall || g.F1 != f.F1 {
		t.Error("the same outcomes gave other intervals")
	}
	none := Summarize([]Outcome{{Case: "c", Clean: true}}, 1)
	if !math.IsNaN(none.Recall.Value) || !math.IsNaN(none.Precision.Value) {
		t.Errorf("a clean case alone has recall %v and precision %v, want n/a", none.Recall.Value, none.Precision.Value)
	}
	if b, err := none.Recall.MarshalJSON(); err != nil || string(b) != `{"value":null,"low":null,"high":null}` {
		t.Errorf("an undefined figure as JSON: %s %v", b, err)
	}
}

// Self-consistency keeps a finding most samples report (majority) or any
// sample reports (union), and costs what the samples cost.
func TestVote(t *testing.T) {
	f := func(file string, line int) Finding { return Finding{File: file, Start: line, Category: "logic"} }
	samples := []Review{
		{Findings: []Finding{f("a.go", 3), f("b.go", 9)}, CostUSD: 0.01},
		{Findings: []Finding{f("a.go", 4)}, CostUSD: 0.01},
		{Findings: []Finding{f("c.go", 1)}, CostUSD: 0.01},
	}
	maj, uni := Vote(samples, true), Vote(samples, false)
	if len(maj.Findings) != 1 || maj.Findings[0].File != "a.go" {
		t.Errorf("majority: %+v", maj.Findings)
	}
	if len(uni.Findings) != 3 || math.Abs(uni.CostUSD-0.03) > 1e-9 {
		t.Errorf("union: %+v, cost %v", uni.Findings, uni.CostUSD)
	}
}
