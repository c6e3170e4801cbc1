// Package compare is the comparison harness of sot ask --compare: it asks
// each question under the seed's six A/B configurations (Configurations),
// one run of package ask each, and measures what every run cost and found
// from its journal, the same way in every configuration. It writes
// comparison.json, and compare.html when asked, in a directory of its own
// (Dir); the runs keep theirs.
//
// It is a user of package ask, as a caller of Prepare and Execute would
// be; ask imports nothing of it.
package compare
