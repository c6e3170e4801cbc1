package tokens

import (
	_ "embed"
	"hash/maphash"
)

// vocabFile is o200k_base's vocabulary as the codec of tiktoken-go holds it
// (TestVocabularyFile checks that, and writes it again with -update): one
// byte for each id below vocabularySize, the length of its token (0: no
// ordinary token has that id), then the tokens one after another in the
// order of their ids. Reading it takes a few milliseconds where the
// codec's own tables take about ninety, and it holds no pointers for the
// garbage collector to scan.
//
//go:embed o200k_base.tokens
var vocabFile string

// vocabulary finds a token's rank (its id) by its bytes, in an
// open-addressing table built from vocabFile.
type vocabulary struct {
	text  string   // the tokens, one after another, in the order of their ids
	start []uint32 // token id's bytes are text[start[id]:start[id+1]]
	// slots holds, for each token, the high 32 bits of its hash and its
	// id plus one (the low 32 bits), at the first free slot from its
	// hash's low bits on; 0 is a free slot. Half of them stay free.
	slots []uint64
	mask  uint64
	seed  maphash.Seed
}

// readVocabulary builds the table from a file in vocabFile's format, or
// returns nil if the file is not in that format.
func readVocabulary(file string) *vocabulary {
	if len(file) < vocabularySize {
		return nil
	}
	v := &vocabulary{text: file[vocabularySize:], start: make([]uint32, vocabularySize+1), seed: maphash.MakeSeed()}
	n := 0
	for id := range vocabularySize {
		v.start[id+1] = v.start[id] + uint32(file[id])
		if file[id] > 0 {
			n++
		}
	}
	if int(v.start[vocabularySize]) != len(v.text) {
		return nil
	}
	size := 1
	for size < 2*n {
		size <<= 1
	}
	v.slots, v.mask = make([]uint64, size), uint64(size-1)
	for id := range vocabularySize {
		tok := v.text[v.start[id]:v.start[id+1]]
		if tok == "" {
			continue
		}
		h := maphash.String(v.seed, tok)
		i := h & v.mask
		for v.slots[i] != 0 {
			i = (i + 1) & v.mask
		}
		v.slots[i] = h&^0xffffffff | uint64(id+1)
	}
	return v
}

// rank returns the id of the token s, and whether s is a token.
func (v *vocabulary) rank(s string) (uint32, bool) {
	h := maphash.String(v.seed, s)
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		e := v.slots[i]
		if e == 0 {
			return 0, false
		}
		if e&^0xffffffff == h&^0xffffffff {
			id := uint32(e) - 1
			if v.text[v.start[id]:v.start[id+1]] == s {
				return id, true
			}
		}
	}
}
