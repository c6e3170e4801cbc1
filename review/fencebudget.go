package review

import (
	"sync"

	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/prompt"
)

// The fence around the material puts a gutter on every line, which costs
// about a token a line on top of the material's own count. So the material
// is measured as fenced (prompt.GutteredTokens) when it is split into
// chunks, each file once, and each chunk's count goes with it into
// composition, which does not count the material again.

// fencedBytes bounds the bytes m's fenced text adds to a prompt.
func fencedBytes(m *material.Material) int { return prompt.FencedBytes(m.Text()) }

// fencedCounts are the files' GutteredTokens, counted in the background
// from the moment the material is known to need them: the counting then
// runs beside the material's analysis and the persona listing, instead of
// after them. Each file is counted once, by whichever asks first.
type fencedCounts struct {
	at     map[string]int // a file's text -> its index in counts
	counts []func() int
}

// countInBackground starts counting the fenced tokens of m's files on
// every core, and returns what sizeOf reads them from.
func countInBackground(m *material.Material) *fencedCounts {
	c := &fencedCounts{at: make(map[string]int, len(m.Files)), counts: make([]func() int, len(m.Files))}
	for i, f := range m.Files {
		c.at[f.Text] = i
		c.counts[i] = sync.OnceValue(func() int { return prompt.GutteredTokens(f.Text) })
	}
	parallel.Start(func() { parallel.For(len(c.counts), func(i int) { c.counts[i]() }) })
	return c
}

// sizeOf is prompt.GutteredTokens(text), read from the background counts
// when text is a file's whole text. A nil c counts every text.
func (c *fencedCounts) sizeOf(text string) int {
	if c != nil {
		if i, ok := c.at[text]; ok {
			return c.counts[i]()
		}
	}
	return prompt.GutteredTokens(text)
}
