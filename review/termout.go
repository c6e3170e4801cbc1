package review

import (
	"io"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/termsafe"
)

// termOut passes moderator mode's output to the terminal with every
// control character a model's answer or a name could carry (ESC, C1 and
// bidirectional controls, a lone carriage return) escaped as visible text
// (termsafe.Text); line breaks and tabs are kept. An answer arrives in
// pieces, so a piece that ends inside a UTF-8 sequence or on a carriage
// return is held back until the next one (or Flush): streamed text is
// escaped as it would be whole.
type termOut struct {
	w    io.Writer
	held []byte
}

func (t *termOut) Write(p []byte) (int, error) {
	buf := append(t.held, p...)
	cut := len(buf)
	if cut > 0 && buf[cut-1] == '\r' {
		cut--
	} else {
		cut = wholeRunes(buf)
	}
	t.held = append([]byte(nil), buf[cut:]...)
	if cut > 0 {
		if _, err := io.WriteString(t.w, termsafe.Text(string(buf[:cut]))); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is held back, escaped.
func (t *termOut) Flush() error {
	if len(t.held) == 0 {
		return nil
	}
	s := string(t.held)
	t.held = nil
	_, err := io.WriteString(t.w, termsafe.Text(s))
	return err
}

// wholeRunes is the length of b without a UTF-8 sequence begun at its end
// and not finished.
func wholeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
