// Package review is sot's review scenario: it gathers a diff, documents or
// freeform text, runs the specialists (each under its lenses) in parallel or
// in debate, synthesizes their findings and writes REVIEW-*.md,
// REVIEW-SYNTHESIS.md and the machine outputs CI consumes.
package review

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
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
