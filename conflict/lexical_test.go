package conflict

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// src is the expected side of a pair.
func src(i int, name, perspective, excerpt string) Source {
	return Source{AgentName: name, Perspective: perspective, Excerpt: excerpt, Index: i}
}

// none is the analysis with no pair.
func none() Analysis {
	return Analysis{Conflicts: []Pair{}, Agreements: []Pair{}, ConflictThemes: []string{}}
}

// The expected values below are derived by hand from the seed's rules.
// Notation: W(r) is the set of the answer's lowercased white-space tokens
// longer than three runes (punctuation stays on them); sim = |W1∩W2| /
// |W1∪W2|; cs and as are the conflict and agreement markers of both answers.
// Conflict if cs > as and sim < T (confidence 0.5 + 0.1cs, at most 1);
// agreement if as > cs or sim >= T (0.5 + 0.1as + 0.3sim, at most 1).
func TestDetect(t *testing.T) {
	long := strings.Repeat("é", 200)
	tests := []struct {
		name      string
		rs        []Response
		threshold float64
		want      Analysis
	}{
		{
			// No pair to compare.
			name: "no answers", rs: nil, threshold: DefaultThreshold, want: none(),
		},
		{
			// One answer: no pair, however many markers it has.
			name: "a single answer", rs: []Response{{Response: "But the risk, however, is a problem."}},
			threshold: DefaultThreshold, want: none(),
		},
		{
			// Both answers empty or white space: the pair is skipped.
			name: "empty answers", rs: []Response{{Response: ""}, {Response: " \t\n "}},
			threshold: DefaultThreshold, want: none(),
		},
		{
			// W1 = {rollout, safe.}; W2 = {however, rollout, carries, risk.};
			// sim = 1/5 = 0.2. cs = however + risk = 2, as = 0 → conflict,
			// 0.5 + 0.2 = 0.7. Themes: tokens > 4 runes, letters only, > 4:
			// rollout ×2, however, carries ("safe." and "risk." shrink to 4).
			name: "a conflict",
			rs: []Response{
				{Response: "The rollout is safe.", AgentName: "A", Perspective: "Analyst"},
				{Response: "However the rollout carries risk.", AgentName: "B", Perspective: "Critic"},
			},
			threshold: DefaultThreshold,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{{Type: TypeConflict, Confidence: 0.7,
					Source1:    src(0, "A", "Analyst", "The rollout is safe."),
					Source2:    src(1, "B", "Critic", "However the rollout carries risk."),
					Similarity: 0.2, ConflictScore: 2}},
				Agreements:     []Pair{},
				ConflictThemes: []string{"rollout", "however", "carries"},
				Summary:        "1 tension(s) detected",
			},
		},
		{
			// The same pair at T = 0: sim 0.2 >= 0 → agreement,
			// 0.5 + 0 + 0.3×0.2 = 0.56.
			name: "threshold 0 makes every pair agree",
			rs: []Response{
				{Response: "The rollout is safe.", AgentName: "A", Perspective: "Analyst"},
				{Response: "However the rollout carries risk.", AgentName: "B", Perspective: "Critic"},
			},
			threshold: 0,
			want: Analysis{
				Conflicts: []Pair{},
				Agreements: []Pair{{Type: TypeAgreement, Confidence: 0.56,
					Source1:    src(0, "A", "Analyst", "The rollout is safe."),
					Source2:    src(1, "B", "Critic", "However the rollout carries risk."),
					Similarity: 0.2, ConflictScore: 2}},
				ConflictThemes: []string{},
				Summary:        "1 point(s) of agreement",
			},
		},
		{
			// W1 = {alpha, bravo, charlie} ("but" is too short);
			// W2 = {alpha, bravo, delta}; sim = 2/4 = 0.5. cs = 1, as = 0.
			// T = 0.5000001: sim just under T → conflict, 0.6.
			name:      "similarity just under the threshold",
			rs:        []Response{{Response: "alpha bravo charlie but"}, {Response: "alpha bravo delta"}},
			threshold: 0.5000001,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{{Type: TypeConflict, Confidence: 0.6,
					Source1:    src(0, "Source 1", "Default", "alpha bravo charlie but"),
					Source2:    src(1, "Source 2", "Default", "alpha bravo delta"),
					Similarity: 0.5, ConflictScore: 1}},
				Agreements: []Pair{},
				// alpha ×2, bravo ×2, charlie, delta (all > 4 letters).
				ConflictThemes: []string{"alpha", "bravo", "charlie", "delta"},
				Summary:        "1 tension(s) detected",
			},
		},
		{
			// The same pair at T = 0.5: sim = T is not below it, and sim >= T
			// → agreement despite cs > as, 0.5 + 0 + 0.3×0.5 = 0.65.
			name:      "similarity at the threshold",
			rs:        []Response{{Response: "alpha bravo charlie but"}, {Response: "alpha bravo delta"}},
			threshold: 0.5,
			want: Analysis{
				Conflicts: []Pair{},
				Agreements: []Pair{{Type: TypeAgreement, Confidence: 0.65,
					Source1:    src(0, "Source 1", "Default", "alpha bravo charlie but"),
					Source2:    src(1, "Source 2", "Default", "alpha bravo delta"),
					Similarity: 0.5, ConflictScore: 1}},
				ConflictThemes: []string{},
				Summary:        "1 point(s) of agreement",
			},
		},
		{
			// W1 = W2 = {risk, remains.}: sim = 1. cs = 4 (but and risk in each),
			// as = 0. At T = 1, sim < 1 fails and sim >= 1 holds → agreement,
			// 0.5 + 0 + 0.3 = 0.8: identical answers always agree.
			name:      "identical answers at threshold 1",
			rs:        []Response{{Response: "But risk remains."}, {Response: "But risk remains."}},
			threshold: 1,
			want: Analysis{
				Conflicts: []Pair{},
				Agreements: []Pair{{Type: TypeAgreement, Confidence: 0.8,
					Source1:    src(0, "Source 1", "Default", "But risk remains."),
					Source2:    src(1, "Source 2", "Default", "But risk remains."),
					Similarity: 1, ConflictScore: 4}},
				ConflictThemes: []string{},
				Summary:        "1 point(s) of agreement",
			},
		},
		{
			// The same pair at T = NaN: sim < NaN and sim >= NaN are both
			// false, as = 0 is not > cs → neutral, left out.
			name:      "NaN threshold",
			rs:        []Response{{Response: "But risk remains."}, {Response: "But risk remains."}},
			threshold: math.NaN(), want: none(),
		},
		{
			// cs = 1 (but), as = 1 (also): a tie is no conflict; sim = 0
			// (no token longer than three runes) < T, and as is not > cs →
			// neutral, left out.
			name:      "tie below the threshold is neutral",
			rs:        []Response{{Response: "but"}, {Response: "also"}},
			threshold: DefaultThreshold, want: none(),
		},
		{
			// W1 = {budget, approved,, late.}; W2 = {budget, approved,, also,
			// late.}; sim = 3/4 = 0.75. cs = 1 = as: a tie, but sim >= 0.75 →
			// agreement, 0.5 + 0.1 + 0.3×0.75 = 0.825.
			name:      "tie at the threshold agrees",
			rs:        []Response{{Response: "Budget approved, but late."}, {Response: "Budget approved, also late."}},
			threshold: DefaultThreshold,
			want: Analysis{
				Conflicts: []Pair{},
				Agreements: []Pair{{Type: TypeAgreement, Confidence: 0.825,
					Source1:    src(0, "Source 1", "Default", "Budget approved, but late."),
					Source2:    src(1, "Source 2", "Default", "Budget approved, also late."),
					Similarity: 0.75, ConflictScore: 1, AgreementScore: 1}},
				ConflictThemes: []string{},
				Summary:        "1 point(s) of agreement",
			},
		},
		{
			// Markers inside other words do not count: but in button, butter,
			// but_x and butée; risk in riskiest and risk2; issue in issues;
			// unlike in unlikely; concern in concerns; contrast in
			// contrasting; differ in differences; "other" alone is not "on
			// the other hand". Only "instead" counts: cs = 1, as = 0. No
			// token is shared: sim = 0 → conflict, 0.6. Themes, all once, in
			// order of appearance: button, nothing, (about is a stop word),
			// butter, riskiest, issues — the first five of the tie.
			name: "markers inside other words",
			rs: []Response{
				{Response: "The button said nothing about butter or the riskiest issues; but_x, risk2, butée."},
				{Response: "Unlikely concerns, contrasting differences; use the other instead."},
			},
			threshold: DefaultThreshold,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{{Type: TypeConflict, Confidence: 0.6,
					Source1:    src(0, "Source 1", "Default", "The button said nothing about butter or the riskiest issues; but_x, risk2, butée."),
					Source2:    src(1, "Source 2", "Default", "Unlikely concerns, contrasting differences; use the other instead."),
					Similarity: 0, ConflictScore: 1}},
				Agreements:     []Pair{},
				ConflictThemes: []string{"button", "nothing", "butter", "riskiest", "issues"},
				Summary:        "1 tension(s) detected",
			},
		},
		{
			// Every occurrence counts, in any case, next to punctuation:
			// But, RISK, risk (of risk-free), but, vs, However: cs = 6;
			// Also, ALSO, also: as = 3. W1 = {but,, risk;, risk-free, (but),
			// “however”}, W2 = {also:, also,, also.}: sim = 0 → conflict,
			// min(1, 0.5 + 0.6) = 1. Themes: risk-free → riskfree and
			// “however” → however; risk; (but) also: shrink to 4 or fewer.
			name: "every occurrence, case and punctuation",
			rs: []Response{
				{Response: "But, RISK; risk-free (but) vs. “However”"},
				{Response: "Also: ALSO, also."},
			},
			threshold: DefaultThreshold,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{{Type: TypeConflict, Confidence: 1,
					Source1:    src(0, "Source 1", "Default", "But, RISK; risk-free (but) vs. “However”"),
					Source2:    src(1, "Source 2", "Default", "Also: ALSO, also."),
					Similarity: 0, ConflictScore: 6, AgreementScore: 3}},
				Agreements:     []Pair{},
				ConflictThemes: []string{"riskfree", "however"},
				Summary:        "1 tension(s) detected",
			},
		},
		{
			// Phrases: answer 1 has "on the other hand" (cs 1), "in line
			// with" and "as well" (as 2). Answer 2 has "on the\nother   hand"
			// (white space between the words: cs 1) and "whereas" (cs 1); "in
			// line, with" and "as-well" are broken by punctuation and do not
			// count. cs = 3 > as = 2. W1 = {other, hand,, plan, line, with,
			// policy, well.}; W2 = {plan, other, hand;, line,, with, policy;,
			// as-well., whereas.}; shared plan, other, with: sim = 3/12 = 0.25
			// → conflict, 0.8. Themes: policy ×2, aswell, whereas ("other" is
			// a stop word; hand, line, well have four letters).
			name: "multi-word markers",
			rs: []Response{
				{Response: "On the other hand, the plan is in line with policy as well."},
				{Response: "The plan is on the\nother   hand; in line, with policy; as-well. Whereas."},
			},
			threshold: DefaultThreshold,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{{Type: TypeConflict, Confidence: 0.8,
					Source1:    src(0, "Source 1", "Default", "On the other hand, the plan is in line with policy as well."),
					Source2:    src(1, "Source 2", "Default", "The plan is on the\nother   hand; in line, with policy; as-well. Whereas."),
					Similarity: 0.25, ConflictScore: 3, AgreementScore: 2}},
				Agreements:     []Pair{},
				ConflictThemes: []string{"policy", "aswell", "whereas"},
				Summary:        "1 tension(s) detected",
			},
		},
		{
			// Answer 2 is white space: pairs (1,2) and (2,3) are skipped.
			// (1,3): W1 = {however,, costs, rise.}; W3 = {costs, rise, too,,
			// slowly.}; "rise." ≠ "rise": sim = 1/6. cs = however + but = 2
			// → conflict, 0.7. Unnamed answers are "Source N" by their place
			// in the input. Themes: costs ×2, however, slowly.
			name: "an empty answer among three",
			rs: []Response{
				{Response: "However, costs rise."},
				{Response: "   "},
				{Response: "Costs rise too, but slowly."},
			},
			threshold: DefaultThreshold,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{{Type: TypeConflict, Confidence: 0.7,
					Source1:    src(0, "Source 1", "Default", "However, costs rise."),
					Source2:    src(2, "Source 3", "Default", "Costs rise too, but slowly."),
					Similarity: 1.0 / 6, ConflictScore: 2}},
				Agreements:     []Pair{},
				ConflictThemes: []string{"costs", "however", "slowly"},
				Summary:        "1 tension(s) detected",
			},
		},
		{
			// W1 = {sales, data, confirms, growth.}; W2 = {finance,
			// similarly, confirms, growth,, consistent, with, forecasts.};
			// sim = 1/10. as = confirms + similarly + confirms + consistent
			// = 4, cs = 0 → agreement, 0.5 + 0.4 + 0.03 = 0.93.
			name: "an agreement by markers",
			rs: []Response{
				{Response: "Sales data confirms growth."},
				{Response: "Finance similarly confirms growth, consistent with forecasts."},
			},
			threshold: DefaultThreshold,
			want: Analysis{
				Conflicts: []Pair{},
				Agreements: []Pair{{Type: TypeAgreement, Confidence: 0.93,
					Source1:    src(0, "Source 1", "Default", "Sales data confirms growth."),
					Source2:    src(1, "Source 2", "Default", "Finance similarly confirms growth, consistent with forecasts."),
					Similarity: 0.1, AgreementScore: 4}},
				ConflictThemes: []string{},
				Summary:        "1 point(s) of agreement",
			},
		},
		{
			// W1 = {however, budget, slips,, only, little.} cs 2 (however,
			// but); W2 = {budget, also, holds.} as 1; W3 = {budget, confirms,
			// plan.} as 1. (1,2): cs 2 > as 1, sim 1/7 → conflict 0.7; (1,3)
			// the same; (2,3): cs 0 < as 2, sim 1/5 → agreement 0.5 + 0.2 +
			// 0.06 = 0.76. Themes over the excerpts of (1,2) and (1,3):
			// budget 4, however 2, slips 2, little 2, holds 1, confirms 1;
			// ties keep their first appearance, and the top 5 drops confirms.
			name: "summary with both, themes ranked and cut at five",
			rs: []Response{
				{Response: "However the budget slips, but only a little.", AgentName: "q1", Perspective: "Critic"},
				{Response: "The budget also holds.", AgentName: "q2", Perspective: "Advocate"},
				{Response: "Budget confirms the plan.", AgentName: "q3", Perspective: "Analyst"},
			},
			threshold: DefaultThreshold,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{
					{Type: TypeConflict, Confidence: 0.7,
						Source1:    src(0, "q1", "Critic", "However the budget slips, but only a little."),
						Source2:    src(1, "q2", "Advocate", "The budget also holds."),
						Similarity: 1.0 / 7, ConflictScore: 2, AgreementScore: 1},
					{Type: TypeConflict, Confidence: 0.7,
						Source1:    src(0, "q1", "Critic", "However the budget slips, but only a little."),
						Source2:    src(2, "q3", "Analyst", "Budget confirms the plan."),
						Similarity: 1.0 / 7, ConflictScore: 2, AgreementScore: 1},
				},
				Agreements: []Pair{{Type: TypeAgreement, Confidence: 0.76,
					Source1:    src(1, "q2", "Advocate", "The budget also holds."),
					Source2:    src(2, "q3", "Analyst", "Budget confirms the plan."),
					Similarity: 0.2, AgreementScore: 2}},
				ConflictThemes: []string{"budget", "however", "slips", "little", "holds"},
				Summary:        "2 tension(s) detected; 1 point(s) of agreement",
			},
		},
		{
			// Answer 1 is "but " and 200 é (204 runes, 404 bytes), no
			// period: its excerpt is the first 150 runes, "but " and 146 é,
			// then "...". W1 = {é×200}, W2 = {however}: sim 0; cs 2 →
			// conflict 0.7. Themes: é×146 (letters only) and however.
			name:      "excerpts are cut in runes",
			rs:        []Response{{Response: "but " + long}, {Response: "however"}},
			threshold: DefaultThreshold,
			want: Analysis{
				HasConflicts: true,
				Conflicts: []Pair{{Type: TypeConflict, Confidence: 0.7,
					Source1:    src(0, "Source 1", "Default", "but "+long[:146*2]+"..."),
					Source2:    src(1, "Source 2", "Default", "however"),
					Similarity: 0, ConflictScore: 2}},
				Agreements:     []Pair{},
				ConflictThemes: []string{long[:146*2], "however"},
				Summary:        "1 tension(s) detected",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.rs, Options{Threshold: tt.threshold, Keep: DefaultKeep})
			if err != nil {
				t.Fatal(err)
			}
			// Below Keep pairs of each type, the lists are whole.
			tt.want.TotalConflicts, tt.want.TotalAgreements = len(tt.want.Conflicts), len(tt.want.Agreements)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Detect (-want +got):\n%s", diff)
			}
		})
	}
}

// Excerpts: the answer trimmed; past 150 runes, cut at the last period of
// the first 150 runes when it lies after the 76th rune (index > 75), else
// at 150 runes with "...".
func TestExcerpt(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	b := strings.Repeat("b", 100)
	tests := []struct{ name, in, want string }{
		{"short, trimmed", "  \n Risk ahead.\t ", "Risk ahead."},
		{"exactly 150 runes", a(150), a(150)},
		{"150 runes of é", strings.Repeat("é", 150), strings.Repeat("é", 150)},
		{"151 runes", a(151), a(150) + "..."},
		// The period at index 99 is past half: the excerpt ends with it.
		{"period at index 99", a(99) + ". " + b, a(99) + "."},
		// The last period within the cut wins.
		{"two periods", a(80) + "." + a(10) + "." + b, a(80) + "." + a(10) + "."},
		// A period at index 76 is past half (76 > 75).
		{"period at index 76", a(76) + "." + b, a(76) + "."},
		// A period at index 75 is not (75 > 75 fails): cut with "...".
		{"period at index 75", a(75) + "." + b, a(75) + "." + b[:74] + "..."},
		// A period at index 150 is the 151st rune, outside the excerpt.
		{"period at index 150", a(150) + "." + b, a(150) + "..."},
		// Trimming comes first: the leading spaces do not count.
		{"leading spaces", "     " + a(150), a(150)},
	}
	for _, tt := range tests {
		if got := excerpt(tt.in); got != tt.want {
			t.Errorf("%s: excerpt = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Marker counts, one answer at a time.
func TestCountMarkers(t *testing.T) {
	tests := []struct {
		in                string
		conflicts, agrees int
	}{
		{"", 0, 0},
		{"but but BUT But bUt", 5, 0},
		{"button rebut butter but_ 2but but2", 0, 0},
		{"(but) but. but, but; but! but? “but” 'but' but-", 9, 0},
		{"vs vs. versus VS", 4, 0},
		{"on the other hand On The Other Hand on the other, hand", 2, 0},
		{"on the\tother\n\nhand", 1, 0},
		{"as well as well as", 0, 2},
		{"in line with; inline with; in-line with", 0, 1},
		{"also alsoran Also. likewise. echoes echo mirrors mirror", 0, 5},
		{"However, despite the risk, there is a concern, but also support.", 5, 1},
	}
	for _, tt := range tests {
		lower := strings.ToLower(tt.in)
		ws := words(lower)
		c, a := countMarkers(lower)
		if c != tt.conflicts || a != tt.agrees {
			t.Errorf("%q: %d conflict, %d agreement markers; want %d, %d", tt.in, c, a, tt.conflicts, tt.agrees)
		}
		if rc, ra := refCountMarkers(lower, ws, conflictMarkers), refCountMarkers(lower, ws, agreementMarkers); rc != c || ra != a {
			t.Errorf("%q: %d conflict, %d agreement markers; the reference counts %d, %d", tt.in, c, a, rc, ra)
		}
	}
}

func TestMarkers(t *testing.T) {
	if n := len(ConflictMarkers()); n != 24 {
		t.Errorf("%d conflict markers, want 24", n)
	}
	if n := len(AgreementMarkers()); n != 17 {
		t.Errorf("%d agreement markers, want 17", n)
	}
	m := ConflictMarkers()
	m[0] = "changed"
	if ConflictMarkers()[0] != "however" {
		t.Error("ConflictMarkers returns the package's own slice")
	}
}

// An analysis with no pair is JSON with empty lists, never null.
func TestEmptyJSON(t *testing.T) {
	a, err := Detect(nil, Options{Threshold: DefaultThreshold, Keep: DefaultKeep})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hasConflicts":false,"conflicts":[],"agreements":[],"totalConflicts":0,"totalAgreements":0,"truncated":false,"conflictThemes":[],"summary":""}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// The perspective of northstar's answers is an object with a roleLabel.
func TestResponseJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    Response
		wantErr bool
	}{
		{`{"response":"r","agentName":"a","perspective":"Critic"}`, Response{"r", "a", "Critic"}, false},
		{`{"response":"r","perspective":{"roleId":"critic","roleLabel":"Critic"}}`, Response{Response: "r", Perspective: "Critic"}, false},
		{`{"response":"r","perspective":null,"queryId":"q1"}`, Response{Response: "r"}, false},
		{`{"response":"r"}`, Response{Response: "r"}, false},
		{`{"response":"r","perspective":3}`, Response{}, true},
		{`{"response":"r","perspective":{"roleLabel":3}}`, Response{}, true},
		{`{"response":5}`, Response{}, true},
	}
	for _, tt := range tests {
		var got Response
		err := json.Unmarshal([]byte(tt.in), &got)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error: %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.in, diff)
		}
	}
}
