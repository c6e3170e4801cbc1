package review

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkReReview prints the two figures of re-reviews: how often a
// finding the user dismissed comes back over a pull request of five pushes
// (the model reports it at every push that shows its file), and the input
// tokens of a re-review after a 20-line push to a 2,000-line pull request
// against a full review of it.
func BenchmarkReReview(b *testing.B) {
	for range b.N {
		// Five pushes, each touching the file of a dismissed finding.
		p := newPR(b)
		p.write("util.go", "package app\n\nfunc Sub(a, b int) int {\n\treturn b - a // BUG2\n}\n")
		p.git("commit", "-qam", "push 1")
		p.model.set(map[string]string{"BUG2": "util.go:4"})
		first := p.review(SinceAuto)
		run, err := LoadRun(first.Plan.OutputDir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := run.Record(first.Result.Items[0].ID, Dismissed, "meant that way", "user", "bench"); err != nil {
			b.Fatal(err)
		}
		repeats, shown := 0, 0
		for push := 2; push <= 5; push++ {
			pad := strings.Repeat("// note\n", push)
			p.write("util.go", "package app\n\n"+pad+"func Sub(a, b int) int {\n\treturn b - a // BUG2\n}\n")
			p.git("commit", "-qam", fmt.Sprintf("push %d", push))
			p.model.set(map[string]string{"BUG2": fmt.Sprintf("util.go:%d", 4+push)})
			out := p.review(SinceAuto)
			shown++
			for _, it := range append(out.Result.Items, out.Result.Observations...) {
				if strings.Contains(it.Claim, "BUG2") {
					repeats++
				}
			}
		}

		// A 2,000-line pull request, then a 20-line push.
		q := newPR(b)
		for f := range 20 {
			var s strings.Builder
			fmt.Fprintf(&s, "package app\n\n")
			for l := range 98 {
				fmt.Fprintf(&s, "func F%d_%d(v int) int { return v + %d }\n", f, l, l)
			}
			q.write(fmt.Sprintf("f%02d.go", f), s.String())
		}
		q.git("add", ".")
		q.git("commit", "-qm", "a large change")
		full := q.review(SinceAuto)
		var s strings.Builder
		s.WriteString("package app\n\n")
		for l := range 18 {
			fmt.Fprintf(&s, "func G%d(v int) int { return v - %d }\n", l, l)
		}
		q.write("g.go", s.String())
		q.git("add", ".")
		q.git("commit", "-qm", "a 20-line push")
		again := q.review(SinceAuto)
		if again.Result.Since == nil {
			b.Fatal("the push was not re-reviewed from the last review")
		}
		ratio := float64(again.Result.Usage.InputTokens) / float64(full.Result.Usage.InputTokens)

		b.ReportMetric(float64(repeats)/float64(shown), "dismissed-repeats/push")
		b.ReportMetric(ratio, "re-review/full-input-tokens")
		b.ReportMetric(float64(full.Result.Usage.InputTokens), "full-input-tokens")
		b.ReportMetric(float64(again.Result.Usage.InputTokens), "re-review-input-tokens")
	}
}
