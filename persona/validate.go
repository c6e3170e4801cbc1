package persona

import (
	"fmt"
	"regexp"
	"strings"
)

// Required and recommended "## " sections of each Markdown-bodied kind.
var (
	SpecialistSections = []string{"Identity & Narrative Backstory", "Cognitive Strategy", "Domain Boundary", "Behavioral Rules", "Demand Rationale", "Example Review Comments"}
	// specialistRequired are the sections without which a specialist has no
	// method to follow; the others only draw a warning.
	specialistRequired = []string{"Identity & Narrative Backstory", "Cognitive Strategy"}
	LensSections       = []string{"Lens Type", "Parameters", "Overlay Template", "Novelty Constraint"}
	lensRequired       = []string{"Lens Type", "Overlay Template"}
	SharedRuleSections = []string{"Anti-Sycophancy Rules", "Confidence Scoring", "Severity", "Output Format"}
	// LensTypes are the values a lens's Lens Type section may hold.
	LensTypes = []string{"baseline", "temporal", "adversarial"}
)

var colorPattern = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

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
			if p.HasSection(s) && strings.TrimSpace(p.Section(s)) != "" {
				continue
			}
			req := contains(required, s)
			what := "missing"
			if p.HasSection(s) {
				what = "empty"
			}
			add(0, !req, "section \"## %s\" is %s", s, what)
		}
	}
	needField := func(name, value string) {
		if strings.TrimSpace(value) == "" {
			add(2, false, "frontmatter field %q is required for a %s", name, p.Kind)
		}
	}
	switch p.Kind {
	case Specialist:
		if p.ID == ReservedReviewName {
			add(0, false, "the name %q is taken by REVIEW-SYNTHESIS.md, which this specialist's review would overwrite; rename the file", p.ID)
			return probs
		}
		if strings.TrimSpace(p.Body) == "" {
			add(p.bodyLine, false, "the specialist has no body: write its identity, cognitive strategy and rules")
			return probs
		}
		needSections(SpecialistSections, specialistRequired)
		switch c := p.Meta.Context.(type) {
		case nil, string:
			if s, _ := c.(string); strings.Contains(s, ",") {
				add(2, false, "context %q lists several values; a specialist declares exactly one context", s)
			}
		default:
			add(2, false, "context must be a single value such as implementation, not %T", c)
		}
	case Lens:
		needSections(LensSections, lensRequired)
		if t := strings.ToLower(firstWord(p.Section("Lens Type"))); t != "" && !contains(LensTypes, t) {
			add(p.lineOf("## Lens Type"), true, "Lens Type %q is not one of %s", t, strings.Join(LensTypes, ", "))
		}
		if o := p.Section("Overlay Template"); o != "" {
			if !strings.Contains(o, "{specialist}") {
				add(p.lineOf("## Overlay Template"), false, "the Overlay Template must contain the placeholder {specialist}")
			}
			if n := len(strings.Fields(o)); n < OverlayMinWords || n > OverlayMaxWords {
				add(p.lineOf("## Overlay Template"), true, "the Overlay Template has %d words; keep it between %d and %d", n, OverlayMinWords, OverlayMaxWords)
			}
		}
	case Role:
		needField("description", p.Meta.Description)
		needField("prompt_prefix", p.Meta.PromptPrefix)
		if p.Meta.Weight <= 0 || p.Meta.Weight > 1 {
			add(2, false, "weight must be above 0 and at most 1, not %g", p.Meta.Weight)
		}
		if p.Meta.Tier != "primary" && p.Meta.Tier != "specialized" {
			add(2, false, "tier must be primary or specialized, not %q", p.Meta.Tier)
		}
		if p.Meta.Tier == "specialized" && len(p.Meta.Triggers) == 0 {
			add(2, true, "a specialized role without triggers is never chosen by query matching")
		}
		if p.Meta.Color != "" && !colorPattern.MatchString(p.Meta.Color) {
			add(2, false, "color must look like #3b82f6, not %q", p.Meta.Color)
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
			add(2, true, "an observer without example_questions gives the model nothing to imitate")
		}
	case SharedRules:
		needSections(SharedRuleSections, SharedRuleSections)
		if !strings.Contains(p.Body, "[specialist-name]") {
			add(0, true, "the shared rules never mention [specialist-name], so findings cannot be attributed")
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
