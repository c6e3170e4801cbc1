package review

import (
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
