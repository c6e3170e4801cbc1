package debate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm"
)

// MaxPassageBytes is the largest passage read at all; MaxPassageTokens the
// most tokens a passage may have, as every call of a debate sends it.
const (
	MaxPassageBytes  = 512 << 10
	MaxPassageTokens = 32000
)

// Passage is the text a debate is about.
type Passage struct {
	// Name is where it came from: a file's path, "stdin" or "--passage".
	Name string `json:"name"`
	// Text is the passage, with line endings made "\n" and secrets masked.
	Text string `json:"text"`
}

// Words counts the passage's words.
func (p Passage) Words() int { return len(strings.Fields(p.Text)) }

// ReadPassage reads a passage from r; name says where from, for errors.
// An empty, binary, non-UTF-8 or oversized passage is an *engine.UserError
// that says what to do.
func ReadPassage(name string, r io.Reader) (Passage, error) {
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.IsDir() {
			return Passage{}, passageError("%s is a directory; give the file that holds the passage", name)
		}
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxPassageBytes+1))
	if err != nil {
		return Passage{}, fmt.Errorf("read the passage from %s: %w", name, err)
	}
	if len(data) > MaxPassageBytes {
		return Passage{}, passageError("%s is larger than %d KiB; a debate sends its passage with every call, so give one scene, poem or chapter at a time", name, MaxPassageBytes>>10)
	}
	return NewPassage(name, data)
}

// NewPassage checks and cleans a passage's bytes (see ReadPassage).
func NewPassage(name string, data []byte) (Passage, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return Passage{}, passageError("%s looks binary (it holds a NUL byte at offset %d); give a text file", name, i)
	}
	if !utf8.Valid(data) {
		return Passage{}, passageError("%s is not UTF-8 text; convert it first, e.g. with iconv -t UTF-8", name)
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.TrimSpace(text)
	if text == "" {
		return Passage{}, passageError("%s is empty; give the passage to debate", name)
	}
	return Passage{Name: name, Text: secrets.Mask(text)}, nil
}

// checkSize refuses a passage too long for the model's context window:
// the passage, the debate so far and the answer must fit every call.
func (p Passage) checkSize(model string) error {
	limit := min(MaxPassageTokens, llm.ContextWindow(model)/4)
	if n := tokens.Count(p.Text); n > limit {
		return passageError("%s has %d tokens; a debate sends the passage with every call, with the debate so far, so with %s it may have at most %d: give one scene, poem or chapter at a time",
			p.Name, n, model, limit)
	}
	return nil
}

func passageError(format string, args ...any) error {
	return &engine.UserError{Field: "passage", Msg: fmt.Sprintf(format, args...)}
}

// errNoPassage is Prepare's error when Options carries no passage.
var errNoPassage = errors.New("no passage")
