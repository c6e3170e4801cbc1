// Package analyze holds the two runs of sot sources that call a model
// over the indexed sources rather than answer a question: Analyze extracts
// the SoT metadata of the sources that carry none (sot sources analyze),
// and NameThemes names the themes of their topic tags (sot sources group
// --thematic).
//
// Each is a run of its own, begun through the scenario runner in a
// directory under the corpus index (Dir, ThemesDir), so that its calls are
// journaled, replayed when the same command runs again, and cached. What
// they store (the analysis in the index, ask.ThemesFile beside it) is what
// package ask reads when it picks and groups a question's sources; ask
// imports nothing of this package.
package analyze
