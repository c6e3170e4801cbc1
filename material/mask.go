package material

import (
	"strings"

	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/internal/secrets"
)

// maskFiles masks the secrets in the text of every file (see maskSecrets),
// files in parallel. A file whose text changes is counted again when its
// tokens are next needed.
func maskFiles(files []File) {
	parallel.For(len(files), func(i int) {
		f := &files[i]
		if t := maskSecrets(f.Path, f.Text); t != f.Text {
			f.Text, f.Tokens = t, 0
		}
	})
}

// maskSecrets returns the rendered text of the file at path with every
// secret in its content masked (see package secrets): the text of
// numbered, removed and context lines and of "@@" section lines. Header and
// note lines are left alone, and so is every line number, marker and line
// break, so the masked text has the same lines, numbered the same way.
// Secrets are looked for in the content alone, lines joined as in the
// file, so that the rendering never hides a secret from the rules nor
// becomes part of one.
func maskSecrets(path, text string) string {
	var view strings.Builder
	view.Grow(len(text))
	first := true
	for l := range strings.SplitAfterSeq(text, "\n") {
		if !first {
			view.WriteByte('\n')
		}
		first = false
		body := strings.TrimSuffix(l, "\n")
		if o := contentOffset(body); o >= 0 {
			view.WriteString(body[o:])
		}
	}
	v := view.String()
	spans := secrets.Find(v, path)
	if len(spans) == 0 {
		return text // the common case: no list of the lines is made
	}
	lines := strings.SplitAfter(text, "\n")
	offsets := make([]int, len(lines)) // where each line's content starts; -1 for none
	for i, l := range lines {
		offsets[i] = contentOffset(strings.TrimSuffix(l, "\n"))
	}
	masked := strings.Split(secrets.Apply(v, spans), "\n")
	original := strings.Split(v, "\n")
	var b strings.Builder
	b.Grow(len(text) + 32*len(spans))
	for i, l := range lines {
		if offsets[i] < 0 || masked[i] == original[i] {
			b.WriteString(l)
			continue
		}
		b.WriteString(l[:offsets[i]])
		b.WriteString(masked[i])
		if strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// contentOffset returns where the content of a rendered line starts, or -1
// for a header or note line.
func contentOffset(line string) int {
	if rest, ok := strings.CutPrefix(line, "@@ "); ok {
		return len(line) - len(rest)
	}
	if line == "@@" {
		return -1
	}
	mark, _, text := parseLine(line)
	if mark == 0 {
		return -1
	}
	return len(line) - len(text)
}
