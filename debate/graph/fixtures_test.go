package graph

import (
	"fmt"
	"time"
)

// benchThemes are the themes the passages draw their tags and words from:
// passage p is about themes p and p+1 (mod 8), so each shares themes with
// some passages and not others.
var benchThemes = []struct{ tag, words string }{
	{"mortality", "death dying the grave mortal time running out"},
	{"journey", "the road the carriage travel passage toward an end"},
	{"time", "hours seasons the clock the years passing"},
	{"loss", "grief what is gone decline falling away"},
	{"power", "kings empire command ruin of works"},
	{"nature", "leaves gold green spring the natural cycle"},
	{"art", "the sculptor making images that outlast their maker"},
	{"faith", "eternity immortality belief beyond the world"},
}

// benchNode is a node of passage p, branch b, as a classification would
// make it: a resolution of about sixty words, three key claims, three tags.
func benchNode(p, b int) *ArgumentNode {
	t1, t2 := benchThemes[p%8], benchThemes[(p+1)%8]
	pid := fmt.Sprintf("passage-%02d-0000000%d", p, p%10)
	n := &ArgumentNode{
		ID: NodeID(pid, b), Type: NodeTypes[(p+b)%len(NodeTypes)], Passage: Passage{ID: pid, Title: fmt.Sprintf("passage-%02d.txt", p)},
		Topic:      fmt.Sprintf("How passage %d ties %s to %s", p, t1.tag, t2.tag),
		Resolution: fmt.Sprintf("The debaters read %s through %s. One side held that the passage treats %s as its real subject; the other answered that %s frames it, and the closing lines support both. They agreed the imagery of %s carries the argument, and left open whether the speaker accepts it or resists it to the end.", t1.words, t2.words, t1.tag, t2.tag, t2.words),
		Summary:    fmt.Sprintf("%s read through %s, partly settled.", t1.tag, t2.tag),
		Tags:       []string{t1.tag, t2.tag, fmt.Sprintf("passage-%d", p)},
		Created:    time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Turns:      turns(t1.tag, 4),
		Claims: []Claim{
			{Text: fmt.Sprintf("The passage makes %s concrete through %s.", t1.tag, t2.words), Turns: []int{1}},
			{Text: fmt.Sprintf("The turn to %s in the closing lines is deliberate.", t2.tag), Turns: []int{2, 3}},
			{Text: "The speaker's calm is a stance, not an absence of feeling.", Turns: []int{4}},
		},
	}
	if b > 0 {
		n.Branch = fmt.Sprintf("Does passage %d's %s undercut its %s?", p, t2.tag, t1.tag)
	}
	return n
}
