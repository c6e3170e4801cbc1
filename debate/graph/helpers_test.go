package graph

import (
	"fmt"
)

// turns makes n turns whose text carries key.
func turns(key string, n int) []Turn {
	var ts []Turn
	for i := range n {
		ts = append(ts, Turn{N: i + 1, Round: i/2 + 1, Speaker: fmt.Sprintf("d%d", i%2+1), Name: fmt.Sprintf("Debater %d", i%2+1),
			Text: fmt.Sprintf("Turn text %d. SCRIPT:%s The carriage holds but just ourselves and immortality.", i+1, key)})
	}
	return ts
}
