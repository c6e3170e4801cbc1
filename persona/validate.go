package persona

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Required and recommended "## " sections of each Markdown-bodied kind.
var (
	SpecialistSections = []string{"Identity & Narrative Backstory", "Cognitive Strategy", "Domain Boundary", "Behavioral Rules", "Demand Rationale", "Example Review Comments"}
	// specialistRequired are the sections without which a specialist has no
	// method to follow; the others only draw a warning.
	specialistRequired = []string{"Identity & Narrative Backstory", "Cognitive Strategy"}
	LensSections       = []string{"Lens Type", "Parameters", "Overlay Template", "Novelty Constraint"}
	lensRequired       = []string{"Lens Type", "Overlay Template"}
	// SharedRuleSections are the sections of the shared rules. The Output
	// Format may be PAW's "Required Output Format", and the severities
	// may be defined inside it instead of in a Severity section of their
	// own, as PAW's shared rules do.
	SharedRuleSections = []string{"Anti-Sycophancy Rules", "Confidence Scoring", "Severity", "Output Format"}
	// LensTypes are the values a lens's Lens Type section may hold.
	LensTypes = []string{"baseline", "temporal", "adversarial"}
	// lensTypeSynonyms are other words for a lens type: PAW's baseline
	// perspective is of type neutral.
	lensTypeSynonyms = map[string]string{"neutral": "baseline"}
	// severities are the words that define the severity scale.
	severities = []string{"must-fix", "should-fix", "consider"}
)

// LensType is the type a lens declares in its Lens Type section, lower-
// cased, with synonyms read as the type they stand for ("neutral" is
// "baseline"); "" when the lens declares none.
func (p *Persona) LensType() string {
	t := strings.ToLower(firstWord(p.Section("Lens Type")))
	if s, ok := lensTypeSynonyms[t]; ok {
		return s
	}
	return t
}

var colorPattern = lazyre.New(`^#[0-9a-fA-F]{6}$`)

// methodHint says what a role's "## Method" holds, for the warnings
// about one that is missing or empty.
const methodHint = "2 or 3 numbered steps (about 50 tokens in all) that say how the role reads the sources, such as \"1. Take the sources in date order and ...\""

// OverlayWords bounds the length of a lens's Overlay Template.
const (
	OverlayMinWords = 50
	OverlayMaxWords = 100
)

// validate checks the fields and sections the persona's kind needs.
// ReservedReviewName is the name no specialist may take: its review file
// would be REVIEW-SYNTHESIS.md.
const ReservedReviewName = "synthesis"

func (p *Persona) validate() []Problem {
	var probs []Problem
	add := func(line int, warn bool, format string, args ...any) {
		probs = append(probs, Problem{File: p.Path, Line: line, Message: fmt.Sprintf(format, args...), Warning: warn})
	}
	needSections := func(all, required []string) {
		for _, s := range all {
			h, line, ok := p.Heading(s)
			if ok && strings.TrimSpace(p.Sections[h]) != "" {
				continue
			}
			req := contains(required, s)
			if ok {
				add(line, !req, "section \"## %s\" is empty; write its content below the heading", h)
				continue
			}
			at, where := p.anchor()
			add(at, !req, "section \"## %s\" is missing; add it %s", s, where)
		}
	}
	needField := func(name, value string) {
		if strings.TrimSpace(value) == "" {
			if line := p.FrontmatterLine(name); line > 0 {
				add(line, false, "frontmatter field %q is empty; a %s needs it", name, p.Kind)
				return
			}
			at := p.frontmatterEnd
			if at == 0 {
				at = 1
			}
			add(at, false, "frontmatter field %q is required for a %s; add it to the frontmatter (ending on this line)", name, p.Kind)
		}
	}
	fmLine := func(key string) int {
		if l := p.FrontmatterLine(key); l > 0 {
			return l
		}
		return max(p.frontmatterEnd, 1)
	}
	switch p.Kind {
	case Specialist:
		if p.ID == ReservedReviewName {
			// The file's name is at fault, not a line of it.
			add(1, false, "the name %q is taken by REVIEW-SYNTHESIS.md, which this specialist's review would overwrite; rename the file", p.ID)
			return probs
		}
		if strings.TrimSpace(p.Body) == "" {
			add(max(p.bodyLine, 1), false, "the specialist has no body: write its identity, cognitive strategy and rules")
			return probs
		}
		needSections(SpecialistSections, specialistRequired)
		switch c := p.Meta.Context.(type) {
		case nil, string:
			if s, _ := c.(string); strings.Contains(s, ",") {
				add(fmLine("context"), false, "context %q lists several values; a specialist declares exactly one context", s)
			}
		default:
			add(fmLine("context"), false, "context must be a single value such as implementation, not %T", c)
		}
	case Lens:
		needSections(LensSections, lensRequired)
		if t := p.LensType(); t != "" && !contains(LensTypes, t) {
			_, line, _ := p.Heading("Lens Type")
			add(line, true, "Lens Type %q is not one of %s (or neutral, PAW's word for baseline)", t, strings.Join(LensTypes, ", "))
		}
		if o := p.Section("Overlay Template"); o != "" {
			_, line, _ := p.Heading("Overlay Template")
			if !strings.Contains(o, "{specialist}") {
				add(line, false, "the Overlay Template must contain the placeholder {specialist}")
			}
			if n := len(strings.Fields(o)); n < OverlayMinWords || n > OverlayMaxWords {
				add(line, true, "the Overlay Template has %d words; keep it between %d and %d", n, OverlayMinWords, OverlayMaxWords)
			}
		}
	case Role:
		needField("description", p.Meta.Description)
		needField("prompt_prefix", p.Meta.PromptPrefix)
		if p.Meta.Weight <= 0 || p.Meta.Weight > 1 {
			add(fmLine("weight"), false, "weight must be above 0 and at most 1, not %g", p.Meta.Weight)
		}
		if p.Meta.Tier != "primary" && p.Meta.Tier != "specialized" {
			add(fmLine("tier"), false, "tier must be primary or specialized, not %q", p.Meta.Tier)
		}
		if p.Meta.Tier == "specialized" && len(p.Meta.Triggers) == 0 {
			add(fmLine("triggers"), true, "a specialized role without triggers is never chosen by query matching")
		}
		if p.Meta.Color != "" && !colorPattern.Re().MatchString(p.Meta.Color) {
			add(fmLine("color"), false, "color must look like #3b82f6, not %q", p.Meta.Color)
		}
		// sot ask sends a role's method to the model that reads from it;
		// without one, the model gets only the prompt prefix and the
		// description, a label rather than a way of working.
		if h, line, ok := p.Heading("Method"); !ok {
			at, where := p.anchor()
			add(at, true, "the role has no \"## Method\", so sot ask sends only its prompt_prefix and description; add the section %s, with %s", where, methodHint)
		} else if strings.TrimSpace(p.Sections[h]) == "" {
			add(line, true, "section \"## %s\" is empty, so sot ask sends only the role's prompt_prefix and description; write below the heading %s", h, methodHint)
		}
	case Debater:
		needField("name", p.Meta.Name)
		needField("stance", p.Meta.Stance)
		needField("focus", p.Meta.Focus)
	case Observer:
		needField("name", p.Meta.Name)
		needField("bias", p.Meta.Bias)
		needField("focus", p.Meta.Focus)
		if len(p.Meta.ExampleQuestions) == 0 {
			add(fmLine("example_questions"), true, "an observer without example_questions gives the model nothing to imitate")
		}
	case SharedRules:
		sections := SharedRuleSections
		if !p.HasSection("Severity") && definesSeverities(p.Section("Output Format")) {
			// PAW's shared rules define the severities inside their
			// output format.
			sections = slices.DeleteFunc(slices.Clone(sections), func(s string) bool { return s == "Severity" })
		}
		needSections(sections, sections)
		if !strings.Contains(p.Body, "[specialist-name]") {
			line, _ := p.anchor()
			if _, l, ok := p.Heading("Output Format"); ok {
				line = l
			}
			add(line, true, "the shared rules never mention [specialist-name], so findings cannot be attributed; write **Category**: [specialist-name] into the output format")
		}
	}
	return probs
}

// HasErrors reports whether any problem is not a warning.
func HasErrors(probs []Problem) bool {
	for _, p := range probs {
		if !p.Warning {
			return true
		}
	}
	return false
}

// definesSeverities reports whether text names every severity.
func definesSeverities(text string) bool {
	text = strings.ToLower(text)
	for _, s := range severities {
		if !strings.Contains(text, s) {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], "`*_.")
}
