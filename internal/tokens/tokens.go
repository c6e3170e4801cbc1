// Package tokens counts tokens the way OpenAI's o200k_base encoding does, as a
// provider-neutral estimate for budgets, chunking and dry runs.
package tokens

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
)

var (
	once sync.Once
	// fast counts as the o200k_base codec does, five times faster; nil if
	// the vocabulary cannot be read.
	fast *counter

	// memo remembers the counts of large strings: a run composes the same
	// rules and material into many prompts, and hashing is a hundred times
	// faster than tokenizing.
	memo sync.Map // memoKey -> int
	seed = maphash.MakeSeed()
)

type memoKey struct {
	hash uint64
	n    int
}

// memoMin is the size from which counts are remembered.
const memoMin = 64

// Count returns the number of tokens in s. If the encoding cannot be loaded
// it falls back to one token per four bytes.
func Count(s string) int {
	if s == "" {
		return 0
	}
	var key memoKey
	if len(s) >= memoMin {
		key = memoKey{maphash.String(seed, s), len(s)}
		if n, ok := memo.Load(key); ok {
			return n.(int)
		}
	}
	n := count(s)
	if len(s) >= memoMin {
		memo.Store(key, n)
	}
	return n
}

func count(s string) int {
	once.Do(load)
	if fast != nil {
		if n, err := fast.count(s); err == nil {
			return n
		}
	}
	return (len(s) + 3) / 4
}

// load reads the encoding's vocabulary (under a millisecond of CPU); the
// codec itself, which takes about ninety, is loaded only for the rare text
// the counter leaves to it.
func load() {
	loaded.Store(true)
	if v := readVocabulary(vocabFile, slotsFile); v != nil {
		fast = newCounter(v, loadCodec)
	}
}

// loadCodec returns the o200k_base codec, loading it on first use.
var loadCodec = sync.OnceValues(func() (tokenizer.Codec, error) {
	return tokenizer.Get(tokenizer.O200kBase)
})

// loaded is set when the encoding is asked for (Warm) or starts loading.
var loaded atomic.Bool

// Loaded reports whether this process has loaded the encoding, or started
// to: a run far from every budget counts nothing and never should.
func Loaded() bool { return loaded.Load() }

// Within reports whether texts together count at most budget tokens. No
// text has more tokens than bytes, so texts that fit in bytes are not
// tokenized, and a run far from its budget never loads the encoding.
func Within(budget int, texts ...string) bool {
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	if n <= budget {
		return true
	}
	n = 0
	for _, t := range texts {
		n += Count(t)
	}
	return n <= budget
}

// Warm loads the encoding in the background, so the first Count of a run
// does not wait for it.
func Warm() {
	loaded.Store(true)
	go once.Do(load)
}
