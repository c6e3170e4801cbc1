package material

import (
	"strconv"
	"strings"
)

// Line markers of rendered diff lines, and the kind of an artifact line.
const (
	markContext = ' '
	markAdded   = '+'
	markRemoved = '-'
	markPlain   = '|' // artifact or freeform line
)

// minWidth is the narrowest line-number column.
const minWidth = 4

// numWidth returns the width of the line-number column for files whose
// highest line number is max.
func numWidth(max int) int {
	w := len(strconv.Itoa(max))
	if w < minWidth {
		w = minWidth
	}
	return w
}

// lineWriter renders numbered lines into a builder and records the line
// ranges it wrote.
type lineWriter struct {
	b       *strings.Builder
	width   int
	num     []byte // scratch space for formatting numbers
	changed rangeList
	shown   rangeList
}

func newLineWriter(b *strings.Builder, width int) *lineWriter {
	return &lineWriter{b: b, width: width, num: make([]byte, 0, 20)}
}

func (w *lineWriter) pad(n int) {
	w.num = strconv.AppendInt(w.num[:0], int64(n), 10)
	for i := len(w.num); i < w.width; i++ {
		w.b.WriteByte(' ')
	}
	w.b.Write(w.num)
}

// diffLine writes one diff line: "  41 +| text", "  42  | text" or
// "     -| text". n is the new-file line number (ignored for removed lines).
func (w *lineWriter) diffLine(mark byte, n int, text string) {
	if mark == markRemoved {
		for i := 0; i < w.width; i++ {
			w.b.WriteByte(' ')
		}
	} else {
		w.pad(n)
		w.shown.add(n)
		if mark == markAdded {
			w.changed.add(n)
		}
	}
	w.b.WriteByte(' ')
	w.b.WriteByte(mark)
	w.b.WriteByte('|')
	if text != "" {
		w.b.WriteByte(' ')
		w.b.WriteString(text)
	}
	w.b.WriteByte('\n')
}

// oldLine writes a removed line of a deleted file, numbered as in the old
// file: "  12 -| text". Its number is not a line of the new side, so no
// range is recorded.
func (w *lineWriter) oldLine(n int, text string) {
	w.pad(n)
	w.b.WriteString(" -|")
	if text != "" {
		w.b.WriteByte(' ')
		w.b.WriteString(text)
	}
	w.b.WriteByte('\n')
}

// plainLine writes one artifact line: "  12 | text".
func (w *lineWriter) plainLine(n int, text string) {
	w.pad(n)
	w.shown.add(n)
	w.b.WriteString(" |")
	if text != "" {
		w.b.WriteByte(' ')
		w.b.WriteString(text)
	}
	w.b.WriteByte('\n')
}

// rangeList accumulates line numbers, given in increasing order, as ranges.
type rangeList []LineRange

func (r *rangeList) add(n int) {
	if k := len(*r); k > 0 {
		last := &(*r)[k-1]
		if n <= last.End {
			return
		}
		if n == last.End+1 {
			last.End = n
			return
		}
	}
	*r = append(*r, LineRange{n, n})
}

// parseLine decodes one rendered line. It returns the marker (markContext,
// markAdded, markRemoved or markPlain), the new-file line number (0 for
// removed lines, including a deleted file's lines numbered as in the old
// file) and the text; mark is 0 for header, note and "@@" lines.
func parseLine(s string) (mark byte, num int, text string) {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	d := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	digits := i - d
	switch {
	case digits == 0:
		// A removed line: the number column and separator are blank.
		if d < minWidth+1 || i+1 >= len(s) || s[i] != markRemoved || s[i+1] != '|' {
			return 0, 0, ""
		}
		mark = markRemoved
		i += 2
	case i+1 >= len(s) || s[i] != ' ':
		return 0, 0, ""
	case s[i+1] == '|':
		mark = markPlain
		i += 2
	case (s[i+1] == markContext || s[i+1] == markAdded || s[i+1] == markRemoved) && i+2 < len(s) && s[i+2] == '|':
		mark = s[i+1]
		i += 3
	default:
		return 0, 0, ""
	}
	if digits > 0 && mark != markRemoved { // a deleted file's lines carry old numbers, not new-side ones
		num, _ = strconv.Atoi(s[d : d+digits])
	}
	if i < len(s) && s[i] == ' ' {
		i++
	}
	return mark, num, s[i:]
}

// isContentLine reports whether a rendered line is a numbered or removed
// line (as opposed to a header, note or "@@" line).
func isContentLine(s string) bool {
	m, _, _ := parseLine(s)
	return m != 0
}

// splitLines splits text into lines without their newlines; a final newline
// does not produce an empty last line.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
