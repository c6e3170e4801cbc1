package termsafe

import (
	"fmt"
	"unicode/utf8"
)

// JSON escapes, in JSON that encoding/json wrote, the characters a
// terminal acts on that it leaves as they are: DEL, the C1 controls, the
// line and paragraph separators and the bidirectional controls (see Safe). JSON has them only inside strings, where \uXXXX
// reads back as the same character, so the data does not change.
func JSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf && b[i] != 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if Safe(string(r)) || r == utf8.RuneError && n <= 1 {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(b)+16)
		}
		out = append(out, b[last:i]...)
		out = fmt.Appendf(out, `\u%04x`, r)
		i += n
		last = i
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
