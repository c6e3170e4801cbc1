package review

import (
	"fmt"
	"path"
	"slices"
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
//
// weigh, when set, multiplies a relevant specialist's score for the
// ranking (never for the minimum) and says why (see acceptanceWeights).
func adaptive(pool []*persona.Persona, n int, m *material.Material, signals func() material.Signals, weigh func(id string) (float64, string)) ([]*persona.Persona, string, bool) {
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
			if weigh != nil {
				if w, note := weigh(p.ID); note != "" {
					s *= w
					why = append(why, note)
				}
			}
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
	mode      string             // auto, guided or none
	lenses    []*persona.Persona // every lens some specialist runs under
	rationale string
	skipped   []string
	// per holds, under auto, the lenses each specialist runs under, by
	// specialist id: one run each, the baseline lens first (nil when there
	// is no baseline lens: an unlensed run). nil under guided and none,
	// where every specialist runs under every lens in lenses (once, with
	// no lens, when lenses is empty).
	per map[string][]*persona.Persona
}

// runs returns the lenses one specialist runs under, one run each; a nil
// lens is a run without one.
func (lp lensPlan) runs(specialist string) []*persona.Persona {
	if lp.per != nil {
		if ls, ok := lp.per[specialist]; ok {
			return ls
		}
		return []*persona.Persona{nil}
	}
	if len(lp.lenses) == 0 {
		return []*persona.Persona{nil}
	}
	return lp.lenses
}

// specialistsUnder lists, in roster order, the specialists of roster that
// run under the lens id.
func (lp lensPlan) specialistsUnder(id string, roster []string) []string {
	var out []string
	for _, s := range roster {
		if containsLens(lp.runs(s), id) {
			out = append(out, s)
		}
	}
	return out
}

// planLenses applies the perspectives field to the roster specs: none,
// auto (per specialist, by the change's signals and the fit table), or a
// list; perspective_cap bounds the lenses per specialist.
//
// A list applies to every specialist and keeps its order, so the cap keeps
// the lenses named first; lenses dropped by the cap are recorded as
// skipped "over the perspective cap". Unknown names in a list come back as
// warnings and are skipped. Under auto see autoPlan. signals returns the
// material's signals; only auto reads them.
func planLenses(lib *persona.Library, spec string, capN int, specs []*persona.Persona, m *material.Material, signals func() material.Signals) (lensPlan, []string, error) {
	all, auto, warnings, err := lib.ResolveLenses(spec)
	if err != nil {
		return lensPlan{}, nil, err
	}
	if strings.EqualFold(strings.TrimSpace(spec), "none") {
		return lensPlan{mode: "none"}, warnings, nil
	}
	if auto {
		return autoPlan(all, capN, specs, m, signals()), warnings, nil
	}
	lp := lensPlan{mode: "guided", lenses: all}
	if len(all) > capN {
		for _, l := range all[capN:] {
			lp.skipped = append(lp.skipped, fmt.Sprintf("%s: over the perspective cap of %d", l.ID, capN))
		}
		lp.lenses = all[:capN]
	}
	return lp, warnings, nil
}

func containsLens(ls []*persona.Persona, id string) bool {
	for _, l := range ls {
		if l != nil && l.ID == id {
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

// Fit levels of the fit table.
const (
	fitsNot  = 0 // the lens's question has no answer in the specialist's domain
	fits     = 1 // the lens shapes the specialist's method within its domain
	fitsBest = 2 // the lens asks the specialist's own question from its angle
)

// lensFit is one row of the fit table: whether a lens is for a specialist,
// and why, in one line.
type lensFit struct {
	lens, specialist string
	fit              int
	why              string
}

// lensFits is the fit table of the built-in lenses and specialists. A lens
// shapes a specialist's method within the specialist's own domain; it
// never moves the specialist into another's (shared rule 6). So a lens is
// for a specialist only when its question has an answer inside that
// specialist's Domain Boundary; otherwise the question belongs to a
// colleague, who gets the lens instead. The baseline lens is not in the
// table: it frames every specialist's own run.
//
// A lens the table does not name is read as the built-in lens of its type
// (an adversarial lens as red-team; a temporal one fits where premortem or
// retrospective does), and a specialist the table does not name fits every
// lens the change calls for (the table cannot know its domain).
var lensFits = []lensFit{
	// red-team: a motivated adversary who controls some inputs.
	{"red-team", "security", fitsBest, "attackers are its domain: the lens turns its attack trees into attempts to exploit the change"},
	{"red-team", "architecture", fits, "trust boundaries as a structural question are its domain: an adversary shows where the structure lets untrusted input reach trusted modules"},
	{"red-team", "testing", fits, "whether security controls are tested is its domain: an adversary asks which control could go with no test failing"},
	{"red-team", "correctness", fitsNot, "it owns logic errors with no attacker benefit; once an attacker gains, the finding is security's"},
	{"red-team", "edge-cases", fitsNot, "its inputs are accidental, environmental or from well-behaved systems having a bad day; deliberate malicious input is security's"},
	{"red-team", "performance", fitsNot, "it estimates organic load; exhaustion an attacker triggers on purpose is security's"},
	{"red-team", "assumptions", fitsNot, "a belief about who is trusted becomes security's once an attacker could exploit it, so it hands such beliefs over"},
	{"red-team", "maintainability", fitsNot, "it asks whether a failure is visible and explicable to the next engineer, a question with no adversary in it"},
	{"red-team", "release-manager", fitsNot, "rollout order and rollback have no adversary; secrets and privilege in manifests are security's"},

	// premortem: an incident six months on, traced back to this change.
	{"premortem", "correctness", fitsBest, "the incident is a wrong result traced back to a requirement the code missed or contradicted"},
	{"premortem", "edge-cases", fitsBest, "an incident's trigger is the rare input, interruption or timing its checklist enumerates"},
	{"premortem", "release-manager", fitsBest, "an incident in a rollout, a mixed-version window or a rollback that could not undo is its domain"},
	{"premortem", "testing", fitsBest, "the lens asks why the tests missed the failure, which is its own question"},
	{"premortem", "assumptions", fitsBest, "a post-incident review asks which belief turned out false, which is its method"},
	{"premortem", "security", fits, "a breach traced back to the change: which path was taken and why nothing noticed"},
	{"premortem", "performance", fits, "an outage under a load nobody multiplied the change's cost by"},
	{"premortem", "maintainability", fits, "its method narrates an incident already; the lens adds what signal would have revealed it earlier"},
	{"premortem", "architecture", fitsNot, "structural costs accumulate rather than break at once; the retrospective asks its question"},

	// retrospective: the change a year on, under maintenance and growth.
	{"retrospective", "architecture", fitsBest, "coupling, misplaced abstractions and the cost of reversing a structural choice are what a year of change exposes"},
	{"retrospective", "maintainability", fitsBest, "the cost for the next person to change and debug the code compounds over a year"},
	{"retrospective", "performance", fitsBest, "its estimate at ten times today's scale is the growth a year brings"},
	{"retrospective", "assumptions", fits, "estimates, defaults and beliefs about vendors and callers drift over a year"},
	{"retrospective", "release-manager", fits, "flags never removed, compatibility shims and irreversible migrations still constrain releases a year on"},
	{"retrospective", "testing", fits, "test doubles and fixtures drift from the code they stand for; a year on, which tests still guard the behaviour"},
	{"retrospective", "correctness", fitsNot, "it holds the code to its specification as written at merge, which a year does not change"},
	{"retrospective", "edge-cases", fitsNot, "boundary inputs and timings fail on the day they arrive, which is the premortem's question"},
	{"retrospective", "security", fitsNot, "its exposures exist on the day of merge, which its own run and red-team examine"},
}

// fitOf looks up how well lens l fits the specialist spec, and why.
func fitOf(l *persona.Persona, spec string) (int, string) {
	row := func(lens string) (lensFit, bool) {
		for _, f := range lensFits {
			if f.lens == lens && f.specialist == spec {
				return f, true
			}
		}
		return lensFit{}, false
	}
	if f, ok := row(l.ID); ok {
		return f.fit, f.why
	}
	known := slices.ContainsFunc(lensFits, func(f lensFit) bool { return f.specialist == spec })
	if !known {
		return fits, "the fit table does not know its domain, so it takes every lens the change calls for"
	}
	switch l.LensType() {
	case lensAdversarial:
		if f, ok := row("red-team"); ok {
			return f.fit, "as red-team: " + f.why
		}
	case lensTemporal:
		p, _ := row("premortem")
		r, _ := row("retrospective")
		if r.fit > p.fit {
			p = r
		}
		return p.fit, "as " + p.lens + ": " + p.why
	}
	return fitsNot, "a lens of no type the fit table knows"
}

// typeRelevance is a lens type the change calls for: how strongly, and why.
type typeRelevance struct {
	typ       string
	relevance float64
	why       string
}

// relevantTypes returns the lens types the change calls for, most relevant
// first: adversarial lenses for trust boundaries, external interfaces and
// data handling; temporal lenses for operational, dependency,
// configuration and long-lived changes, and for plans (artifacts and
// freeform material). A type's relevance is the strength of its
// categories' signals (material.Signals.Strength: the files that carry
// them, a file whose only evidence is a passing mention counting half); a
// plan without temporal signals gives temporal lenses one point per
// document. Ties go to the adversarial type.
func relevantTypes(m *material.Material, sig material.Signals) []typeRelevance {
	var qs []typeRelevance
	if hit := anyOf(sig, lensCategories[lensAdversarial]...); hit != "" {
		qs = append(qs, typeRelevance{lensAdversarial, sig.Strength(lensCategories[lensAdversarial]...), "adversarial lenses because " + sig.Reasons[hit]})
	}
	if hit := anyOf(sig, lensCategories[lensTemporal]...); hit != "" {
		qs = append(qs, typeRelevance{lensTemporal, sig.Strength(lensCategories[lensTemporal]...), "temporal lenses because " + sig.Reasons[hit]})
	} else if m.Type != material.TypeDiff {
		qs = append(qs, typeRelevance{lensTemporal, float64(len(m.Files)), "temporal lenses because the material is a plan whose consequences come later"})
	}
	// Stable: the adversarial type, appended first, wins ties.
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].relevance > qs[j].relevance })
	return qs
}

// autoPlan chooses the lenses of each specialist (PAW's perspective
// auto-selection, per specialist):
//
//   - the change decides which lens types are relevant (relevantTypes);
//   - the fit table decides which of their lenses are for each specialist
//     (lensFits): a lens shapes a specialist's method within its domain,
//     so red-team goes to security, not to edge-cases, whose inputs are
//     accidental;
//   - each specialist keeps its own run, under the baseline lens (the
//     seed's "built-in baseline perspective"), and takes the lenses that
//     fit it, most relevant to the change first, then best fitting, then
//     by name, up to perspective_cap runs in all. A cap of 1 leaves one
//     run: the most relevant lens that fits, or the baseline where none
//     does. So the default cap of 2 is the own run and the best lens, and
//     only a cap the user sets to 1 gives up the own run.
func autoPlan(all []*persona.Persona, capN int, specs []*persona.Persona, m *material.Material, sig material.Signals) lensPlan {
	lp := lensPlan{mode: "auto"}
	own := baselineOf(all)
	types := relevantTypes(m, sig)
	rank := map[string]int{}
	var why []string
	var candidates []*persona.Persona
	for i, q := range types {
		rank[q.typ] = i
		var ls []*persona.Persona
		for _, l := range all {
			if typeOf(l) == q.typ {
				ls = append(ls, l)
			}
		}
		if len(ls) == 0 {
			continue
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].ID < ls[j].ID })
		candidates = append(candidates, ls...)
		why = append(why, fmt.Sprintf("%s (relevance %g)", q.why, q.relevance))
	}
	lp.per = map[string][]*persona.Persona{}
	used := map[string][]string{}   // lens -> specialists that run under it
	capped := map[string][]string{} // lens -> specialists it fits, dropped by the cap
	fitted := map[string]bool{}     // lenses that fit some specialist
	for _, s := range specs {
		id := s.ID
		type option struct {
			l   *persona.Persona
			fit int
		}
		var opts []option
		for _, l := range candidates {
			if fit, _ := fitOf(l, id); fit > fitsNot {
				opts = append(opts, option{l, fit})
				fitted[l.ID] = true
			}
		}
		sort.SliceStable(opts, func(i, j int) bool {
			a, b := opts[i], opts[j]
			if ra, rb := rank[typeOf(a.l)], rank[typeOf(b.l)]; ra != rb {
				return ra < rb
			}
			if a.fit != b.fit {
				return a.fit > b.fit
			}
			return a.l.ID < b.l.ID
		})
		var runs []*persona.Persona
		room := capN - 1 // the own run takes one
		if capN <= 1 && len(opts) > 0 {
			room = 1 // a cap of 1 gives the own run up for the best lens
		} else {
			runs = append(runs, own)
		}
		for i, o := range opts {
			if i < room {
				runs = append(runs, o.l)
				used[o.l.ID] = append(used[o.l.ID], id)
			} else {
				capped[o.l.ID] = append(capped[o.l.ID], id)
			}
		}
		if own != nil && len(runs) > 0 && runs[0] == own {
			used[own.ID] = append(used[own.ID], id)
		}
		lp.per[id] = runs
	}
	// The lenses applied: the baseline, then the others, most relevant first.
	if own != nil && len(used[own.ID]) > 0 {
		lp.lenses = append(lp.lenses, own)
	}
	for _, l := range candidates {
		if len(used[l.ID]) > 0 {
			lp.lenses = append(lp.lenses, l)
		}
	}
	// What was not applied, or not to everyone it fits.
	for _, l := range all {
		switch {
		case l == own:
			if len(used[l.ID]) == 0 {
				lp.skipped = append(lp.skipped, fmt.Sprintf("%s: over the perspective cap of %d, which leaves each specialist one run, under the most relevant lens that fits it", l.ID, capN))
			}
		case typeOf(l) == lensBaseline:
			lp.skipped = append(lp.skipped, fmt.Sprintf("%s: %s is the baseline lens of the specialists' own runs", l.ID, own.ID))
		case !slices.Contains(candidates, l):
			lp.skipped = append(lp.skipped, l.ID+": below the relevance threshold for this change")
		case !fitted[l.ID]:
			lp.skipped = append(lp.skipped, l.ID+": it fits the domain of none of the specialists")
		case len(capped[l.ID]) > 0:
			lp.skipped = append(lp.skipped, fmt.Sprintf("%s: over the perspective cap of %d for %s, where lenses more relevant to this change or closer to the domain were kept", l.ID, capN, joinAnd(capped[l.ID])))
		}
	}
	// Why.
	switch {
	case len(why) == 0:
		lp.rationale = "no perspective met the relevance threshold, so every specialist runs under the baseline lens only"
		if own == nil {
			lp.rationale = "no perspective met the relevance threshold, so every specialist runs without a lens"
		}
	default:
		lp.rationale = strings.Join(why, "; ")
		var applied []string
		for _, l := range lp.lenses {
			if l != own {
				applied = append(applied, fmt.Sprintf("%s for %s", l.ID, strings.Join(used[l.ID], ", ")))
			}
		}
		lp.rationale += "; each lens goes to the specialists whose domain it fits"
		if len(applied) > 0 {
			lp.rationale += " (" + strings.Join(applied, "; ") + ")"
		} else {
			lp.rationale += ", and it fits none of these"
		}
		switch {
		case capN <= 1:
			lp.rationale += "; the perspective cap of 1 leaves each specialist one run, under the most relevant lens that fits it"
			if own != nil {
				lp.rationale += " or the " + own.ID + " lens where none does"
			}
		case own != nil:
			lp.rationale += fmt.Sprintf("; each specialist keeps its own run under the %s lens, and the perspective cap of %d allows it %s more", own.ID, capN, plural(capN-1, "lens", "lenses"))
		default:
			lp.rationale += fmt.Sprintf("; each specialist keeps its own run without a lens, and the perspective cap of %d allows it %s more", capN, plural(capN-1, "lens", "lenses"))
		}
	}
	return lp
}

// typeOf is a lens's type; a lens that declares none is a baseline one
// (PAW's "neutral" reads as baseline too).
func typeOf(l *persona.Persona) string {
	if t := l.LensType(); t != "" {
		return t
	}
	return lensBaseline
}

// baselineOf returns the lens that frames each specialist's own run: the
// baseline lens named "baseline", or else the first by name of that type;
// nil when there is none.
func baselineOf(all []*persona.Persona) *persona.Persona {
	var out *persona.Persona
	for _, l := range all {
		if typeOf(l) != lensBaseline {
			continue
		}
		if l.ID == lensBaseline {
			return l
		}
		if out == nil || l.ID < out.ID {
			out = l
		}
	}
	return out
}

// joinAnd joins names as a sentence lists them: "a", "a and b", "a, b
// and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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
// Every specialist is taken to run under every lens (once without one when
// lenses is empty); checkRunFiles checks the runs a lens plan gives each.
func checkReviewFiles(specs, lenses []*persona.Persona) error {
	return checkRunFiles(specs, lensPlan{lenses: lenses})
}

// checkRunFiles is checkReviewFiles for the runs lp gives each specialist.
func checkRunFiles(specs []*persona.Persona, lp lensPlan) error {
	owner := map[string]string{}
	for _, s := range specs {
		for _, l := range lp.runs(s.ID) {
			lens := ""
			if l != nil {
				lens = l.ID
			}
			f, err := persona.ReviewFile("", s.ID, lens)
			if err != nil {
				return &FieldError{Field: "specialists", Msg: err.Error()}
			}
			who := s.ID
			if lens != "" {
				who += " under the " + lens + " lens"
			}
			if prev, ok := owner[f]; ok && prev != who {
				return &FieldError{Field: "specialists", Msg: fmt.Sprintf("%s and %s would both write %s; rename one of the persona files or leave one out", prev, who, f)}
			}
			owner[f] = who
		}
	}
	return nil
}

// minDecisions is how many accepted or dismissed findings a specialist
// needs in the project before its acceptance weighs its pick.
const minDecisions = 5

// acceptanceWeights weighs a specialist by how often its findings were
// accepted in the project at top (review.learn_from_resolutions): from
// ×0.5 for none accepted to ×1.5 for all, once it has minDecisions
// decisions; ×1 before.
func acceptanceWeights(top string) func(string) (float64, string) {
	st, err := ProjectStats(top)
	rates := map[string]Acceptance{}
	if err == nil {
		for _, a := range st.Specialists {
			rates[a.Name] = a
		}
	}
	return func(id string) (float64, string) {
		a, ok := rates[id]
		if !ok || a.Accepted+a.Dismissed < minDecisions {
			return 1, ""
		}
		w := 0.5 + a.Rate
		return w, fmt.Sprintf("%.0f%% of its findings accepted here, weight ×%.2f", 100*a.Rate, w)
	}
}
