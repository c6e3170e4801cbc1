package review

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/material"
	"github.com/sotlabs/sot/persona"
)

// affinity says which built-in specialists a change category calls for.
// Custom specialists are matched through their signals (see
// persona.Persona.SelectionSignals).
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
	// The weakest category: any change to code. It counts only when the
	// change has no other category, so that an ordinary code change still
	// concerns correctness and testing without changing any other pick.
	material.CategoryBehaviour: {"correctness", "testing"},
}

// minRelevance is the score a specialist needs to be picked by adaptive
// selection. A change category the specialist serves scores 2 (for
// behaviour-change, which every code change has, only when the change has
// no other category), a file pattern, path or file name among its
// signals that a changed file matches scores 1, and each signal word
// scores a third per mention, up to 1. So one category or one file
// pattern is enough, and words are enough once they add up to three
// mentions; a single passing word (a "config" in a README) is not, and
// the pick is not padded with such specialists to reach N.
//
// A specialist that declares no signals has them derived from its text:
// then a changed file whose path names its domain (agents/x.md for a
// domain of "agent instructions") scores 1, once, and its words together
// score at most 1, so that a long persona is not relevant to everything.
const minRelevance = 1.0

// scoreSpecialist rates how relevant a specialist is to a change, and says why.
func scoreSpecialist(p *persona.Persona, sig material.Signals, files []string) (float64, []string) {
	var score float64
	var why []string
	for _, c := range sig.Categories {
		if c == material.CategoryBehaviour && len(sig.Categories) > 1 {
			continue
		}
		for _, id := range affinity[c] {
			if id == p.ID {
				score += 2
				why = append(why, c)
			}
		}
	}
	ss := p.SelectionSignals()
	var words float64
	for _, s := range ss.Terms {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		if isPathSignal(s, ss.Derived) {
			if f := matchPath(s, files); f != "" {
				score++
				why = append(why, s)
			}
			continue
		}
		n := sig.Keywords[s]
		if ss.Derived {
			n = keywordStem(sig.Keywords, s)
		}
		if n > 0 {
			words += min(float64(n), 3) / 3
			why = append(why, s)
		}
	}
	if ss.Derived {
		words = min(words, 1)
		if w, f := domainInPaths(ss.Domain, files); w != "" {
			score++
			why = append(why, fmt.Sprintf("%s names its domain, %q", f, w))
		}
	}
	return score + words, why
}

// isPathSignal reports whether a signal is matched against the changed
// files' paths rather than their words: a pattern (*, ?, [), and, since
// file names and paths are never words, one holding a slash or (for a
// derived signal) a dot.
func isPathSignal(s string, derived bool) bool {
	return strings.ContainsAny(s, "*?[/") || derived && strings.Contains(s, ".")
}

// matchPath returns the first changed file a path signal matches, or "".
// A signal without a slash ("*.sql", "go.mod") is matched against file
// names; a directory ("agents/") against every directory of a path; and a
// path or pattern with a slash ("docs/design/*", "prompts/*.md") against
// the whole path and every tail of it that starts at a directory.
func matchPath(sig string, files []string) string {
	for _, f := range files {
		lf := strings.ToLower(f)
		switch {
		case strings.HasSuffix(sig, "/"):
			if strings.Contains("/"+lf, "/"+sig) {
				return f
			}
		case strings.Contains(sig, "/"):
			for tail := lf; ; {
				if ok, _ := path.Match(sig, tail); ok || tail == sig || strings.HasPrefix(tail, sig+"/") {
					return f
				}
				i := strings.IndexByte(tail, '/')
				if i < 0 {
					break
				}
				tail = tail[i+1:]
			}
		default:
			if ok, _ := path.Match(sig, path.Base(lf)); ok {
				return f
			}
		}
	}
	return ""
}

// keywordStem counts the mentions of a derived word among the change's
// words, plurals included ("agents" for "agent").
func keywordStem(keywords map[string]int, w string) int {
	stem := persona.Stem(w)
	n := 0
	for k, c := range keywords {
		if persona.Stem(k) == stem {
			n += c
		}
	}
	return n
}

// domainInPaths returns a word of a persona's domain that a changed file's
// path names (a directory or a part of the file name, plurals included),
// and that file; or "", "".
func domainInPaths(domain, files []string) (string, string) {
	for _, f := range files {
		parts := strings.FieldsFunc(strings.ToLower(f), func(r rune) bool {
			return r == '/' || r == '.' || r == '-' || r == '_'
		})
		for _, w := range domain {
			for _, part := range parts {
				if persona.Stem(part) == persona.Stem(w) {
					return w, f
				}
			}
		}
	}
	return "", ""
}

// adaptive picks up to n specialists, the most relevant to the change
// whose score reaches minRelevance. It returns the pick, the rationale, and
// whether the change was judged trivial (then the pick is empty and the
// caller decides). The trivial check comes first, whatever n is; an n that
// covers the whole roster then takes every specialist. When fewer than n
// specialists are relevant, the rationale says so ("3 requested, 2
// relevant"). signals returns the material's signals.
func adaptive(pool []*persona.Persona, n int, m *material.Material, signals func() material.Signals) ([]*persona.Persona, string, bool) {
	if trivial, reason := m.IsTrivial(); trivial {
		return nil, "the change is trivial: " + reason, true
	}
	if n >= len(pool) {
		return pool, fmt.Sprintf("adaptive:%d asks for at least the whole roster of %d, so every specialist takes part", n, len(pool)), false
	}
	sig := signals()
	type cand struct {
		p     *persona.Persona
		score float64
		why   []string
	}
	var cs []cand
	for _, p := range pool {
		s, why := scoreSpecialist(p, sig, m.Paths())
		if s >= minRelevance {
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
		return nil, "no specialist matched the change's signals with the minimum relevance (a change category it serves, a file pattern it names, or three mentions of its signal words)", false
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
	if len(cs) < n {
		rationale += fmt.Sprintf(" (%d requested, %d relevant: no other specialist reached the minimum relevance)", n, len(cs))
	}
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
// A list keeps its order, so the cap keeps the lenses named first; auto
// ranks the qualifying lenses by relevance to the change (see autoLenses)
// and the cap keeps the most relevant. Lenses dropped by the cap are
// recorded as skipped "over the perspective cap"; under auto, lenses that
// did not qualify are recorded as below the relevance threshold. Unknown
// names in a list come back as warnings and are skipped. signals returns
// the material's signals; only auto reads them.
func planLenses(lib *persona.Library, spec string, capN int, m *material.Material, signals func() material.Signals) (lensPlan, []string, error) {
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
		chosen, lp.rationale = autoLenses(all, m, signals())
	}
	if len(chosen) > capN {
		reason := fmt.Sprintf(": over the perspective cap of %d", capN)
		if auto {
			reason += ", less relevant to this change than the lenses kept"
		}
		var kept []string
		for _, l := range chosen[:capN] {
			kept = append(kept, l.ID)
		}
		for _, l := range chosen[capN:] {
			lp.skipped = append(lp.skipped, l.ID+reason)
		}
		chosen = chosen[:capN]
		if auto {
			lp.rationale += fmt.Sprintf("; the perspective cap of %d keeps %s", capN, strings.Join(kept, ", "))
		}
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

// Lens types, from a lens file's "Lens Type" section.
const (
	lensAdversarial = "adversarial"
	lensTemporal    = "temporal"
	lensBaseline    = "baseline"
)

// lensCategories are the change categories that call for each lens type
// (PAW's perspective auto-selection): adversarial lenses for trust
// boundaries, external interfaces and data handling; temporal lenses for
// operational, dependency, configuration and long-lived changes.
var lensCategories = map[string][]string{
	lensAdversarial: {material.CategoryTrustBoundary, material.CategoryAPISurface, material.CategoryDataHandling},
	lensTemporal: {material.CategoryOperational, material.CategoryDependencies, material.CategoryConfig,
		material.CategoryDataHandling, material.CategoryDeletion},
}

// autoLenses picks lenses from the change's signals: adversarial lenses for
// trust boundaries, external interfaces and data handling; temporal lenses
// for operational, dependency, configuration and long-lived changes, and
// for plans (artifacts and freeform material); the baseline lens when
// nothing qualifies.
//
// The qualifying lenses come back most relevant first. A lens type's
// relevance is the strength of its categories' signals
// (material.Signals.Strength: the files that carry them, a file whose only
// evidence is a passing mention counting half); a plan without temporal
// signals gives temporal lenses one point per document. Ties go to the
// adversarial type, then lenses sort by name.
func autoLenses(all []*persona.Persona, m *material.Material, sig material.Signals) ([]*persona.Persona, string) {
	byType := map[string][]*persona.Persona{}
	for _, l := range all {
		t := l.LensType() // PAW's "neutral" reads as baseline
		if t == "" {
			t = lensBaseline
		}
		byType[t] = append(byType[t], l)
	}
	type qualified struct {
		typ       string
		relevance float64
		why       string
	}
	var qs []qualified
	if hit := anyOf(sig, lensCategories[lensAdversarial]...); hit != "" {
		qs = append(qs, qualified{lensAdversarial, sig.Strength(lensCategories[lensAdversarial]...), "adversarial lenses because " + sig.Reasons[hit]})
	}
	if hit := anyOf(sig, lensCategories[lensTemporal]...); hit != "" {
		qs = append(qs, qualified{lensTemporal, sig.Strength(lensCategories[lensTemporal]...), "temporal lenses because " + sig.Reasons[hit]})
	} else if m.Type != material.TypeDiff {
		qs = append(qs, qualified{lensTemporal, float64(len(m.Files)), "temporal lenses because the material is a plan whose consequences come later"})
	}
	// Stable: the adversarial type, appended first, wins ties.
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].relevance > qs[j].relevance })
	var chosen []*persona.Persona
	var why []string
	for _, q := range qs {
		ls := append([]*persona.Persona(nil), byType[q.typ]...)
		if len(ls) == 0 {
			continue
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].ID < ls[j].ID })
		chosen = append(chosen, ls...)
		why = append(why, fmt.Sprintf("%s (relevance %g)", q.why, q.relevance))
	}
	if len(chosen) == 0 {
		return byType[lensBaseline], "no perspective met the relevance threshold, so the baseline lens applies"
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

// assignModels follows PAW's precedence: the specialist's frontmatter
// model, a pinned pair, the pool round-robin over the unpinned specialists
// sorted by name, then the session default. A model that cannot be resolved
// falls back to the default with a warning.
func assignModels(specs []*persona.Persona, ms ModelSpec, def string, cfg *config.Config) (map[string]string, []string) {
	if ms.list != "" {
		// Read the list again knowing the configured providers, so that
		// "openrouter:x" is a model and "security:claude-opus-4.6" a pin.
		if again, err := ParseModelsFor(ms.list, cfg); err == nil {
			ms = again
		}
	}
	ids := make([]string, 0, len(specs))
	own := map[string]string{}
	for _, p := range specs {
		ids = append(ids, p.ID)
		if p.Meta.Model != "" {
			own[p.ID] = p.Meta.Model
		}
	}
	roster := engine.Roster{Default: def, Pins: ms.Pinned, Pool: ms.Pool, PinsField: "specialist_models",
		Resolve: func(m string) (string, error) {
			ref, err := cfg.ResolveModel(m)
			return ref.String(), err
		}}
	return roster.Assign(ids, own)
}

// checkReviewFiles refuses a roster in which two reviews would be written
// to the same file: REVIEW-{SPECIALIST}-{LENS}.md joins names that may hold
// dashes themselves, so security under red-team and security-red under team
// both make REVIEW-SECURITY-RED-TEAM.md, and one would overwrite the other.
func checkReviewFiles(specs, lenses []*persona.Persona) error {
	owner := map[string]string{}
	add := func(spec, lens string) error {
		f, err := persona.ReviewFile("", spec, lens)
		if err != nil {
			return &FieldError{Field: "specialists", Msg: err.Error()}
		}
		who := spec
		if lens != "" {
			who += " under the " + lens + " lens"
		}
		if prev, ok := owner[f]; ok && prev != who {
			return &FieldError{Field: "specialists", Msg: fmt.Sprintf("%s and %s would both write %s; rename one of the persona files or leave one out", prev, who, f)}
		}
		owner[f] = who
		return nil
	}
	for _, s := range specs {
		if len(lenses) == 0 {
			if err := add(s.ID, ""); err != nil {
				return err
			}
		}
		for _, l := range lenses {
			if err := add(s.ID, l.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
