// Package review is sot's review scenario: it gathers a diff, documents or
// freeform text, runs the specialists (each under its lenses) in parallel or
// in debate, synthesizes their findings and writes REVIEW-*.md,
// REVIEW-SYNTHESIS.md and the machine outputs CI consumes.
package review

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/yamlfile"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"

	"github.com/sotlabs/sot/internal/project"
)

// Interaction modes.
const (
	Parallel = "parallel"
	Debate   = "debate"
)

// Context is the review context of PAW's input contract: what to
// review and how to orchestrate it.
type Context struct {
	// Type is diff, artifacts or freeform.
	Type string `yaml:"type" json:"type"`
	// Coordinates say what is reviewed: a diff range, artifact paths, or a
	// description of freeform content.
	Coordinates string `yaml:"coordinates" json:"coordinates"`
	// OutputDir receives REVIEW-*.md (default .sot/reviews/<run-id>/).
	OutputDir string `yaml:"output_dir" json:"output_dir"`
	// Specialists is all, a comma list, or adaptive:N.
	Specialists string `yaml:"specialists" json:"specialists"`
	// Context filters specialists by their declared domain.
	Context string `yaml:"context" json:"context"`
	// InteractionMode is parallel or debate.
	InteractionMode string `yaml:"interaction_mode" json:"interaction_mode"`
	// Interactive is true, false or smart.
	Interactive string `yaml:"interactive" json:"interactive"`
	// SpecialistModels is none, a pool of models, pinned specialist:model
	// pairs, or a mix, comma separated.
	SpecialistModels string `yaml:"specialist_models" json:"specialist_models"`
	// Framing is the preamble of a freeform review.
	Framing string `yaml:"framing" json:"framing"`
	// Perspectives is none, auto or a comma list of lenses.
	Perspectives string `yaml:"perspectives" json:"perspectives"`
	// PerspectiveCap bounds the lenses per specialist (default 2).
	PerspectiveCap int `yaml:"perspective_cap" json:"perspective_cap"`
}

// Defaults fills what the contract leaves to defaults.
func (c *Context) Defaults() {
	if c.Type == "" {
		c.Type = prompt.TypeDiff
	}
	if c.Specialists == "" {
		c.Specialists = "all"
	}
	if c.InteractionMode == "" {
		c.InteractionMode = Parallel
	}
	if c.Interactive == "" {
		c.Interactive = persona.InteractiveSmart
	}
	if c.Perspectives == "" {
		c.Perspectives = "auto"
	}
	if c.PerspectiveCap == 0 {
		c.PerspectiveCap = 2
	}
	if c.SpecialistModels == "" {
		c.SpecialistModels = "none"
	}
}

// FieldError is an invalid value or combination, naming the field.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return &FieldError{field, fmt.Sprintf("%q is not one of %s", v, strings.Join(allowed, ", "))}
}

// Validate rejects invalid values and contradictory combinations.
func (c *Context) Validate() error {
	c.Type = strings.ToLower(strings.TrimSpace(c.Type))
	c.InteractionMode = strings.ToLower(strings.TrimSpace(c.InteractionMode))
	c.Interactive = strings.ToLower(strings.TrimSpace(c.Interactive))
	if err := oneOf("type", c.Type, prompt.TypeDiff, prompt.TypeArtifacts, prompt.TypeFreeform); err != nil {
		return err
	}
	if err := oneOf("interaction_mode", c.InteractionMode, Parallel, Debate); err != nil {
		return err
	}
	if err := oneOf("interactive", c.Interactive, persona.InteractiveTrue, persona.InteractiveFalse, persona.InteractiveSmart); err != nil {
		return err
	}
	if c.PerspectiveCap < 1 {
		return &FieldError{"perspective_cap", fmt.Sprintf("must be a positive integer, not %d", c.PerspectiveCap)}
	}
	if strings.TrimSpace(c.Framing) != "" && c.Type != prompt.TypeFreeform {
		return &FieldError{"framing", fmt.Sprintf("applies only to type freeform, and type is %s", c.Type)}
	}
	if _, err := persona.ParseSelection(c.Specialists); err != nil {
		return &FieldError{"specialists", err.Error()}
	}
	if _, err := ParseModels(c.SpecialistModels); err != nil {
		return &FieldError{"specialist_models", err.Error()}
	}
	p := strings.ToLower(strings.TrimSpace(c.Perspectives))
	if p != "none" && p != "auto" {
		for _, n := range strings.Split(p, ",") {
			if n = strings.TrimSpace(n); n != "" && !persona.ValidID(n) {
				return &FieldError{"perspectives", fmt.Sprintf("%q is not a lens name; use none, auto or a comma list", n)}
			}
		}
	}
	return nil
}

// ModelSpec is the parsed specialist_models field.
type ModelSpec struct {
	Pool   []string          // unpinned models, in order
	Pinned map[string]string // specialist -> model
}

// knownProviders are the prefixes that make "x:y" a model rather than a pin.
var knownProviders = map[string]bool{"openai": true, "anthropic": true, "ollama": true, "command": true}

// ParseModels reads "none", a pool ("openai:gpt-4.1, anthropic:claude-sonnet-4-5"),
// pinned pairs ("security=anthropic:claude-sonnet-4-5" or
// "security:anthropic:claude-sonnet-4-5"), or a mix.
func ParseModels(s string) (ModelSpec, error) {
	spec := ModelSpec{Pinned: map[string]string{}}
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "none") {
		return spec, nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if name, model, ok := strings.Cut(item, "="); ok {
			name, model = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(model)
			if !persona.ValidID(name) || model == "" {
				return spec, fmt.Errorf("%q: write a pinned pair as specialist=provider:model", item)
			}
			spec.Pinned[name] = model
			continue
		}
		first, rest, hasColon := strings.Cut(item, ":")
		if hasColon && !knownProviders[strings.ToLower(first)] && strings.Contains(rest, ":") {
			spec.Pinned[strings.ToLower(first)] = rest // security:anthropic:claude-...
			continue
		}
		spec.Pool = append(spec.Pool, item)
	}
	return spec, nil
}

// LoadFile reads a review context from a YAML or JSON file.
func LoadFile(path string) (Context, error) {
	var c Context
	data, err := os.ReadFile(path)
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
		return c, &FieldError{"perspective_cap", fmt.Sprintf("%s sets it to %d; it must be a positive integer", path, *cap.PerspectiveCap)}
	}
	return c, nil
}

// wcLine matches "Key: value" lines of a WorkflowContext.md, with or without
// list markers and bold.
var wcLine = regexp.MustCompile(`^\s*(?:[-*]\s+)?\**([A-Za-z][A-Za-z ]+?)\**\s*:\s*\**\s*(.*?)\s*$`)

var workID = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Workflow is what a PAW WorkflowContext.md says about the final review.
type Workflow struct {
	WorkID string
	// Mode is society-of-thought, single-model or multi-model.
	Mode string
	// Models are the Final Review Models, for multi-model mode.
	Models []string
	// Context holds the Final Review fields; OutputDir defaults to
	// .paw/work/<work-id>/reviews/.
	Context Context
	// Set lists the contract fields the file set.
	Set map[string]bool
}

// LoadWorkflow reads the Final Review fields of a PAW WorkflowContext.md.
func LoadWorkflow(path string) (Workflow, error) {
	f, err := os.Open(path)
	if err != nil {
		return Workflow{}, fmt.Errorf("read workflow context: %w", err)
	}
	defer f.Close()
	w := Workflow{Set: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := wcLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key, val := strings.ToLower(strings.TrimSpace(m[1])), strings.Trim(strings.TrimSpace(m[2]), "`*")
		set := func(field string, dst *string) {
			*dst = val
			w.Set[field] = true
		}
		switch key {
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
				return w, fmt.Errorf("%s:%d: Final Review Perspective Cap %q is not a positive integer", path, line, val)
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
		return w, fmt.Errorf("%s: Final Review Mode %q is not society-of-thought, single-model or multi-model", path, w.Mode)
	}
	if !workID.MatchString(w.WorkID) || strings.Contains(w.WorkID, "..") {
		return w, fmt.Errorf("%s: work id %q cannot be used in a path", path, w.WorkID)
	}
	w.Context.OutputDir = workflowOutputDir(path, w.WorkID)
	return w, nil
}

// workflowOutputDir is .paw/work/<work-id>/reviews at the top of the
// project holding the WorkflowContext.md at path, relative to the current
// directory when it can be, so that it does not depend on where sot runs.
func workflowOutputDir(path, workID string) string {
	return project.FromWorkDir(filepath.Join(projectRoot(filepath.Dir(path)), ".paw", "work", workID, "reviews"))
}

// Merge fills the empty fields of c from o.
func (c *Context) Merge(o Context) {
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&c.Type, o.Type)
	fill(&c.Coordinates, o.Coordinates)
	fill(&c.OutputDir, o.OutputDir)
	fill(&c.Specialists, o.Specialists)
	fill(&c.Context, o.Context)
	fill(&c.InteractionMode, o.InteractionMode)
	fill(&c.Interactive, o.Interactive)
	fill(&c.SpecialistModels, o.SpecialistModels)
	fill(&c.Framing, o.Framing)
	fill(&c.Perspectives, o.Perspectives)
	if c.PerspectiveCap == 0 {
		c.PerspectiveCap = o.PerspectiveCap
	}
}
