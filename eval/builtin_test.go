package eval

import (
	"context"
	"os/exec"
	"testing"

	"github.com/sotlabs/sot/material"
)

// The cases sot ships: at least 30 defect cases and 15 clean ones across
// Go, Python and TypeScript, each a repository git builds, whose change
// touches every planted defect's lines.
func TestBuiltinCases(t *testing.T) {
	cases, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	langs := map[string]int{}
	cats := map[string]bool{}
	for _, c := range cases {
		kinds[c.Kind]++
		langs[c.Language]++
		for _, d := range c.Defects {
			cats[d.Category] = true
		}
	}
	if kinds[KindDefect] < 30 || kinds[KindClean] < 15 {
		t.Errorf("%d defect and %d clean cases; sot ships at least 30 and 15", kinds[KindDefect], kinds[KindClean])
	}
	for _, l := range []string{"go", "python", "typescript"} {
		if langs[l] == 0 {
			t.Errorf("no case in %s", l)
		}
	}
	if len(cats) < 10 {
		t.Errorf("the defects cover %d categories", len(cats))
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	for _, c := range cases {
		dir := t.TempDir()
		if err := c.Repo(ctx, dir); err != nil {
			t.Errorf("%s: %v", c.ID, err)
			continue
		}
		m, err := material.Diff(ctx, material.DiffOptions{Dir: dir, Range: BaseBranch + "..." + ChangeBranch})
		if err != nil {
			t.Errorf("%s: %v", c.ID, err)
			continue
		}
		if len(m.Files) == 0 {
			t.Errorf("%s: the change has nothing to review (skipped: %v)", c.ID, m.Skipped)
		}
		for i, d := range c.Defects {
			changed := false
			for l := d.Start(); l <= d.End(); l++ {
				changed = changed || m.IsChanged(d.File, l)
			}
			if !changed {
				t.Errorf("%s: defect %d (%s:%d-%d) lies on no line the change adds or modifies", c.ID, i+1, d.File, d.Start(), d.End())
			}
		}
	}
}
