package ask

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// excerptBytes is the most a span shows of a source it adds (route.Span's
// members that are not its own): the passages nearest the question. Such
// a source is read in full by its own role, so the span needs it only to
// link across time or themes, and reading it whole twice cost the society
// of thought most of its token overhead over a plain reading.
const excerptBytes = 800

// excerpt returns about max bytes of text (the markers of what was left
// out come on top): its paragraphs that share the most words with the
// question's terms, the best first, kept in the order of the text, with
// "…" where paragraphs were left out. A paragraph longer
// than what is left is cut at its last sentence end (else its last space)
// that fits. With no paragraph sharing a word, the text's opening is kept.
// cut reports whether anything was left out; a text of at most max bytes is
// returned whole.
func excerpt(text string, terms []string, max int) (out string, cut bool) {
	text = strings.TrimSpace(text)
	if len(text) <= max {
		return text, false
	}
	var paras []string
	for p := range strings.SplitSeq(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			paras = append(paras, p)
		}
	}
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = true
	}
	score := make([]int, len(paras))
	for i, p := range paras {
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(p, func(r rune) bool { return !wordRune(r) }) {
			if w = strings.ToLower(w); want[w] && !seen[w] {
				seen[w] = true
				score[i]++
			}
		}
	}
	order := make([]int, len(paras))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return score[b] - score[a] })
	if score[order[0]] == 0 {
		// Nothing shares a word with the question: the opening, which
		// usually says what the source is.
		slices.Sort(order)
	}
	const gap = "\n\n…\n\n"
	kept := map[int]string{}
	left := max
	for _, i := range order {
		if len(kept) > 0 && score[i] == 0 && score[order[0]] > 0 {
			break
		}
		p := paras[i]
		if len(p) > left {
			if len(kept) > 0 {
				continue
			}
			p = cutAt(p, left-len(" …")) + " …"
		}
		kept[i] = p
		left -= len(p) + len(gap)
		if left <= 0 {
			break
		}
	}
	var b strings.Builder
	prev := -1
	for i := range paras {
		p, ok := kept[i]
		if !ok {
			continue
		}
		switch {
		case prev < 0 && i > 0:
			b.WriteString("…\n\n")
		case prev >= 0 && i == prev+1:
			b.WriteString("\n\n")
		case prev >= 0:
			b.WriteString(gap)
		}
		b.WriteString(p)
		prev = i
	}
	if prev < len(paras)-1 {
		b.WriteString("\n\n…")
	}
	return strings.TrimSpace(b.String()), true
}

// cutAt returns the longest start of p of at most n bytes that ends a
// sentence, else one that ends before a space, else n bytes cut at a rune
// boundary.
func cutAt(p string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(p) <= n {
		return p
	}
	head := p[:n]
	for !utf8.RuneStart(p[len(head)]) {
		head = head[:len(head)-1]
	}
	if i := strings.LastIndexAny(head, ".!?"); i > n/3 {
		return head[:i+1]
	}
	if i := strings.LastIndexByte(head, ' '); i > 0 {
		return strings.TrimRight(head[:i], " ")
	}
	return head
}

// wordRune is what index.Terms counts as part of a word.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}
