package review

import (
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/prompt"
)

// The fence around the material puts a gutter on every line, which costs
// about a token a line on top of the material's own count. material.Split
// knows only the material's count, so the budget it is given is lowered
// until every chunk, once fenced, fits the room left for material.

// maxSplitPasses bounds the passes of splitFenced. Each pass lowers Split's
// budget by the largest excess, so two or three passes are the rule.
const maxSplitPasses = 8

// splitFenced splits m into chunks whose fenced text takes at most room
// tokens; fenced is the fenced count of the whole material. The first pass
// scales room by the material's own share of its fenced count, which is
// enough unless lines are shorter in some chunks than on average. A chunk
// that still does not fit after the last pass is left to Compose, which
// reports it.
func splitFenced(m *material.Material, room, fenced int) []material.Chunk {
	limit := room
	if fenced > 0 {
		limit = int(int64(room) * int64(m.Tokens()) / int64(fenced))
	}
	var chunks []material.Chunk
	for range maxSplitPasses {
		chunks = m.Split(limit)
		over := 0
		for _, c := range chunks {
			over = max(over, fencedTokens(c.Files)-room)
		}
		if over <= 0 || limit-over < 256 {
			return chunks
		}
		limit -= over
	}
	return chunks
}

// fencedTokens counts the tokens files add to a prompt once fenced
// together: each file's own fenced count (remembered, so a file whole in
// every pass is tokenized once), and two for the blank line after it.
func fencedTokens(files []material.File) int {
	n := 0
	for _, f := range files {
		n += prompt.FencedTokens(f.Text) + 2
	}
	return n
}

// fencedBytes bounds the bytes m's fenced text adds to a prompt.
func fencedBytes(m *material.Material) int { return prompt.FencedBytes(m.Text()) }
