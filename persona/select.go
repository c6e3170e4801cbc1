package persona

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Selection is what the caller asked for: all, a list, or adaptive:N.
type Selection struct {
	All      bool
	Names    []string // names or file paths, in the caller's order
	Adaptive int      // N of adaptive:N; 0 when not adaptive
}

func (s Selection) String() string {
	switch {
	case s.Adaptive > 0:
		return fmt.Sprintf("adaptive:%d", s.Adaptive)
	case len(s.Names) > 0:
		return strings.Join(s.Names, ",")
	}
	return "all"
}

// ParseSelection reads "all" (or ""), "adaptive:N" or a comma list.
func ParseSelection(s string) (Selection, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || strings.EqualFold(s, "all"):
		return Selection{All: true}, nil
	case strings.HasPrefix(strings.ToLower(s), "adaptive:"):
		n, err := strconv.Atoi(strings.TrimSpace(s[len("adaptive:"):]))
		if err != nil || n < 1 {
			return Selection{}, fmt.Errorf("specialists %q: adaptive needs a positive count, as in adaptive:3", s)
		}
		return Selection{Adaptive: n}, nil
	}
	var names []string
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !isPath(part) {
			part = strings.ToLower(part)
			if !ValidID(part) {
				return Selection{}, fmt.Errorf("specialists: %q is not a persona name (lower-case letters, digits, - and _) or a path to a .md file", part)
			}
		}
		if !seen[part] {
			seen[part] = true
			names = append(names, part)
		}
	}
	if len(names) == 0 {
		return Selection{}, fmt.Errorf("specialists %q names nobody; use all, adaptive:N or a comma list", s)
	}
	return Selection{Names: names}, nil
}

// IsPath reports whether a name in a specialist or lens list names a
// persona file rather than a persona.
func IsPath(s string) bool { return isPath(s) }

func isPath(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(strings.ToLower(s), ".md")
}

// Interactive modes of a review context.
const (
	InteractiveTrue  = "true"
	InteractiveFalse = "false"
	InteractiveSmart = "smart"
)

// ErrAborted is returned when the user chose to stop.
var ErrAborted = errors.New("aborted by the user")

// ErrUnanswered is returned by an Asker whose question nobody answered in
// time (a run on a worker whose user was not following it): the caller
// goes on as if nobody could have been asked.
var ErrUnanswered = errors.New("nobody answered in time")

// ErrNeedsDecision is returned when a decision needs a person and there is
// no terminal to ask on.
var ErrNeedsDecision = errors.New("a decision is needed and no terminal is attached")

// ErrNoSuchSpecialist reports an explicit list of specialists none of which
// could be used (unknown names, unreadable or malformed files). Running
// other specialists instead would spend money on a review nobody asked for,
// so it is an error, not a fallback.
var ErrNoSuchSpecialist = errors.New("none of the named specialists exist")

// ErrNoSuchPerspective reports a list of perspectives none of which exists:
// reviewing without the lenses asked for would not be the review asked for.
var ErrNoSuchPerspective = errors.New("none of the named perspectives exist")

// Asker puts a question to the user. With choices it returns one of them;
// without, it returns free text.
type Asker func(question string, choices []string) (string, error)

// ResolveOptions say how to pick the specialists of a run.
type ResolveOptions struct {
	Selection Selection
	// Context is the caller's domain filter; "" means the type's default.
	Context string
	// Type is the review type: diff, artifacts or freeform.
	Type string
	// Interactive is true, false or smart.
	Interactive string
	// Ask is nil when there is nobody to ask.
	Ask Asker
}

// Resolution is the roster of a run and how it was reached.
type Resolution struct {
	Specialists []*Persona
	// Context is the filter applied, or "none".
	Context string
	// Adaptive is N when the caller asked for adaptive:N; the adaptive pick
	// from Specialists belongs to the scenario.
	Adaptive int
	Warnings []string
}

// Choices offered when the context filter matches nobody.
const (
	ChoiceProceedAll   = "proceed with all specialists"
	ChoiceOtherContext = "use a different context"
	ChoiceAbort        = "abort"
)

// ResolveSpecialists applies discovery's resolution rules: an explicit list
// resolves only its names (unknown ones are skipped with a warning, and a
// list of which none resolves is ErrNoSuchSpecialist) and is not filtered by
// context; all and adaptive take every specialist and filter by context.
// When discovery finds no specialist at all, the built-ins are used with a
// warning.
func (l *Library) ResolveSpecialists(o ResolveOptions) (*Resolution, error) {
	r := &Resolution{Context: "none", Adaptive: o.Selection.Adaptive}
	warn := func(format string, args ...any) { r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...)) }
	if len(o.Selection.Names) > 0 {
		for _, n := range o.Selection.Names {
			if isPath(n) {
				seen := len(l.Problems)
				p, err := l.AddFile(n)
				for _, pr := range l.Problems[seen:] {
					warn("%s", pr.Error())
				}
				if err != nil {
					warn("specialist %s skipped: %v", n, err)
					continue
				}
				if p.Kind != Specialist {
					warn("%s is a %s, not a specialist; skipped", n, p.Kind)
					continue
				}
				r.Specialists = append(r.Specialists, p)
				continue
			}
			p, ok := l.Get(Specialist, n)
			if !ok {
				warn("unknown specialist %q skipped (known: %s)", n, strings.Join(ids(l.List(Specialist)), ", "))
				continue
			}
			r.Specialists = append(r.Specialists, p)
		}
		if len(r.Specialists) == 0 {
			return nil, fmt.Errorf("%w: %s (%s); known specialists: %s", ErrNoSuchSpecialist,
				strings.Join(o.Selection.Names, ", "), strings.Join(r.Warnings, "; "), strings.Join(ids(l.List(Specialist)), ", "))
		}
		return r, nil
	}
	pool := l.List(Specialist)
	if len(pool) == 0 {
		warn("no specialists were found; falling back to the built-in specialists")
		pool = l.Builtins(Specialist)
	}
	ctx := strings.ToLower(strings.TrimSpace(o.Context))
	if ctx == "" && o.Type != "freeform" {
		ctx = DefaultContext
	}
	for ctx != "" {
		matched := FilterContext(pool, ctx)
		if len(matched) > 0 {
			r.Specialists, r.Context = matched, ctx
			return r, nil
		}
		warn("no specialist declares context %q (contexts found: %s)", ctx, strings.Join(contexts(pool), ", "))
		if o.Interactive == InteractiveFalse {
			warn("proceeding with all %d specialists because interactive is false", len(pool))
			break
		}
		if o.Ask == nil {
			return nil, fmt.Errorf("%w: no specialist matches context %q; fix --context, or pass --interactive false to proceed with all specialists", ErrNeedsDecision, ctx)
		}
		choice, err := o.Ask(fmt.Sprintf("No specialist matches context %q. What now?", ctx), []string{ChoiceProceedAll, ChoiceOtherContext, ChoiceAbort})
		if err != nil {
			return nil, err
		}
		switch choice {
		case ChoiceProceedAll:
			ctx = ""
		case ChoiceOtherContext:
			if ctx, err = o.Ask("Context to filter by:", nil); err != nil {
				return nil, err
			}
			ctx = strings.ToLower(strings.TrimSpace(ctx))
			if ctx == "" {
				return nil, ErrAborted
			}
		default:
			return nil, ErrAborted
		}
	}
	r.Specialists = pool
	return r, nil
}

// FilterContext keeps the specialists whose context equals ctx, ignoring case.
func FilterContext(pool []*Persona, ctx string) []*Persona {
	var out []*Persona
	for _, p := range pool {
		if strings.EqualFold(p.Context(), strings.TrimSpace(ctx)) {
			out = append(out, p)
		}
	}
	return out
}

// ResolveLenses reads the perspectives field: "none", "auto" (every lens;
// the scenario picks among them) or a comma list (unknown names are skipped
// with a warning).
func (l *Library) ResolveLenses(spec string) (lenses []*Persona, auto bool, warnings []string, err error) {
	spec = strings.TrimSpace(strings.ToLower(spec))
	switch spec {
	case "none":
		return nil, false, nil, nil
	case "", "auto":
		return l.List(Lens), true, nil, nil
	}
	for _, n := range strings.Split(spec, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !ValidID(n) {
			return nil, false, nil, fmt.Errorf("perspectives: %q is not a lens name", n)
		}
		p, ok := l.Get(Lens, n)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("unknown perspective %q skipped (known: %s)", n, strings.Join(ids(l.List(Lens)), ", ")))
			continue
		}
		lenses = append(lenses, p)
	}
	if len(lenses) == 0 {
		return nil, false, warnings, fmt.Errorf("%w: %s (known: %s; or use auto or none)", ErrNoSuchPerspective, spec, strings.Join(ids(l.List(Lens)), ", "))
	}
	return lenses, false, warnings, nil
}

func ids(ps []*Persona) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func contexts(ps []*Persona) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if c := p.Context(); !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}
