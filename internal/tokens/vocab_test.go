package tokens

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

var update = flag.Bool("update", false, "write o200k_base.tokens and o200k_base.slots again from the codec")

// TestVocabularyFile checks that the embedded vocabulary is the codec's,
// id for id, and its table of slots the one buildSlots makes from it; with
// -update it writes both files from the codec.
func TestVocabularyFile(t *testing.T) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	var lengths, text bytes.Buffer
	ids := make([]uint, 1)
	for id := range vocabularySize {
		ids[0] = uint(id)
		tok, err := codec.Decode(ids)
		if err != nil {
			tok = ""
		}
		if len(tok) > 255 {
			t.Fatalf("token %d is %d bytes long; the file gives a token at most 255", id, len(tok))
		}
		lengths.WriteByte(byte(len(tok)))
		text.WriteString(tok)
	}
	want := append(lengths.Bytes(), text.Bytes()...)
	if *update {
		if err := os.WriteFile("o200k_base.tokens", want, 0o644); err != nil {
			t.Fatal(err)
		}
		v := readVocabulary(string(want), string(make([]byte, 4*slotCount)))
		if err := os.WriteFile("o200k_base.slots", buildSlots(v), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if vocabFile != string(want) {
		t.Fatal("o200k_base.tokens is not the codec's vocabulary: run go test ./internal/tokens -run TestVocabularyFile -update")
	}
	v := readVocabulary(vocabFile, slotsFile)
	if v == nil {
		t.Fatal("o200k_base.tokens or o200k_base.slots cannot be read")
	}
	if string(buildSlots(v)) != slotsFile {
		t.Fatal("o200k_base.slots is not the table of o200k_base.tokens: run go test ./internal/tokens -run TestVocabularyFile -update")
	}
	for id := range vocabularySize {
		ids[0] = uint(id)
		tok, err := codec.Decode(ids)
		if err != nil || tok == "" {
			continue
		}
		if got, ok := v.rank(tok); !ok || got != uint32(id) {
			t.Fatalf("token %q: rank %d, %v; want %d", tok, got, ok, id)
		}
	}
	for _, s := range []string{"", "no such token in any vocabulary", "\xff\xfe"} {
		if _, ok := v.rank(s); ok {
			t.Errorf("%q is found as a token", s)
		}
	}
}

func BenchmarkReadVocabulary(b *testing.B) {
	for b.Loop() {
		readVocabulary(vocabFile, slotsFile)
	}
}
