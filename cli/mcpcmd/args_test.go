package mcpcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sotlabs/sot/config"
)

// Each tool argument becomes one flag with its value joined to it, and
// what is not a flag follows "--": a value that looks like a flag stays a
// value.
func TestArgsKeepValuesValues(t *testing.T) {
	cfg := config.Defaults()
	cfg.Budget.MaxCost = 2
	top := "/repo"
	for _, c := range []struct {
		name string
		got  func() ([]string, error)
		want []string
	}{
		{"review of paths", func() ([]string, error) {
			return reviewArgs(&cfg, top, ReviewArgs{Diff: "main...HEAD", Paths: []string{"-rf", "/repo/cmd"}, Specialists: "security,testing", Common: Common{MaxCost: 1.5}}, ".sot/reviews/x", "")
		}, []string{"review", "--output-dir=.sot/reviews/x", "--interactive=false", "--diff=main...HEAD", "--specialists=security,testing", "--max-cost=1.5", "--", "./-rf", "cmd"}},
		{"freeform text", func() ([]string, error) {
			return reviewArgs(&cfg, top, ReviewArgs{Text: "--help", Framing: "an email"}, "d", ".sot/mcp/jobs/x.input.md")
		}, []string{"review", "--output-dir=d", "--interactive=false", "--type=freeform", "--input=.sot/mcp/jobs/x.input.md", "--framing=an email", "--"}},
		{"a question that looks like a flag", func() ([]string, error) {
			return askArgs(&cfg, top, AskArgs{Question: "--config=/tmp/evil.yaml", MaxSources: 3, NoDebate: true}, "d")
		}, []string{"ask", "--output-dir=d", "--max-sources=3", "--no-debate", "--", "--config=/tmp/evil.yaml"}},
		{"a debate of a file", func() ([]string, error) {
			return debateArgs(&cfg, top, DebateArgs{PassageFile: "texts/p.md", Debaters: []string{"literalist", "personas/mine.md"}, Rounds: 2}, "d", "")
		}, []string{"debate", "--output-dir=d", "--debaters=literalist,personas/mine.md", "--rounds=2", "--", "texts/p.md"}},
	} {
		got, err := c.got()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}
