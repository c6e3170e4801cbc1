package material

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCombinedDiffIsAUsageError(t *testing.T) {
	r := newRepo(t)
	r.write("f.txt", "a\nb\nc\nd\ne\n")
	r.commit("base")
	r.git("checkout", "-q", "-b", "side")
	r.write("f.txt", "a\nB\nc\nd\ne\n")
	r.commit("side")
	r.git("checkout", "-q", "main")
	r.write("f.txt", "a\nb\nc\nd\nE\n")
	r.commit("main")
	r.git("merge", "-q", "--no-edit", "side")
	r.write("f.txt", "a\nB\nc\nd\nE\nf\n")
	r.git("commit", "-q", "-am", "merge fix-up", "--amend") // an evil merge: changes of its own
	merge := r.git("rev-parse", "HEAD")

	for _, rng := range []string{merge + "^!", merge + " " + merge + "^1 " + merge + "^2"} {
		_, err := Diff(context.Background(), DiffOptions{Dir: r.dir, Range: rng})
		if !errors.Is(err, ErrCombinedDiff) || !errors.Is(err, ErrBadRange) {
			t.Errorf("%s: err = %v, want ErrCombinedDiff (a usage error)", rng, err)
			continue
		}
		if want := merge + "^1.." + merge; !strings.Contains(err.Error(), want) {
			t.Errorf("%s: the error does not say to review %s: %v", rng, want, err)
		}
	}
	// What the message suggests works.
	m := r.diff(DiffOptions{Range: merge + "^1.." + merge})
	if len(m.Files) != 1 {
		t.Errorf("against the first parent: %v", m.Paths())
	}

	// A clean merge of changes far apart: git's combined diff is empty,
	// which is not "no changes".
	r.write("g.txt", lines("line", 1, 40))
	r.commit("g")
	r.git("checkout", "-q", "-b", "side2")
	r.write("g.txt", strings.Replace(lines("line", 1, 40), "line 2\n", "line two\n", 1))
	r.commit("side2")
	r.git("checkout", "-q", "main")
	r.write("g.txt", strings.Replace(lines("line", 1, 40), "line 39\n", "line thirty-nine\n", 1))
	r.commit("main2")
	r.git("merge", "-q", "--no-edit", "side2")
	clean := r.git("rev-parse", "HEAD")
	if _, err := Diff(context.Background(), DiffOptions{Dir: r.dir, Range: clean + "^!"}); !errors.Is(err, ErrCombinedDiff) {
		t.Errorf("a clean merge: err = %v, want ErrCombinedDiff", err)
	}
	// A commit with one parent is an ordinary diff.
	if m := r.diff(DiffOptions{Range: "HEAD^1^!"}); len(m.Files) != 1 {
		t.Errorf("HEAD^1^!: %v", m.Paths())
	}
}
