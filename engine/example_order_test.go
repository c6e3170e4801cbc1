package engine_test

import (
	"fmt"

	"github.com/sotlabs/sot/engine"
)

func ExampleShuffle() {
	ids := []string{"a", "b", "c", "d", "e"}
	engine.Shuffle(7, ids)
	fmt.Println(ids)
	// Output: [b e a d c]
}

func ExampleBatches() {
	claims := []string{"short", "a longer claim", "mid claim", "x"}
	// Every batch costs 3 for its frame; a claim costs its length.
	for _, b := range engine.Batches(claims, 20, 3, func(s string) int { return len(s) }) {
		fmt.Printf("%q\n", b)
	}
	// Output:
	// ["short"]
	// ["a longer claim"]
	// ["mid claim" "x"]
}
