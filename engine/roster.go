package engine

import (
	"fmt"
	"slices"
	"sort"
)

// Roster assigns a model to each persona of a run: the model a persona
// names itself, else its pin, else the next model of the pool (handed out
// in turn over the unpinned personas, sorted by id), else the default. A
// model that cannot be resolved falls back to the default with a warning.
type Roster struct {
	// Default is the session default and the fallback.
	Default string
	// Pins name the models of particular personas; Pool is shared out
	// among the others.
	Pins map[string]string
	Pool []string
	// Resolve turns a model as written into provider:model (aliases, bare
	// names); nil keeps models as written.
	Resolve func(name string) (string, error)
	// PinsField names where the pins came from, for the warning about a
	// pin of a persona that is not taking part ("specialist_models").
	PinsField string
}

// Assign returns the model of each persona in ids, and warnings; own holds
// the models personas name themselves.
func (r Roster) Assign(ids []string, own map[string]string) (map[string]string, []string) {
	out := map[string]string{}
	var warnings, unpinned []string
	for _, id := range ids {
		switch {
		case own[id] != "":
			out[id] = own[id]
		case r.Pins[id] != "":
			out[id] = r.Pins[id]
		default:
			unpinned = append(unpinned, id)
		}
	}
	sort.Strings(unpinned)
	for i, id := range unpinned {
		if len(r.Pool) > 0 {
			out[id] = r.Pool[i%len(r.Pool)]
		} else {
			out[id] = r.Default
		}
	}
	if r.Resolve != nil {
		for id, m := range out {
			ref, err := r.Resolve(m)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("model %q for %s is unavailable (%v); using the session default %s", m, id, err, r.Default))
				out[id] = r.Default
				continue
			}
			out[id] = ref
		}
	}
	for name := range r.Pins {
		if !slices.Contains(ids, name) {
			warnings = append(warnings, fmt.Sprintf("%s pins %q, which is not taking part", r.PinsField, name))
		}
	}
	sort.Strings(warnings)
	return out, warnings
}
