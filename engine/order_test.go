package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func digits() []int { return []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9} }

// A seed's permutation is pinned: recorded runs name their seed, and
// the same seed must present the same order after any refactoring.
func TestShufflePinned(t *testing.T) {
	tests := []struct {
		seed int64
		want []int
	}{
		{0, []int{2, 4, 7, 9, 0, 6, 1, 3, 5, 8}},
		{1, []int{6, 8, 7, 1, 0, 4, 5, 2, 9, 3}},
		{42, []int{7, 5, 1, 0, 8, 9, 3, 4, 2, 6}},
		{-7, []int{6, 0, 2, 9, 7, 1, 8, 3, 5, 4}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.seed), func(t *testing.T) {
			s := digits()
			Shuffle(tt.seed, s)
			if !slices.Equal(s, tt.want) {
				t.Errorf("Shuffle(%d) = %v, want %v", tt.seed, s, tt.want)
			}
		})
	}
}

// One Shuffler shuffling several slices in turn draws from one stream:
// the second slice's order depends on the first, and differs from what a
// Shuffler of its own gives.
func TestShuffleWithPinned(t *testing.T) {
	sh := NewShuffler(1)
	groups, members := []string{"C1", "C2", "C3"}, []string{"x", "y", "z", "w"}
	ShuffleWith(sh, groups)
	ShuffleWith(sh, members)
	if want := []string{"C3", "C1", "C2"}; !slices.Equal(groups, want) {
		t.Errorf("groups %q, want %q", groups, want)
	}
	if want := []string{"x", "y", "w", "z"}; !slices.Equal(members, want) {
		t.Errorf("members %q, want %q", members, want)
	}
	alone := []string{"x", "y", "z", "w"}
	Shuffle(1, alone)
	if want := []string{"z", "w", "y", "x"}; !slices.Equal(alone, want) {
		t.Errorf("members alone %q, want %q", alone, want)
	}
}

// Shuffle is math/rand/v2's Shuffle over a PCG seeded with (seed, "sot"),
// the order sot has always presented.
func TestShuffleIsSeededPCG(t *testing.T) {
	for seed := int64(-50); seed < 50; seed++ {
		for n := range 12 {
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			got := slices.Clone(want)
			r := rand.New(rand.NewPCG(uint64(seed), 0x736f74))
			r.Shuffle(n, func(i, j int) { want[i], want[j] = want[j], want[i] })
			Shuffle(seed, got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %d items: %v, want %v", seed, n, got, want)
			}
		}
	}
}

func TestShuffleKeepsItems(t *testing.T) {
	tests := []struct {
		name string
		in   []string
	}{
		{"nil", nil},
		{"empty", []string{}},
		{"one", []string{"a"}},
		{"repeated", []string{"a", "a", "b", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Clone(tt.in)
			Shuffle(3, got)
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tt.in))) {
				t.Errorf("Shuffle(%q) = %q: not the same items", tt.in, got)
			}
		})
	}
}

func TestBatches(t *testing.T) {
	tests := []struct {
		name     string
		sizes    []int
		budget   int
		overhead int
		want     [][]int
	}{
		{"no items", nil, 10, 2, nil},
		{"no budget", []int{5, 5, 5}, 0, 2, [][]int{{5, 5, 5}}},
		{"negative budget", []int{5, 5, 5}, -1, 2, [][]int{{5, 5, 5}}},
		{"all fit", []int{3, 3, 3}, 11, 2, [][]int{{3, 3, 3}}},
		{"split", []int{3, 3, 3}, 10, 2, [][]int{{3, 3}, {3}}},
		{"exact fit", []int{3, 3, 3}, 8, 2, [][]int{{3, 3}, {3}}},
		{"one over", []int{3, 3, 3}, 7, 2, [][]int{{3}, {3}, {3}}},
		{"too large goes alone", []int{2, 20, 2}, 10, 1, [][]int{{2}, {20}, {2}}},
		{"too large first", []int{20, 2, 2}, 10, 1, [][]int{{20}, {2, 2}}},
		{"overhead over budget", []int{1, 1}, 10, 12, [][]int{{1}, {1}}},
		{"zero sizes", []int{0, 0, 0}, 1, 1, [][]int{{0, 0, 0}}},
		{"order kept", []int{4, 1, 4, 1, 1}, 7, 1, [][]int{{4, 1}, {4, 1, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			got := Batches(tt.sizes, tt.budget, tt.overhead, func(n int) int { calls++; return n })
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("Batches(%v, %d, %d) = %v, want %v", tt.sizes, tt.budget, tt.overhead, got, tt.want)
			}
			if tt.budget > 0 && calls != len(tt.sizes) {
				t.Errorf("size called %d times for %d items", calls, len(tt.sizes))
			}
		})
	}
}

// A batch cannot grow into the next: appending to it leaves the next
// batch as it was.
func TestBatchesDoNotOverlap(t *testing.T) {
	b := Batches([]int{3, 3, 3}, 4, 0, func(n int) int { return n })
	_ = append(b[0], 9)
	if b[1][0] != 3 {
		t.Errorf("appending to the first batch changed the second: %v", b)
	}
}
