package review

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
)

// affinity says which built-in specialists a change category calls for.
// Custom specialists are matched through their frontmatter signals.
var affinity = map[string][]string{
	"trust-boundary": {"security", "edge-cases"},
	"data-handling":  {"correctness", "security", "edge-cases"},
	"api-surface":    {"architecture", "correctness", "release-manager"},
	"new-logic":      {"correctness", "edge-cases", "testing"},
	"refactor":       {"maintainability", "architecture"},
	"config":         {"release-manager", "assumptions"},
	"dependencies":   {"release-manager", "security"},
	"operational":    {"release-manager", "performance"},
	"tests":          {"testing"},
	"deletion":       {"release-manager", "maintainability"},
	"docs":           {"assumptions", "architecture"},
}

// scoreSpecialist rates how relevant a specialist is to a change, and says why.
func scoreSpecialist(p *persona.Persona, sig material.Signals, files []string) (float64, []string) {
	var score float64
	var why []string
	for _, c := range sig.Categories {
		for _, id := range affinity[c] {
			if id == p.ID {
				score += 2
				why = append(why, c)
			}
		}
	}
	for _, s := range p.Meta.Signals {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		if strings.ContainsAny(s, "*?[") {
			for _, f := range files {
				if ok, _ := path.Match(s, path.Base(f)); ok {
					score++
					why = append(why, s)
					break
				}
			}
			continue
		}
		if n := sig.Keywords[s]; n > 0 {
			score += min(float64(n), 3) / 3
			why = append(why, s)
		}
	}
	return score, why
}

// adaptive picks the n most relevant specialists. It returns the pick, the
// rationale, and whether the change was judged trivial (then the pick is
// empty and the caller decides).
func adaptive(pool []*persona.Persona, n int, m *material.Material) ([]*persona.Persona, string, bool) {
	if n >= len(pool) {
		return pool, fmt.Sprintf("adaptive:%d asks for at least the whole roster of %d, so every specialist takes part", n, len(pool)), false
	}
	if trivial, reason := m.IsTrivial(); trivial {
		return nil, "the change is trivial: " + reason, true
	}
	sig := m.Analyze()
	type cand struct {
		p     *persona.Persona
		score float64
		why   []string
	}
	var cs []cand
	for _, p := range pool {
		s, why := scoreSpecialist(p, sig, m.Paths())
		if s > 0 {
			cs = append(cs, cand{p, s, why})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].p.ID < cs[j].p.ID
	})
	if len(cs) > n {
		cs = cs[:n]
	}
	if len(cs) == 0 {
		return nil, "no specialist matched the change's signals", false
	}
	var names []string
	var picked []*persona.Persona
	for _, c := range cs {
		names = append(names, fmt.Sprintf("%s (%s)", c.p.ID, strings.Join(uniq(c.why), ", ")))
		picked = append(picked, c.p)
	}
	var reasons []string
	for _, c := range sig.Categories {
		if r := sig.Reasons[c]; r != "" {
			reasons = append(reasons, r)
		}
	}
	rationale := "Selected " + strings.Join(names, "; ")
	if len(reasons) > 0 {
		rationale += " — the change: " + strings.Join(reasons, "; ")
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].ID < picked[j].ID })
	return picked, rationale, false
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// lensPlan is which lenses apply, to whom, and why.
type lensPlan struct {
	mode      string // auto, guided or none
	lenses    []*persona.Persona
	rationale string
	skipped   []string
}

// planLenses applies the perspectives field: none, auto (by the change's
// signals), or a list; perspective_cap bounds the lenses per specialist.
func planLenses(lib *persona.Library, spec string, capN int, m *material.Material) (lensPlan, []string, error) {
	all, auto, warnings, err := lib.ResolveLenses(spec)
	if err != nil {
		return lensPlan{}, nil, err
	}
	lp := lensPlan{mode: "guided"}
	if strings.EqualFold(strings.TrimSpace(spec), "none") {
		return lensPlan{mode: "none"}, warnings, nil
	}
	chosen := all
	if auto {
		lp.mode = "auto"
		chosen, lp.rationale = autoLenses(all, m)
	}
	if len(chosen) > capN {
		for _, l := range chosen[capN:] {
			lp.skipped = append(lp.skipped, l.ID+": over the perspective cap of "+fmt.Sprint(capN))
		}
		chosen = chosen[:capN]
	}
	if auto {
		for _, l := range all {
			if !containsLens(chosen, l.ID) && !containsSkipped(lp.skipped, l.ID) {
				lp.skipped = append(lp.skipped, l.ID+": below the relevance threshold for this change")
			}
		}
	}
	lp.lenses = chosen
	return lp, warnings, nil
}

func containsLens(ls []*persona.Persona, id string) bool {
	for _, l := range ls {
		if l.ID == id {
			return true
		}
	}
	return false
}

func containsSkipped(s []string, id string) bool {
	for _, v := range s {
		if strings.HasPrefix(v, id+":") {
			return true
		}
	}
	return false
}

// autoLenses picks lenses from the change's signals: adversarial lenses for
// trust boundaries, external interfaces and data handling; temporal lenses
// for operational, dependency, configuration and long-lived changes; the
// baseline lens when nothing qualifies.
func autoLenses(all []*persona.Persona, m *material.Material) ([]*persona.Persona, string) {
	sig := m.Analyze()
	byType := map[string][]*persona.Persona{}
	for _, l := range all {
		t := strings.ToLower(strings.Fields(l.Section("Lens Type") + " baseline")[0])
		byType[t] = append(byType[t], l)
	}
	var chosen []*persona.Persona
	var why []string
	if hit := anyOf(sig, "trust-boundary", "api-surface", "data-handling"); hit != "" {
		chosen = append(chosen, byType["adversarial"]...)
		why = append(why, "adversarial lenses because "+sig.Reasons[hit])
	}
	temporal := anyOf(sig, "operational", "dependencies", "config", "data-handling", "deletion")
	if temporal == "" && m.Type != material.TypeDiff {
		temporal = "plans" // design documents describe what will happen later
	}
	if temporal != "" {
		chosen = append(chosen, byType["temporal"]...)
		if r := sig.Reasons[temporal]; r != "" {
			why = append(why, "temporal lenses because "+r)
		} else {
			why = append(why, "temporal lenses because the material is a plan whose consequences come later")
		}
	}
	if len(chosen) == 0 {
		return byType["baseline"], "no perspective met the relevance threshold, so the baseline lens applies"
	}
	return chosen, strings.Join(why, "; ")
}

func anyOf(sig material.Signals, cats ...string) string {
	for _, c := range cats {
		if sig.Has(c) {
			return c
		}
	}
	return ""
}

// assignModels follows seed 002's precedence: the specialist's frontmatter
// model, a pinned pair, the pool round-robin over the unpinned specialists
// sorted by name, then the session default. A model that cannot be resolved
// falls back to the default with a warning.
func assignModels(specs []*persona.Persona, ms ModelSpec, def string, cfg *config.Config) (map[string]string, []string) {
	out := map[string]string{}
	var warnings []string
	var unpinned []string
	for _, p := range specs {
		switch {
		case p.Meta.Model != "":
			out[p.ID] = p.Meta.Model
		case ms.Pinned[p.ID] != "":
			out[p.ID] = ms.Pinned[p.ID]
		default:
			unpinned = append(unpinned, p.ID)
		}
	}
	sort.Strings(unpinned)
	for i, id := range unpinned {
		if len(ms.Pool) > 0 {
			out[id] = ms.Pool[i%len(ms.Pool)]
		} else {
			out[id] = def
		}
	}
	for id, m := range out {
		ref, err := cfg.ResolveModel(m)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("model %q for %s is unavailable (%v); using the session default %s", m, id, err, def))
			out[id] = def
			continue
		}
		out[id] = ref.String()
	}
	for name := range ms.Pinned {
		found := false
		for _, p := range specs {
			found = found || p.ID == name
		}
		if !found {
			warnings = append(warnings, fmt.Sprintf("specialist_models pins %q, which is not taking part", name))
		}
	}
	sort.Strings(warnings)
	return out, warnings
}
