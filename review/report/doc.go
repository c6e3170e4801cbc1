// Package report renders a review's results: the per-specialist
// REVIEW-{SPECIALIST}[-{LENS}].md files, REVIEW-SYNTHESIS.md with the
// sections PAW's final review specifies, and the machine formats CI systems
// read (one JSON document, SARIF 2.1.0 for code scanning, and reviewdog's
// rdjsonl). Every function is pure and deterministic: the same input
// renders the same bytes, so a resumed run writes what an uninterrupted
// one would have written.
//
// Text that came from a model or a user (claims, grounds, narratives) is
// never trusted to keep the document's shape: single-line fields have
// their whitespace collapsed, and multi-line text is block-quoted with
// any heading markers escaped, so it cannot open a new section (package
// internal/markdown does both).
package report
