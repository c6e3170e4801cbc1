package debate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/persona"
)

// Observer reads the main debate from one bias and names the question it
// missed. It comes from a persona file, from an ensemble file, or from a
// model (generate:N).
type Observer struct {
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	Bias             string   `json:"bias"`
	Focus            string   `json:"focus"`
	BlindSpots       []string `json:"blind_spots"`
	ExampleQuestions []string `json:"example_questions,omitempty"`
	AntiExamples     []string `json:"anti_examples,omitempty"`
	// Origin says where the observer came from: built-in, project, user, a
	// persona file's path, generated, or the ensemble file it was read from.
	Origin string `json:"origin"`
	// Rejected are the generated attempts discarded for being too close to
	// an earlier observer, before this one was kept.
	Rejected []Attempt `json:"rejected,omitempty"`
	// Body is a persona file's prose, given to the model with the fields.
	Body string `json:"-"`
}

// Attempt is a generated observer that came out too close to an earlier
// one and was generated again.
type Attempt struct {
	Name  string `json:"name"`
	Bias  string `json:"bias"`
	Focus string `json:"focus"`
	// CloseTo names the earlier observer it was too close to, at Distance
	// (see Settings.MinObserverDistance).
	CloseTo  string  `json:"close_to"`
	Distance float64 `json:"distance"`
}

// modelWritten reports whether a model wrote the observer: generated in
// this run, or read from an ensemble file (which a run writes from the
// observers it generated). Its prompt carries it as data.
func (o *Observer) modelWritten() bool {
	return o.Origin == "generated" || strings.HasPrefix(o.Origin, "ensemble ")
}

// observerOf is the observer a persona file describes.
func observerOf(p *persona.Persona) *Observer {
	m := p.Meta
	return &Observer{ID: p.ID, Name: p.DisplayName(), Bias: strings.TrimSpace(m.Bias), Focus: strings.TrimSpace(m.Focus),
		BlindSpots: m.BlindSpots, ExampleQuestions: m.ExampleQuestions, AntiExamples: m.AntiExamples,
		Origin: source(p.Level.String(), p.Path), Body: strings.TrimSpace(withoutTitle(p.Body))}
}

// DefaultObservers are the three built-in observers.
var DefaultObservers = []string{"phenomenologist", "materialist-historian", "pragmatist-engineer"}

// ObserverSpec is what --observers asks for: names (persona names or
// files), None, or Generate > 0; From is the ensemble file of
// --observers-from.
type ObserverSpec struct {
	Names    []string
	None     bool
	Generate int
	From     string
}

// MaxObservers bounds the observers of one debate, each a branch.
const MaxObservers = 12

var generatePattern = lazyre.New(`^generate:\s*(\d+)$`)

// ParseObservers reads --observers: a comma list of names or persona
// files, "none", or "generate:N". "" is the default observers.
func ParseObservers(s string) (ObserverSpec, error) {
	s = strings.TrimSpace(s)
	switch low := strings.ToLower(s); {
	case low == "":
		return ObserverSpec{Names: DefaultObservers}, nil
	case low == "none":
		return ObserverSpec{None: true}, nil
	case strings.HasPrefix(low, "generate"):
		m := generatePattern.Re().FindStringSubmatch(low)
		if m == nil {
			return ObserverSpec{}, fmt.Errorf("%q: write generate:N, as in generate:5", s)
		}
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > MaxObservers {
			return ObserverSpec{}, fmt.Errorf("%q: generate 1 to %d observers", s, MaxObservers)
		}
		return ObserverSpec{Generate: n}, nil
	}
	var names []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ObserverSpec{}, fmt.Errorf("%q names no observer; use names, none or generate:N", s)
	}
	if len(names) > MaxObservers {
		return ObserverSpec{}, fmt.Errorf("%d observers; name at most %d", len(names), MaxObservers)
	}
	return ObserverSpec{Names: names}, nil
}

// resolveObservers finds each named observer.
func resolveObservers(lib *persona.Library, names []string) ([]*Observer, error) {
	var out []*Observer
	seen := map[string]bool{}
	for _, n := range names {
		p, err := findPersona(lib, persona.Observer, n, "--observers")
		if err != nil {
			return nil, err
		}
		if seen[p.ID] {
			return nil, &engine.UserError{Field: "--observers", Msg: fmt.Sprintf("%s is named twice", p.ID)}
		}
		seen[p.ID] = true
		out = append(out, observerOf(p))
	}
	return out, nil
}

// slug turns a generated observer's name into an id: lower-case letters,
// digits and dashes, without a leading "the".
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	s := strings.TrimPrefix(b.String(), "the-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	if s == "" {
		s = "observer"
	}
	return s
}

// uniqueIDs makes the observers' ids unique, numbering repeats.
func uniqueIDs(obs []*Observer) {
	seen := map[string]int{}
	for _, o := range obs {
		base := o.ID
		seen[base]++
		if n := seen[base]; n > 1 {
			o.ID = fmt.Sprintf("%s-%d", base, n)
		}
	}
}
