// Package route plans who answers a question in sot ask: the question's
// intent, the sources chosen for relevance and diversity, and the perspective
// role each source is read from.
//
// Everything here is pure planning: no model calls, no I/O, no clock and no
// randomness. The same input always gives the same plan, and every decision
// carries the rule that made it so that sot ask can print it (and --dry-run
// can show it) verbatim.
//
// The steps, in the order sot ask runs them:
//
//   - Classify (or ClassifyAs, for --intent) names the question's intent and
//     complexity with whole-word rules.
//   - Select picks the sources from the retrieved candidates, greedily, by
//     relevance with a bonus for each not-yet-seen value of the diversity
//     fields.
//   - RolesFor gives the perspective roles for an intent; Assign gives every
//     source one of them by a Strategy; SkipSoT says when there are too few
//     sources for a society of thought at all.
//   - Spans gives the cross-source roles (the historian, the synthesizer)
//     one reading each over the sources the strategy gave them and sources
//     that reach across time or themes, instead of one source a reading.
//   - UseGroups, GroupBy and AssignGroups are the group-level decomposition:
//     one perspective per group of sources instead of one per source.
//     Temporal groups are periods (PeriodOf): the quarter or month of a
//     source's parsed date, else a quarter its metadata names that parses
//     as one (ParseQuarter), else undated.
package route
