package debate

import (
	"strings"
	"testing"
)

// An observer's name from an ensemble file, a passage's file name and
// every answer of the models reach dialectic-log.md, branch-N.md and
// multi-observer-report.md with their control characters escaped, so the
// files cannot set a terminal's title, clear its screen or reorder text
// when shown with cat.
func TestMarkdownEscapesControlCharacters(t *testing.T) {
	const e = "x\x1b]0;pwned\x07\x1b[2J\r\nsot: warning: fake\u009b1m\u202e"
	q := &Question{Observer: "o1", Name: "obs" + e, Question: "q" + e, Missing: e, Why: e, Context: e, Branch: 1}
	br := &Branch{N: 1, Question: q, Observers: []string{"o1", "o2"},
		Debate:    Phase{Turns: []*Turn{{N: 1, Round: 1, Name: "deb" + e, Text: "text\n" + e, Summary: e}}, Summary: e},
		Synthesis: &Synthesis{Perspectives: []string{e}, Resolved: []string{e}, InTension: []string{e}, Summary: e},
		MergeBack: "merge" + e}
	r := &Result{RunID: "run" + e, Passage: Passage{Name: "p" + e + ".txt", Text: "passage\n" + e}, Model: "m" + e,
		Debaters:     []Speaker{{ID: "a", Name: "deb" + e}},
		Observers:    []*Observer{{ID: "o1", Name: "obs" + e, Bias: e, Focus: e, BlindSpots: []string{e}, Origin: "ensemble" + e, Rejected: []Attempt{{Name: e, CloseTo: e}}}, {ID: "o2", Name: "two" + e}},
		ObserverMode: "ensemble ens" + e + ".json",
		Main:         Phase{Turns: []*Turn{{N: 1, Round: 1, Name: "deb" + e, Text: e, Summary: e}}, Summary: e},
		Questions:    []*Question{q}, Merged: []Merge{{Observer: e, Question: e, Into: 1, IntoAsker: e}},
		Branches: []*Branch{br}, Final: "final\n" + e,
		Missing: []Missing{{Step: "s", What: e, Error: e}}, Notes: []string{e}}
	for name, md := range map[string]string{
		LogFile: r.DialecticLog(), ReportFile: r.ObserverReport(), BranchFile(1): r.BranchMarkdown(br),
	} {
		if i := strings.IndexAny(md, "\x1b\x07\r\u009b\u202e"); i >= 0 {
			t.Errorf("%s holds a control character at byte %d: %q", name, i, md[max(0, i-40):min(len(md), i+40)])
		}
		if !strings.Contains(md, `obs x\x1b]0;pwned\x07\x1b[2J`) && !strings.Contains(md, `obsx\x1b]0;pwned\x07\x1b[2J`) {
			t.Errorf("%s does not show the observer's name escaped:\n%s", name, md)
		}
		for _, l := range strings.Split(md, "\n") {
			if strings.HasPrefix(l, "sot: warning: fake") {
				t.Errorf("%s: a value started a line of its own: %q", name, l)
			}
		}
	}
}
