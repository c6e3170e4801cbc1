// Package review is sot's review scenario: it gathers a diff, documents or
// freeform text, runs the specialists (each under its lenses) in parallel or
// in debate, synthesizes their findings and writes REVIEW-*.md,
// REVIEW-SYNTHESIS.md and the machine outputs CI consumes.
package review

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
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

// FieldError is an invalid value or combination, naming the field: the
// engine's user error, which every front end reports as a usage error.
// When the value was read from a file, Field starts with the file and line
// ("WorkflowContext.md:12: Final Review Specialist Models"); when it came
// from a flag, Field is the flag ("--specialist-models").
type FieldError = engine.UserError

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return &FieldError{Field: field, Msg: fmt.Sprintf("%q is not one of %s", v, strings.Join(allowed, ", "))}
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
		return &FieldError{Field: "perspective_cap", Msg: fmt.Sprintf("must be a positive integer, not %d", c.PerspectiveCap)}
	}
	if strings.TrimSpace(c.Framing) != "" && c.Type != prompt.TypeFreeform {
		return &FieldError{Field: "framing", Msg: fmt.Sprintf("applies only to type freeform, and type is %s", c.Type)}
	}
	if _, err := persona.ParseSelection(c.Specialists); err != nil {
		return &FieldError{Field: "specialists", Msg: err.Error()}
	}
	if _, err := ParseModels(c.SpecialistModels); err != nil {
		return &FieldError{Field: "specialist_models", Msg: err.Error()}
	}
	p := strings.ToLower(strings.TrimSpace(c.Perspectives))
	if p != "none" && p != "auto" {
		for _, n := range strings.Split(p, ",") {
			if n = strings.TrimSpace(n); n != "" && !persona.ValidID(n) {
				return &FieldError{Field: "perspectives", Msg: fmt.Sprintf("%q is not a lens name; use none, auto or a comma list", n)}
			}
		}
	}
	return nil
}

// ModelSpec is the parsed specialist_models field.
type ModelSpec struct {
	Pool   []string          // unpinned models, in order
	Pinned map[string]string // specialist -> model
	// list is the field as written, so that a spec parsed without the
	// configuration can be read again with it (see assignModels).
	list string
}

// builtinProviders are the provider names every configuration has.
var builtinProviders = map[string]bool{"openai": true, "anthropic": true, "ollama": true, "command": true}

// ParseModels reads a specialist_models list knowing only the built-in
// providers; see ParseModelsFor, which a caller holding the configuration
// should use.
func ParseModels(s string) (ModelSpec, error) { return ParseModelsFor(s, nil) }

// ParseModelsFor reads a specialist_models list: "none", a pool of
// models ("openai:gpt-4.1, claude-sonnet-4-5"), pins, or a mix, comma
// separated. A pin is "specialist=model", or "name:model" whose first part
// is not a provider: PAW writes "security:claude-opus-4.6" and
// "security:anthropic:claude-opus-4.6". The providers are the built-in
// ones and those cfg configures (cfg may be nil), so "openrouter:x" is a
// model when openrouter is configured. Models are not resolved here; see
// CheckSpecialistModels.
func ParseModelsFor(s string, cfg *config.Config) (ModelSpec, error) {
	spec := ModelSpec{Pinned: map[string]string{}, list: s}
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
		name, rest := strings.ToLower(strings.TrimSpace(first)), strings.TrimSpace(rest)
		if hasColon && rest != "" && !isProvider(name, cfg) && persona.ValidID(name) {
			spec.Pinned[name] = rest
			continue
		}
		spec.Pool = append(spec.Pool, item)
	}
	return spec, nil
}

// isProvider reports whether name is a built-in or configured provider.
func isProvider(name string, cfg *config.Config) bool {
	if builtinProviders[name] {
		return true
	}
	if cfg == nil {
		return false
	}
	_, ok := cfg.Providers[name]
	return ok
}

// CheckSpecialistModels resolves every model of a specialist_models list,
// pooled or pinned, through cfg (aliases, then the families a bare name is
// known by). field says where the list came from: a flag such as
// "--specialist-models", or "file:line: field" for a file. Bare names that
// neither an alias nor a family places are reported together in one
// *FieldError that shows the aliases that would fix them. Any other model
// that does not resolve (an unknown provider) is left to the plan, which
// falls back to the session default with a warning, as for a model whose
// provider has no key.
func CheckSpecialistModels(list, field string, cfg *config.Config) error {
	ms, err := ParseModelsFor(list, cfg)
	if err != nil {
		return &FieldError{Field: field, Msg: err.Error()}
	}
	models := slices.Clone(ms.Pool)
	for _, name := range slices.Sorted(maps.Keys(ms.Pinned)) {
		models = append(models, ms.Pinned[name])
	}
	return checkModels(models, field, cfg, false)
}

// CheckModelNames resolves every model of a plain list (multi-model mode's
// --models or Final Review Models) through cfg, as CheckSpecialistModels
// does, and reports every model that does not resolve: multi-model mode
// compares exactly the models named, so none falls back.
func CheckModelNames(models []string, field string, cfg *config.Config) error {
	return checkModels(models, field, cfg, true)
}

// checkModels reports the models that do not resolve: bare names no
// alias or family places, and with all, every other error too.
func checkModels(models []string, field string, cfg *config.Config, all bool) error {
	var unknown, msgs []string
	for _, m := range models {
		m = strings.TrimSpace(m)
		if m == "" || strings.EqualFold(m, "none") {
			continue
		}
		_, err := cfg.ResolveModel(m)
		var ume *config.UnknownModelError
		switch {
		case err == nil:
		case errors.As(err, &ume) && ume.Provider != "":
			// A provider and no model: its own message says how to write it.
			msgs = append(msgs, ume.Error())
		case errors.As(err, &ume):
			if !slices.Contains(unknown, ume.Name) {
				unknown = append(unknown, ume.Name)
			}
		case all && strings.HasPrefix(err.Error(), fmt.Sprintf("model %q", m)):
			msgs = append(msgs, err.Error())
		case all:
			msgs = append(msgs, fmt.Sprintf("model %q: %v", m, err))
		}
	}
	if len(unknown) > 0 {
		var names, fixes []string
		for _, u := range unknown {
			names = append(names, strconv.Quote(u))
			fixes = append(fixes, u+": <provider>:"+u)
		}
		what := "model " + names[0] + " names no provider, and its name is not one sot can place"
		if len(names) > 1 {
			what = "models " + strings.Join(names, ", ") + " name no provider, and their names are not ones sot can place"
		}
		msgs = append([]string{fmt.Sprintf("%s: write each as provider:model (for example openai:%s), or add to your config: aliases: {%s}",
			what, unknown[0], strings.Join(fixes, ", "))}, msgs...)
	}
	if len(msgs) == 0 {
		return nil
	}
	return &FieldError{Field: field, Msg: strings.Join(msgs, "; ")}
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
		return c, &FieldError{Field: "perspective_cap", Msg: fmt.Sprintf("%s sets it to %d; it must be a positive integer", path, *cap.PerspectiveCap)}
	}
	return c, nil
}

// CheckFileModels resolves every model that the context file at path
// names in specialist_models (c is what LoadFile read from it), as
// CheckSpecialistModels does; an error names the file and the field's
// line. A caller whose flag overrides the field does not call it.
func CheckFileModels(path string, c Context, cfg *config.Config) error {
	where := path + ": specialist_models"
	if line := keyLine(path, "specialist_models"); line > 0 {
		where = fmt.Sprintf("%s:%d: specialist_models", path, line)
	}
	return CheckSpecialistModels(c.SpecialistModels, where, cfg)
}

// keyLine is the line of a context file on which a top-level key is set
// (YAML "key:" at the start of a line, or JSON "\"key\":"), or 0.
func keyLine(path, key string) int {
	data, err := os.ReadFile(path)
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
var wcLine = regexp.MustCompile(`^\s*(?:[-*]\s+)?\**([A-Za-z][A-Za-z ]+?)\**\s*:\s*\**\s*(.*?)\s*$`)

var workID = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

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
	Context Context
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
// cfg. A model that does not resolve is a *FieldError naming the file, the
// line and the field, and for a bare name the alias that would fix it.
// Only the models left in w are checked: a caller that overrides a field
// with a flag clears it first (w.Context.SpecialistModels = "",
// w.Models = nil), so that a model the run will not use cannot stop it.
func (w *Workflow) CheckModels(cfg *config.Config) error {
	if err := CheckSpecialistModels(w.Context.SpecialistModels, w.where(fieldFinalReviewSpecModels), cfg); err != nil {
		return err
	}
	return CheckModelNames(w.Models, w.where(fieldFinalReviewModels), cfg)
}

// LoadWorkflow reads the Final Review fields of a PAW WorkflowContext.md.
func LoadWorkflow(path string) (Workflow, error) {
	f, err := os.Open(path)
	if err != nil {
		return Workflow{}, fmt.Errorf("read workflow context: %w", err)
	}
	defer f.Close()
	w := Workflow{Path: path, Set: map[string]bool{}, Lines: map[string]int{}}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		m := wcLine.FindStringSubmatch(sc.Text())
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
				return w, &FieldError{Field: fmt.Sprintf("%s:%d: %s", path, line, fieldFinalAgentReview), Msg: fmt.Sprintf("%q is not enabled or disabled", val)}
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
				return w, &FieldError{Field: fmt.Sprintf("%s:%d: %s", path, line, fieldFinalReviewPerspective), Msg: fmt.Sprintf("%q is not a positive integer", val)}
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
		return w, &FieldError{Field: w.where(fieldFinalReviewMode), Msg: fmt.Sprintf("%q is not society-of-thought, single-model or multi-model", w.Mode)}
	}
	if !workID.MatchString(w.WorkID) || strings.Contains(w.WorkID, "..") {
		field := "Work ID"
		switch {
		case w.Lines[field] > 0:
		case w.Lines["Feature Slug"] > 0:
			field = "Feature Slug"
		default:
			field = "work id (the name of the file's directory)"
		}
		return w, &FieldError{Field: w.where(field), Msg: fmt.Sprintf("%q cannot be used in a path; use letters, digits, '.', '_' and '-'", w.WorkID)}
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
