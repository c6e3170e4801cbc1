package review

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/internal/lazyre"
)

// layout is what a review keeps in its run directory besides the engine's
// files: the review files, the result, the machine outputs, the
// resolutions and the moderator's record.
var layout = run.Layout{
	Owns: func(name string) bool {
		switch name {
		case resultFile, resolutionsFile, moderatorFile:
			return true
		}
		return slices.Contains(machineFiles(), name) || isReviewFile(name)
	},
	Outputs: append([]string{resultFile, resolutionsFile, moderatorFile}, machineFiles()...),
	// PAW's reviews directory may already hold PAW's own REVIEW files,
	// which this review replaces.
	Adopts: func(dir, name string) bool {
		return pawReviews.Re().MatchString(filepath.ToSlash(filepath.Clean(dir))) && isReviewFile(name)
	},
	Field: "output_dir",
}

// pawReviews matches PAW's final-review directory, .paw/work/<id>/reviews.
var pawReviews = lazyre.New(`(^|/)\.paw/work/[^/]+/reviews$`)

func isReviewFile(name string) bool {
	return strings.HasPrefix(name, "REVIEW-") && strings.HasSuffix(name, ".md")
}

// ErrRunInProgress: another process is running a review into the same
// output directory.
var ErrRunInProgress = run.ErrRunInProgress

func machineFiles() []string {
	out := make([]string, 0, len(Formats))
	for _, name := range Formats {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// checkOutputDir refuses an output directory sot cannot write a review
// into (see run.Check), from the top of the project holding the working
// directory. It creates nothing; Execute makes the same checks again, from
// the plan's project top, when it opens the directory.
func checkOutputDir(dir string) error {
	return run.Check(projectRoot("."), dir, layout)
}

// openOutputDir opens a run's output directory for writing, creating it;
// top is the project's top.
func openOutputDir(top, dir string) (*run.Dir, error) {
	return run.Open(top, dir, layout, run.Key())
}
