package review

import (
	"fmt"
	"strings"

	"github.com/sotlabs/sot/prompt"
)

// ComposedPrompt returns the system prompt, with its layers, that the plan
// sends a specialist under a lens ("" for none) for the first chunk of the
// material, and the user message that goes with it: exactly what the
// review's first call of that specialist carries.
func (p *Plan) ComposedPrompt(specialist, lens string) (prompt.Composed, string, error) {
	for _, t := range p.Tasks {
		info := p.taskInfo[t.ID]
		if info.specialist == specialist && info.lens == lens && info.chunk <= 1 {
			return info.prompt.Joined(), t.Request.Messages[0].Content, nil
		}
	}
	var have []string
	for _, t := range p.Tasks {
		info := p.taskInfo[t.ID]
		name := info.specialist
		if info.lens != "" {
			name += " under " + info.lens
		}
		have = append(have, name)
	}
	what := specialist
	if lens != "" {
		what += " under the " + lens + " lens"
	}
	return prompt.Composed{}, "", fmt.Errorf("the review sends no prompt to %s (it sends: %s)", what, strings.Join(have, ", "))
}
