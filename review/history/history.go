// Package history carries a review's findings from one review of a change
// to the next: it identifies each finding by a fingerprint that survives
// moved lines (its file, the normalised text of the lines it points at, and
// its claim), finds those lines again in the new version of the file, and
// sorts the earlier review's findings into those carried over (their lines
// are still there) and those resolved (their lines changed), keeping out
// every finding the user dismissed before.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"

	"github.com/sotlabs/sot/review/synthesis"
)

// Reader returns the lines of a file (a path relative to the project's
// top, forward slashes) as the reviewed version has it; ok is false when
// the file is not there.
type Reader func(path string) (lines []string, ok bool)

// Lines splits a file's text into lines.
func Lines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// normalize is a line as the anchor sees it: without the whitespace a
// formatter moves (indentation, runs of blanks, the line's end).
func normalize(line string) string { return strings.Join(strings.Fields(line), " ") }

// span is the lines start..end (1-based, inclusive; end 0 or before start
// means start alone) of lines, or nil when they are not all there.
func span(lines []string, start, end int) []string {
	if end < start {
		end = start
	}
	if start < 1 || end > len(lines) {
		return nil
	}
	return lines[start-1 : end]
}

// hashLines is the anchor hash of lines: their normalised text, blank
// lines left out.
func hashLines(lines []string) string {
	h := sha256.New()
	for _, l := range lines {
		if n := normalize(l); n != "" {
			h.Write([]byte(n))
			h.Write([]byte{'\n'})
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// AnchorOf is the anchor of the lines start..end of lines, nil when they
// are not all there.
func AnchorOf(lines []string, start, end int) *synthesis.LineAnchor {
	s := span(lines, start, end)
	if s == nil {
		return nil
	}
	return &synthesis.LineAnchor{Hash: hashLines(s), Lines: len(s)}
}

// words are a claim's words, lowercased, without punctuation.
func words(claim string) []string {
	return strings.FieldsFunc(strings.ToLower(claim), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// Fingerprint identifies a finding across reviews: its file, the anchor
// of its lines, and its claim's words.
func Fingerprint(path string, a *synthesis.LineAnchor, claim string) string {
	h := sha256.New()
	h.Write([]byte(path + "\x00" + a.Hash + "\x00" + strings.Join(words(claim), " ")))
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// Stamp gives each item that points at lines of a file read can read its
// anchor and fingerprint.
func Stamp(items []synthesis.Item, read Reader) {
	for i := range items {
		it := &items[i]
		loc := it.Location
		if loc.File == "" || loc.StartLine == 0 {
			continue
		}
		lines, ok := read(loc.File)
		if !ok {
			continue
		}
		if a := AnchorOf(lines, loc.StartLine, loc.EndLine); a != nil {
			it.Anchor, it.Fingerprint = a, Fingerprint(loc.File, a, it.Claim)
		}
	}
}

// relocate finds the lines of anchor a in lines and returns where they
// start (1-based), 0 when they are gone. Where they stand more than once,
// the place nearest the old start wins.
func relocate(lines []string, a *synthesis.LineAnchor, oldStart int) int {
	best, dist := 0, 0
	for s := 1; s+a.Lines-1 <= len(lines); s++ {
		if normalize(lines[s-1]) == "" {
			continue // an anchor never starts on a blank line it skipped
		}
		if hashLines(lines[s-1:s-1+a.Lines]) != a.Hash {
			continue
		}
		d := s - oldStart
		if d < 0 {
			d = -d
		}
		if best == 0 || d < dist {
			best, dist = s, d
		}
	}
	return best
}

// Same reports whether two items are the same finding: the same
// fingerprint, or the same file and lines with claims that share most of
// their words (a model words the same finding a little differently each
// time).
func Same(a, b *synthesis.Item) bool {
	if a.Fingerprint != "" && a.Fingerprint == b.Fingerprint {
		return true
	}
	if a.Anchor == nil || b.Anchor == nil || a.Location.File != b.Location.File || a.Anchor.Hash != b.Anchor.Hash {
		return false
	}
	return overlap(words(a.Claim), words(b.Claim)) >= 0.5
}

// overlap is the Jaccard index of two word lists.
func overlap(a, b []string) float64 {
	set := map[string]int{}
	for _, w := range a {
		set[w] |= 1
	}
	for _, w := range b {
		set[w] |= 2
	}
	both := 0
	for _, v := range set {
		if v == 3 {
			both++
		}
	}
	if len(set) == 0 {
		return 0
	}
	return float64(both) / float64(len(set))
}

// Carry sorts the findings of an earlier review (run) into those whose
// lines the reviewed version still has, moved to where they are now, and
// those whose lines changed or went away: resolved. A finding that points
// at no lines is carried as it is.
func Carry(run string, prior []synthesis.Item, read Reader) (carried, resolved []synthesis.Item) {
	for _, it := range prior {
		from := it.From
		if from == "" {
			from = run
		}
		it.From, it.Outcome = from, nil
		if it.Anchor == nil {
			it.History = synthesis.HistoryCarried
			carried = append(carried, it)
			continue
		}
		lines, ok := read(it.Location.File)
		at := 0
		if ok {
			at = relocate(lines, it.Anchor, it.Location.StartLine)
		}
		if at == 0 {
			it.History = synthesis.HistoryResolved
			resolved = append(resolved, it)
			continue
		}
		if it.Location.EndLine >= it.Location.StartLine {
			it.Location.EndLine += at - it.Location.StartLine
		}
		it.Location.StartLine = at
		it.History = synthesis.HistoryCarried
		carried = append(carried, it)
	}
	return carried, resolved
}

// Dismissal is a finding the user dismissed, as the project's record of
// decisions keeps it.
type Dismissal struct {
	Fingerprint string                `json:"fingerprint"`
	File        string                `json:"file"`
	Anchor      *synthesis.LineAnchor `json:"anchor"`
	Claim       string                `json:"claim"`
	Reason      string                `json:"reason"`
	RunID       string                `json:"run_id"`
}

// item is the dismissal as an item Same can compare.
func (d Dismissal) item() synthesis.Item {
	it := synthesis.Item{Claim: d.Claim, Anchor: d.Anchor, Fingerprint: d.Fingerprint}
	it.Location.File = d.File
	return it
}

// Merge puts a review's own items and those carried over from an earlier
// review together: an item the user dismissed before (now or in any
// earlier review) leaves the list for dismissed, with the reason; an item
// found again that was carried over keeps its history (carried over,
// since the review that first found it) and takes the place of the old
// one; the carried items found no more follow the new ones, without an id
// (the earlier review's means nothing in this one).
func Merge(current, carried []synthesis.Item, dismissals []Dismissal) (items, dismissed []synthesis.Item) {
	isDismissed := func(it *synthesis.Item) bool {
		for _, d := range dismissals {
			di := d.item()
			if Same(it, &di) {
				it.Outcome = &synthesis.Outcome{Status: "dismissed", Reason: d.Reason}
				if it.From == "" {
					it.From = d.RunID
				}
				return true
			}
		}
		return false
	}
	used := make([]bool, len(carried))
	for _, it := range current {
		if isDismissed(&it) {
			dismissed = append(dismissed, it)
			continue
		}
		it.History = synthesis.HistoryNew
		for j := range carried {
			if !used[j] && Same(&it, &carried[j]) {
				used[j] = true
				it.History, it.From = synthesis.HistoryCarried, carried[j].From
				break
			}
		}
		items = append(items, it)
	}
	for j, it := range carried {
		if used[j] {
			continue
		}
		it.ID = "" // the earlier review's id: the caller numbers it anew
		if isDismissed(&it) {
			dismissed = append(dismissed, it)
			continue
		}
		items = append(items, it)
	}
	return items, dismissed
}
