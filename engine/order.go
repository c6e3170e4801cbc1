package engine

import "math/rand/v2"

// This file holds the deterministic helpers a protocol needs to present
// its material: shuffles that a seed reproduces, and batches that fit a
// budget.

// Shuffler draws shuffles from a seed: the same seed gives the same
// permutations in the same sequence, on every platform and Go release
// that keeps math/rand/v2's PCG and Shuffle, so a run's recorded seed
// reproduces its order. A Shuffler is not safe for concurrent use.
type Shuffler struct{ r *rand.Rand }

// NewShuffler returns a Shuffler for seed.
func NewShuffler(seed int64) *Shuffler {
	return &Shuffler{rand.New(rand.NewPCG(uint64(seed), 0x736f74))}
}

// Shuffle shuffles s in place with a new Shuffler for seed.
func Shuffle[T any](seed int64, s []T) { ShuffleWith(NewShuffler(seed), s) }

// ShuffleWith shuffles s in place with the next draws of sh. Shuffling
// several slices one after the other with one Shuffler (the groups, then
// each group's members) gives a different, equally reproducible, order
// than shuffling each with a Shuffler of its own.
func ShuffleWith[T any](sh *Shuffler, s []T) {
	sh.r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}

// Batches splits items, keeping their order, into consecutive batches
// that each fit budget: overhead (what every batch costs, such as a
// prompt's frame) plus the sizes of its items. An item too large for any
// batch goes alone. Without a budget (budget <= 0) every item goes in one
// batch; no items give no batches. size is called once per item, so the
// work grows with the number of items.
func Batches[T any](items []T, budget, overhead int, size func(T) int) [][]T {
	if len(items) == 0 {
		return nil
	}
	if budget <= 0 {
		return [][]T{items}
	}
	var batches [][]T
	start, used := 0, overhead
	for i, it := range items {
		n := size(it)
		if i > start && used+n > budget {
			batches = append(batches, items[start:i:i])
			start, used = i, overhead
		}
		used += n
	}
	return append(batches, items[start:len(items):len(items)])
}
