package tokens

import (
	_ "embed"
	"encoding/binary"
	"math/bits"
)

// vocabFile is o200k_base's vocabulary as the codec of tiktoken-go holds it
// (TestVocabularyFile checks that, and writes it again with -update): one
// byte for each id below vocabularySize, the length of its token (0: no
// ordinary token has that id), then the tokens one after another in the
// order of their ids.
//
//go:embed o200k_base.tokens
var vocabFile string

// slotsFile is the open-addressing table of vocabFile's tokens, as
// buildSlots makes it (TestVocabularyFile checks that too): slotCount
// little-endian uint32 slots. Shipping the table costs the binary 2 MiB
// and spares every process that counts tokens building it, about 6 ms of
// hashing into 4 MiB of fresh memory, and three times that in a new
// process whose pages are not yet mapped. Its pages are read-only data,
// mapped as the lookups reach them.
//
//go:embed o200k_base.slots
var slotsFile string

// slotBits is the log2 of the number of slots: at least twice as many as
// there are tokens, so that a lookup of a byte string that is no token
// meets a free slot soon.
const (
	slotBits  = 19
	slotCount = 1 << slotBits
	slotMask  = slotCount - 1
	// A slot holds the token's id plus one in its low idBits (0: free),
	// and tagBits of its hash above them, which rule out most other
	// tokens without reading their bytes.
	idBits  = 18
	tagBits = 32 - idBits
)

// vocabulary finds a token's rank (its id) by its bytes, in the table of
// slotsFile.
type vocabulary struct {
	text  string   // the tokens, one after another, in the order of their ids
	start []uint32 // token id's bytes are text[start[id]:start[id+1]]
	slots string   // slotsFile
}

// readVocabulary reads the tokens of a file in vocabFile's format and the
// table of slots built from them, or returns nil if either is not in its
// format.
func readVocabulary(file, slots string) *vocabulary {
	if len(file) < vocabularySize || len(slots) != 4*slotCount || vocabularySize >= 1<<idBits {
		return nil
	}
	v := &vocabulary{text: file[vocabularySize:], start: make([]uint32, vocabularySize+1), slots: slots}
	for id := range vocabularySize {
		v.start[id+1] = v.start[id] + uint32(file[id])
	}
	if int(v.start[vocabularySize]) != len(v.text) {
		return nil
	}
	return v
}

// buildSlots returns the table of slots of v's tokens, in slotsFile's
// format.
func buildSlots(v *vocabulary) []byte {
	table := make([]uint32, slotCount)
	for id := range vocabularySize {
		tok := v.text[v.start[id]:v.start[id+1]]
		if tok == "" {
			continue
		}
		h := hash(tok)
		i := h & slotMask
		for table[i] != 0 {
			i = (i + 1) & slotMask
		}
		table[i] = tag(h)<<idBits | uint32(id+1)
	}
	out := make([]byte, 0, 4*slotCount)
	for _, s := range table {
		out = binary.LittleEndian.AppendUint32(out, s)
	}
	return out
}

// rank returns the id of the token s, and whether s is a token.
func (v *vocabulary) rank(s string) (uint32, bool) {
	h := hash(s)
	t := tag(h)
	for i := h & slotMask; ; i = (i + 1) & slotMask {
		e := uint32(v.slots[4*i]) | uint32(v.slots[4*i+1])<<8 | uint32(v.slots[4*i+2])<<16 | uint32(v.slots[4*i+3])<<24
		if e == 0 {
			return 0, false
		}
		if e>>idBits == t {
			id := e&(1<<idBits-1) - 1
			if v.text[v.start[id]:v.start[id+1]] == s {
				return id, true
			}
		}
	}
}

// tag is the bits of h a slot keeps.
func tag(h uint64) uint32 { return uint32(h >> (64 - tagBits)) }

// hash is a fixed hash of s (the table is built once, for every process):
// its bytes taken eight at a time, each word mixed in by a multiplication
// folded on itself.
func hash(s string) uint64 {
	h := uint64(len(s)) ^ 0x9e3779b97f4a7c15
	for len(s) >= 8 {
		h = mix(h ^ (uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56))
		s = s[8:]
	}
	var w uint64
	for i := range len(s) {
		w |= uint64(s[i]) << (8 * i)
	}
	return mix(h ^ w)
}

func mix(x uint64) uint64 {
	hi, lo := bits.Mul64(x, 0xa0761d6478bd642f)
	return hi ^ lo
}
