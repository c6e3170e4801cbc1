// Package tokens counts tokens the way OpenAI's o200k_base encoding does, as a
// provider-neutral estimate for budgets, chunking and dry runs.
package tokens

import (
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

var (
	once  sync.Once
	codec tokenizer.Codec
)

// Count returns the number of tokens in s. If the encoding cannot be loaded
// it falls back to one token per four bytes.
func Count(s string) int {
	if s == "" {
		return 0
	}
	once.Do(func() { codec, _ = tokenizer.Get(tokenizer.O200kBase) })
	if codec != nil {
		if n, err := codec.Count(s); err == nil {
			return n
		}
	}
	return (len(s) + 3) / 4
}
