package paw

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/yamlfile"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review"
)

// LoadFile reads a review context from a YAML or JSON file.
func LoadFile(path string) (review.Context, error) {
	var c review.Context
	data, err := plainfile.Read(path)
	if err != nil {
		return c, fmt.Errorf("read review context: %w", err)
	}
	// A cap of 0 would read as "not set" once decoded; note whether the
	// file wrote one, so that it is rejected rather than defaulted.
	var cap struct {
		PerspectiveCap *int `yaml:"perspective_cap" json:"perspective_cap"`
	}
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, fmt.Errorf("%s: %w", path, err)
		}
		_ = json.Unmarshal(data, &cap)
	} else {
		if err := yamlfile.Decode(path, data, &c, true, 0); err != nil {
			return c, err
		}
		_ = yamlfile.Decode(path, data, &cap, false, 0)
	}
	if cap.PerspectiveCap != nil && *cap.PerspectiveCap < 1 {
		return c, &review.FieldError{Field: "perspective_cap", Msg: fmt.Sprintf("%s sets it to %d; it must be a positive integer", path, *cap.PerspectiveCap)}
	}
	return c, nil
}

// CheckFileModels resolves every model that the context file at path
// names in specialist_models (c is what LoadFile read from it), as
// review.CheckSpecialistModels does; an error names the file and the field's
// line. A caller whose flag overrides the field does not call it.
func CheckFileModels(path string, c review.Context, cfg *config.Config) error {
	where := path + ": specialist_models"
	if line := keyLine(path, "specialist_models"); line > 0 {
		where = fmt.Sprintf("%s:%d: specialist_models", path, line)
	}
	return review.CheckSpecialistModels(c.SpecialistModels, where, cfg)
}

// keyLine is the line of a context file on which a top-level key is set
// (YAML "key:" at the start of a line, or JSON "\"key\":"), or 0.
func keyLine(path, key string) int {
	data, err := plainfile.Read(path)
	if err != nil {
		return 0
	}
	yamlKey := regexp.MustCompile(`^` + regexp.QuoteMeta(key) + `\s*:`)
	jsonKey := regexp.MustCompile(`"` + regexp.QuoteMeta(key) + `"\s*:`)
	for i, line := range strings.Split(string(data), "\n") {
		if yamlKey.MatchString(line) || jsonKey.MatchString(line) {
			return i + 1
		}
	}
	return 0
}

// wcLine matches "Key: value" lines of a WorkflowContext.md, with or without
// list markers and bold.
var wcLine = lazyre.New(`^\s*(?:[-*]\s+)?\**([A-Za-z][A-Za-z ]+?)\**\s*:\s*\**\s*(.*?)\s*$`)

var workID = lazyre.New(`^[A-Za-z0-9._-]+$`)

// Workflow is what a PAW WorkflowContext.md says about the final review.
type Workflow struct {
	// Path is the file read.
	Path   string
	WorkID string
	// Mode is society-of-thought, single-model or multi-model.
	Mode string
	// Models are the Final Review Models, for multi-model mode.
	Models []string
	// Context holds the Final Review fields; OutputDir defaults to
	// .paw/work/<work-id>/reviews/.
	Context review.Context
	// Set lists the contract fields the file set.
	Set map[string]bool
	// Disabled is true when the file says "Final Agent Review: disabled":
	// the work asks for no final review. DisabledLine is that line.
	Disabled     bool
	DisabledLine int
	// Lines maps each field the file set, by its name in the file
	// ("Final Review Specialist Models"), to its line.
	Lines map[string]int
}

// Workflow field names, as PAW writes them.
const (
	fieldFinalAgentReview       = "Final Agent Review"
	fieldFinalReviewModels      = "Final Review Models"
	fieldFinalReviewSpecModels  = "Final Review Specialist Models"
	fieldFinalReviewMode        = "Final Review Mode"
	fieldFinalReviewPerspective = "Final Review Perspective Cap"
)

// where is "path:line: field" for a field the file set, or "path: field".
func (w *Workflow) where(field string) string {
	if line := w.Lines[field]; line > 0 {
		return fmt.Sprintf("%s:%d: %s", w.Path, line, field)
	}
	return w.Path + ": " + field
}

// CheckModels resolves every model the file names, in Final Review
// Specialist Models (pooled or pinned) and Final Review Models, through
// cfg. A model that does not resolve is a *review.FieldError naming the file, the
// line and the field, and for a bare name the alias that would fix it.
// Only the models left in w are checked: a caller that overrides a field
// with a flag clears it first (w.Context.SpecialistModels = "",
// w.Models = nil), so that a model the run will not use cannot stop it.
func (w *Workflow) CheckModels(cfg *config.Config) error {
	if err := review.CheckSpecialistModels(w.Context.SpecialistModels, w.where(fieldFinalReviewSpecModels), cfg); err != nil {
		return err
	}
	return review.CheckModelNames(w.Models, w.where(fieldFinalReviewModels), cfg)
}

// LoadWorkflow reads the Final Review fields of a PAW WorkflowContext.md.
func LoadWorkflow(path string) (Workflow, error) {
	f, err := plainfile.Open(path)
	if err != nil {
		return Workflow{}, fmt.Errorf("read workflow context: %w", err)
	}
	defer f.Close()
	w := Workflow{Path: path, Set: map[string]bool{}, Lines: map[string]int{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := wcLine.Re().FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key, val := strings.ToLower(strings.TrimSpace(m[1])), strings.Trim(strings.TrimSpace(m[2]), "`*")
		if name, ok := workflowFields[key]; ok {
			if _, dup := w.Lines[name]; !dup {
				w.Lines[name] = line
			}
		}
		set := func(field string, dst *string) {
			*dst = val
			w.Set[field] = true
		}
		switch key {
		case "final agent review":
			switch strings.ToLower(val) {
			case "enabled":
				w.Disabled, w.DisabledLine = false, 0
			case "disabled":
				w.Disabled, w.DisabledLine = true, line
			default:
				return w, &review.FieldError{Field: fmt.Sprintf("%s:%d: %s", path, line, fieldFinalAgentReview), Msg: fmt.Sprintf("%q is not enabled or disabled", val)}
			}
		case "work id", "feature slug":
			w.WorkID = val
		case "final review mode":
			w.Mode = strings.ToLower(val)
		case "final review models":
			for _, m := range strings.Split(val, ",") {
				if m = strings.TrimSpace(m); m != "" && !strings.EqualFold(m, "none") {
					w.Models = append(w.Models, m)
				}
			}
		case "final review specialists":
			set("specialists", &w.Context.Specialists)
		case "final review interaction mode":
			set("interaction_mode", &w.Context.InteractionMode)
		case "final review interactive":
			set("interactive", &w.Context.Interactive)
		case "final review specialist models":
			set("specialist_models", &w.Context.SpecialistModels)
		case "final review perspectives":
			set("perspectives", &w.Context.Perspectives)
		case "final review perspective cap":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return w, &review.FieldError{Field: fmt.Sprintf("%s:%d: %s", path, line, fieldFinalReviewPerspective), Msg: fmt.Sprintf("%q is not a positive integer", val)}
			}
			w.Context.PerspectiveCap = n
			w.Set["perspective_cap"] = true
		}
	}
	if err := sc.Err(); err != nil {
		return w, err
	}
	if w.WorkID == "" {
		// .paw/work/<work-id>/WorkflowContext.md
		w.WorkID = filepath.Base(filepath.Dir(path))
	}
	switch w.Mode {
	case "", "society-of-thought", "single-model", "multi-model":
	default:
		return w, &review.FieldError{Field: w.where(fieldFinalReviewMode), Msg: fmt.Sprintf("%q is not society-of-thought, single-model or multi-model", w.Mode)}
	}
	if !workID.Re().MatchString(w.WorkID) || strings.Contains(w.WorkID, "..") {
		field := "Work ID"
		switch {
		case w.Lines[field] > 0:
		case w.Lines["Feature Slug"] > 0:
			field = "Feature Slug"
		default:
			field = "work id (the name of the file's directory)"
		}
		return w, &review.FieldError{Field: w.where(field), Msg: fmt.Sprintf("%q cannot be used in a path; use letters, digits, '.', '_' and '-'", w.WorkID)}
	}
	w.Context.OutputDir = workflowOutputDir(path, w.WorkID)
	return w, nil
}

// workflowFields are the fields of a WorkflowContext.md whose lines are
// recorded, by their lower-cased name.
var workflowFields = map[string]string{}

func init() {
	for _, f := range []string{"Work ID", "Feature Slug", fieldFinalAgentReview, fieldFinalReviewMode, fieldFinalReviewModels,
		"Final Review Specialists", "Final Review Interaction Mode", "Final Review Interactive", fieldFinalReviewSpecModels,
		"Final Review Perspectives", fieldFinalReviewPerspective} {
		workflowFields[strings.ToLower(f)] = f
	}
}

// workflowOutputDir is .paw/work/<work-id>/reviews at the top of the
// project holding the WorkflowContext.md at path, relative to the current
// directory when it can be, so that it does not depend on where sot runs.
func workflowOutputDir(path, workID string) string {
	return project.FromWorkDir(filepath.Join(projectTop(filepath.Dir(path)), ".paw", "work", workID, "reviews"))
}

// projectTop is the absolute top of the project holding dir: the nearest
// parent with .git, .sot or .paw, or dir itself. It is where review puts a
// run's default output directory, found the same way.
func projectTop(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return persona.RepoRoot(dir)
}
