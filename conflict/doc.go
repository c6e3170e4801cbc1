// Package conflict finds agreement and conflict between the answers of
// several perspectives.
//
// Today it holds the lexical detector of northstar.LM's Societies of
// Thought (seed 000): [Detect] compares every pair of answers, counts the
// words that signal disagreement ("however", "but", "risk", "on the other
// hand", ...) and agreement ("also", "confirms", "as well", ...), measures
// how much vocabulary the two answers share, and calls the pair a conflict
// or an agreement by the seed's rules. The pairs grow with the square of
// the answers, so Detect keeps none of them: it counts them all, lists the
// strongest few hundred, and hands every one to a caller that asks
// (Options.Each, [NDJSON] for a file). Each answer is read once; the
// words two answers share are counted from an index of which answers hold
// each word, on every processor, and the pairs are classified in the
// order of the input, so the outcome is the same on any machine. It
// reads words, not claims: a Critic
// whose answer is full of "risk" and "but" looks like a conflict with
// anyone. A claim-level detector, which names tensions between specific
// points, belongs here next to it.
package conflict
