package secrets

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// searchLimit is how far past its keyword a match is looked for.
const searchLimit = 64 << 10

// detect returns the secrets the rules find in text, unsorted. As in
// gitleaks, a rule runs only on a text that holds one of its keywords. In
// a long text, running every such rule over the whole text would take
// seconds (gitleaks' generic rule alone costs a microsecond a byte with
// Go's regular expressions), so a rule is run only where its keywords are:
//
//   - Most rules begin, after a bounded lead that holds no line break,
//     with a part whose every match starts with one of the rule's keywords
//     (gitleaks' generic template: up to 50 identifier characters, then
//     the keyword). Such a rule is tried, anchored, at each keyword, from
//     its lead before the keyword: exactly where a match can start.
//   - Other rules run on the lines around each keyword, as many either
//     side as a match can span (see reach), or on the whole text when that
//     is unbounded.
func detect(text, path string) []Span {
	rs := rules()
	found := rs.index.Scan(text)
	var starts []int // where each line of text starts, once needed
	var spans []Span
	for i, r := range rs.rules {
		kw := rs.ruleKeywords[i]
		if found == nil && len(kw) > 0 {
			continue // no keyword occurs in text
		}
		var at []int // where the keywords start
		for _, k := range kw {
			for _, end := range found.Of(k) {
				at = append(at, end-len(rs.words[k]))
			}
		}
		if len(kw) > 0 && len(at) == 0 || !r.compile() {
			continue
		}
		if r.path != nil && !r.path.MatchString(path) {
			continue
		}
		switch {
		case len(kw) == 0:
			spans = r.find(spans, text, 0, len(text), rs.global)
		case r.lead >= 0:
			spans = r.findAnchored(spans, text, at, rs.global)
		case r.reach < 0:
			spans = r.find(spans, text, 0, len(text), rs.global)
		default:
			if starts == nil {
				starts = lineStarts(text)
			}
			for _, w := range r.windows(text, starts, at) {
				spans = r.find(spans, text, w[0], w[1], rs.global)
			}
		}
	}
	return spans
}

// find appends the secrets r finds in text[from:to] to spans, with their
// offsets in text.
func (r *rule) find(spans []Span, text string, from, to int, global []*allowlist) []Span {
	for _, m := range r.re.FindAllStringIndex(text[from:to], -1) {
		spans = r.check(spans, text, from+m[0], from+m[1], global)
	}
	return spans
}

// findAnchored appends to spans the secrets of the matches of r that start
// within r.lead bytes before one of the keywords starting at the offsets
// at, on the keyword's line. The search for each ends where a match
// holding the keyword must end: at the end of the keyword's line, or of
// the lines a match can go on to (see lineSpan); searchLimit bytes past
// the keyword for a rule whose matches have no bound. Like a search of the
// whole text, it reports matches that do not overlap.
func (r *rule) findAnchored(spans []Span, text string, at []int, global []*allowlist) []Span {
	slices.Sort(at)
	if r.lead == 0 || r.leadClass != nil {
		return r.findAt(spans, text, at, global)
	}
	done := 0        // the end of the last match
	from, to := 0, 0 // the window being gathered
	search := func() {
		for _, m := range r.re.FindAllStringIndex(text[from:to], -1) {
			spans = r.check(spans, text, from+m[0], from+m[1], global)
			done = max(done, from+m[1])
		}
	}
	for _, k := range at {
		if k < done {
			continue
		}
		start := max(k-r.lead, done)
		if i := strings.LastIndexByte(text[start:k], '\n'); i >= 0 {
			start += i + 1
		}
		end := min(len(text), k+searchLimit)
		if r.reach >= 0 {
			end = r.lineSpan(text, k)
		}
		// Windows that overlap are searched as one.
		if to > from && start < to {
			to = max(to, end)
			continue
		}
		if to > from {
			search()
		}
		from, to = max(start, done), end
	}
	if to > from {
		search()
	}
	return spans
}

// findAt is findAnchored for a rule whose every match starts with one of
// its keywords, or with a run of one class of characters before it: it is
// tried, anchored, at one place for each keyword, the keyword or the start
// of that run. (A match that starts later in the run would also match from
// its start, which a search of the whole text finds first.) The character
// before is part of the text tried, so that a \b at the start of the rule
// sees it.
func (r *rule) findAt(spans []Span, text string, at []int, global []*allowlist) []Span {
	done := 0
	for _, k := range at {
		if k < done {
			continue
		}
		end := min(len(text), k+searchLimit)
		if r.reach >= 0 {
			end = r.lineSpan(text, k)
		}
		start := k
		if r.leadClass != nil {
			for start > done && k-start < r.lead && r.leadClass[text[start-1]] {
				start--
			}
		}
		re, from := r.atStart, start
		if start > 0 {
			re, from = r.afterOne, start-1
		}
		if m := re.FindStringSubmatchIndex(text[from:end]); m != nil {
			spans = r.check(spans, text, from+m[2], from+m[3], global)
			done = from + m[3]
		}
	}
	return spans
}

// classLead returns, for a rule that begins with a bounded run of one
// class of ASCII characters (at most n of them) followed by a part whose
// every match starts with one of keywords, n and the class, like gitleaks'
// generic template "[\w.-]{0,50}?(?:access|auth|...)"; 0 otherwise.
func classLead(expr string, keywords []string) (int, *[256]bool) {
	t, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, nil
	}
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	if t.Op != syntax.OpConcat || len(t.Sub) < 2 {
		return 0, nil
	}
	lead := t.Sub[0]
	if lead.Op != syntax.OpRepeat || lead.Min != 0 || lead.Max <= 0 || lead.Sub[0].Op != syntax.OpCharClass {
		return 0, nil
	}
	rest := &syntax.Regexp{Op: syntax.OpConcat, Flags: t.Flags, Sub: t.Sub[1:]}
	if !startsWithKeyword(rest.Simplify(), keywords) {
		return 0, nil
	}
	// Case folding adds letters outside ASCII that stand for ASCII ones
	// (the Kelvin sign for k, the long s for s); other characters outside
	// ASCII mean the class is not one this handles. A lead holding a
	// folded letter starts at the letter after it here: the secret found
	// is the same.
	var class [256]bool
	ranges := lead.Sub[0].Rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for c := ranges[i]; c <= ranges[i+1]; c++ {
			switch {
			case c < utf8.RuneSelf:
				class[c] = true
			case unicode.SimpleFold(c) < utf8.RuneSelf || unicode.SimpleFold(unicode.SimpleFold(c)) < utf8.RuneSelf:
			default:
				return 0, nil
			}
		}
	}
	return lead.Max, &class
}

// lineSpan returns where the lines a match holding offset k can reach
// end: r.reach lines past k's line, or, for a loose rule, the lines past it
// without letters or digits and one line more, within r.reach.
func (r *rule) lineSpan(text string, k int) int {
	end := lineEnd(text, k)
	for n := 0; n < r.reach && end < len(text); n++ {
		next := lineEnd(text, end)
		line := text[end:next]
		end = next
		if r.loose && !blank(line) {
			break
		}
	}
	return end
}

// lineEnd returns the offset just past the line break that ends the line
// holding offset k, or the length of text.
func lineEnd(text string, k int) int {
	if i := strings.IndexByte(text[k:], '\n'); i >= 0 {
		return k + i + 1
	}
	return len(text)
}

// blank reports whether s holds no ASCII letter or digit.
func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// plan chooses how r is searched for (see detect): it sets r.lead when r
// begins with a keyword after a bounded lead, and r.reach and r.loose, the
// lines a match can span.
func (r *rule) plan() {
	r.reach, r.lead = -1, -1
	t, err := syntax.Parse(r.Regex, syntax.Perl)
	if err != nil {
		return
	}
	// Before Simplify turns a counted repetition into nested optional
	// parts, newlines can tell that a repeated part crosses lines.
	r.reach, r.loose = newlines(t)
	t = t.Simplify()
	var keywords []string
	for _, k := range r.Keywords {
		keywords = append(keywords, strings.ToLower(k))
	}
	r.lead = leadBytes(t, keywords)
	if n, class := classLead(r.Regex, keywords); n > 0 {
		r.lead, r.leadClass = n, class
	}
	if r.lead == 0 || r.leadClass != nil {
		// The match is group 1; the rule's own groups follow it.
		var err1, err2 error
		r.atStart, err1 = regexp.Compile(`\A(` + r.Regex + `)`)
		r.afterOne, err2 = regexp.Compile(`\A(?s:.)(` + r.Regex + `)`)
		if err1 != nil || err2 != nil {
			r.lead = -1
		}
	}
}

// leadBytes returns the most bytes a match of t holds before a part whose
// every match starts with one of keywords, or -1 when t has no such part
// or what precedes it has no bound or may hold a line break.
func leadBytes(t *syntax.Regexp, keywords []string) int {
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	parts := []*syntax.Regexp{t}
	if t.Op == syntax.OpConcat {
		parts = t.Sub
	}
	n := 0
	for _, p := range parts {
		if startsWithKeyword(p, keywords) {
			return n
		}
		b, nl := maxBytes(p)
		if b < 0 || nl {
			return -1
		}
		n += b
	}
	return -1
}

// startsWithKeyword reports whether every match of t starts with one of
// keywords (lower case; letters compared in lower case).
func startsWithKeyword(t *syntax.Regexp, keywords []string) bool {
	heads, _, ok := leads(t)
	if !ok {
		return false
	}
	for _, h := range heads {
		if !slices.ContainsFunc(keywords, func(k string) bool { return k != "" && strings.HasPrefix(h, k) }) {
			return false
		}
	}
	return true
}

// maxLeads bounds the strings leads enumerates.
const maxLeads = 256

// leads returns strings, in lower case, one of which starts every match of
// t; whole reports that they are t's every match, not only its
// beginnings. ok is false when there would be more than maxLeads.
func leads(t *syntax.Regexp) (heads []string, whole, ok bool) {
	switch t.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(t.Rune))}, true, true
	case syntax.OpCharClass:
		var set []string
		for i := 0; i+1 < len(t.Rune); i += 2 {
			if t.Rune[i+1]-t.Rune[i] > 8 {
				return []string{""}, false, true
			}
			for c := t.Rune[i]; c <= t.Rune[i+1]; c++ {
				if s := string(unicode.ToLower(c)); !slices.Contains(set, s) {
					set = append(set, s)
				}
			}
		}
		if len(set) > 8 {
			return []string{""}, false, true
		}
		return set, true, true
	case syntax.OpCapture:
		return leads(t.Sub[0])
	case syntax.OpAlternate, syntax.OpQuest:
		whole = true
		subs := t.Sub
		if t.Op == syntax.OpQuest {
			heads = []string{""}
		}
		for _, s := range subs {
			h, w, k := leads(s)
			if !k || len(heads)+len(h) > maxLeads {
				return nil, false, false
			}
			heads = append(heads, h...)
			whole = whole && w
		}
		return heads, whole, true
	case syntax.OpConcat:
		heads = []string{""}
		for _, s := range t.Sub {
			h, w, k := leads(s)
			if !k || len(heads)*len(h) > maxLeads {
				return nil, false, false
			}
			var next []string
			for _, a := range heads {
				for _, b := range h {
					next = append(next, a+b)
				}
			}
			heads = next
			if !w {
				return heads, false, true
			}
		}
		return heads, true, true
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true, true
	}
	return []string{""}, false, true
}

// maxBytes returns the most bytes a match of t can hold, or -1 when there
// is no bound, and whether a match can hold a line break.
func maxBytes(t *syntax.Regexp) (int, bool) {
	switch t.Op {
	case syntax.OpLiteral:
		n := 0
		for _, c := range t.Rune {
			if t.Flags&syntax.FoldCase != 0 {
				n += utf8.UTFMax // a letter may match another case of another width
			} else {
				n += utf8.RuneLen(c)
			}
		}
		return n, slices.Contains(t.Rune, '\n')
	case syntax.OpCharClass:
		if len(t.Rune) == 0 {
			return 0, false
		}
		nl := false
		for i := 0; i+1 < len(t.Rune); i += 2 {
			nl = nl || t.Rune[i] <= '\n' && '\n' <= t.Rune[i+1]
		}
		return utf8.RuneLen(min(t.Rune[len(t.Rune)-1], unicode.MaxRune)), nl
	case syntax.OpAnyCharNotNL:
		return utf8.UTFMax, false
	case syntax.OpAnyChar:
		return utf8.UTFMax, true
	case syntax.OpCapture, syntax.OpQuest:
		return maxBytes(t.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		n, nl := 0, false
		for _, s := range t.Sub {
			m, l := maxBytes(s)
			if m < 0 {
				return -1, true
			}
			if t.Op == syntax.OpConcat {
				n += m
			} else {
				n = max(n, m)
			}
			nl = nl || l
		}
		return n, nl
	case syntax.OpRepeat:
		m, l := maxBytes(t.Sub[0])
		if m < 0 || t.Max < 0 {
			return -1, true
		}
		return m * t.Max, l
	case syntax.OpStar, syntax.OpPlus:
		return -1, true
	}
	return 0, false
}

// lineStarts returns the offset of every line of text.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// windows returns the parts of text, as [start, end) offsets in order and
// not overlapping, that a match of r holding a keyword that starts at one
// of the offsets at can cover. A part starts at the start of a line and ends
// after a line break or at the end of text. It spans r.reach lines either
// side of the keyword's line, or, for a loose rule, the lines either side
// without letters or digits and one line beyond them.
func (r *rule) windows(text string, starts, at []int) [][2]int {
	slices.Sort(at)
	var out [][2]int
	last := len(starts) - 1
	covered := -1 // the last line in out
	for _, p := range at {
		l := sort.SearchInts(starts, p+1) - 1 // the line of the keyword's start, p
		if l <= covered-r.reach {
			continue // within a window already taken
		}
		lo, hi := max(0, l-r.reach), min(last, l+r.reach)
		if r.loose {
			lo, hi = l, l
			for lo > 0 && l-lo < r.reach {
				lo--
				if !blankLine(text, starts, lo) {
					break
				}
			}
			for hi < last && hi-l < r.reach {
				hi++
				if !blankLine(text, starts, hi) {
					break
				}
			}
		}
		start, end := starts[lo], len(text)
		if hi < last {
			end = starts[hi+1]
		}
		if n := len(out); n > 0 && start <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], end)
		} else {
			out = append(out, [2]int{start, end})
		}
		covered = max(covered, hi)
	}
	return out
}

// blankLine reports whether line l of text holds no ASCII letter or digit.
func blankLine(text string, starts []int, l int) bool {
	end := len(text)
	if l+1 < len(starts) {
		end = starts[l+1]
	}
	return blank(text[starts[l]:end])
}

// newlines returns the most line breaks a match of t can hold, or -1 when
// there is no limit (a repeated part that can match a line break), and
// whether every part of t that can match a line break matches no ASCII
// letter or digit (white space, quotes, operators), so that a match can
// only cross lines holding none.
func newlines(t *syntax.Regexp) (int, bool) {
	switch t.Op {
	case syntax.OpLiteral:
		return strings.Count(string(t.Rune), "\n"), true
	case syntax.OpCharClass:
		nl, word := false, false
		for i := 0; i+1 < len(t.Rune); i += 2 {
			lo, hi := t.Rune[i], t.Rune[i+1]
			nl = nl || lo <= '\n' && '\n' <= hi
			word = word || lo <= '9' && hi >= '0' || lo <= 'Z' && hi >= 'A' || lo <= 'z' && hi >= 'a'
		}
		if !nl {
			return 0, true
		}
		return 1, !word
	case syntax.OpAnyChar:
		return 1, false
	case syntax.OpCapture, syntax.OpConcat, syntax.OpAlternate:
		n, loose := 0, true
		for _, s := range t.Sub {
			m, l := newlines(s)
			if m < 0 {
				return -1, false
			}
			if t.Op == syntax.OpAlternate {
				n = max(n, m)
			} else {
				n += m
			}
			loose = loose && (m == 0 || l)
		}
		return n, loose
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		m, l := newlines(t.Sub[0])
		switch {
		case m == 0, t.Op == syntax.OpQuest:
			return m, l
		case m > 0 && t.Op == syntax.OpRepeat && t.Max >= 0:
			// Repeated, a part that crosses a line break and matches a
			// letter or digit crosses lines holding them: "(?:a\n){0,3}".
			return m * t.Max, l && (t.Max <= 1 || !wordy(t.Sub[0]))
		}
		return -1, false
	}
	return 0, true
}

// wordy reports whether some match of t holds an ASCII letter or digit.
func wordy(t *syntax.Regexp) bool {
	switch t.Op {
	case syntax.OpLiteral:
		return !blank(string(t.Rune))
	case syntax.OpCharClass:
		for i := 0; i+1 < len(t.Rune); i += 2 {
			lo, hi := t.Rune[i], t.Rune[i+1]
			if lo <= '9' && hi >= '0' || lo <= 'Z' && hi >= 'A' || lo <= 'z' && hi >= 'a' {
				return true
			}
		}
		return false
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	for _, s := range t.Sub {
		if wordy(s) {
			return true
		}
	}
	return false
}
