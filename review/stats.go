package review

import (
	"encoding/json"
	"github.com/sotlabs/sot/internal/plainfile"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Stats is what the decisions recorded on a project's reviews say: how
// often each specialist's and each lens's findings were accepted,
// dismissed or deferred, how that went over time, and which findings were
// dismissed most.
type Stats struct {
	Decisions    int          `json:"decisions"`
	Reviews      int          `json:"reviews"`
	Specialists  []Acceptance `json:"specialists"`
	Lenses       []Acceptance `json:"lenses"`
	Months       []Acceptance `json:"months"`
	MostDismiss  []Dismissal  `json:"most_dismissed"`
	FirstDecided time.Time    `json:"first,omitzero"`
	LastDecided  time.Time    `json:"last,omitzero"`
}

// Acceptance counts the decisions about one specialist's, lens's or
// month's findings.
type Acceptance struct {
	Name      string  `json:"name"`
	Accepted  int     `json:"accepted"`
	Dismissed int     `json:"dismissed"`
	Deferred  int     `json:"deferred"`
	Rate      float64 `json:"acceptance"` // accepted over accepted and dismissed
}

// Dismissal is a finding dismissed, with how often and why.
type Dismissal struct {
	Claim   string   `json:"claim"`
	Times   int      `json:"times"`
	Reasons []string `json:"reasons"`
}

// ProjectStats reads every resolutions.jsonl of the project's reviews
// (.sot/reviews/*, and PAW's) and counts the decisions in them; a run's
// latest decision about a finding is the one counted.
func ProjectStats(top string) (Stats, error) {
	var st Stats
	dirs, _ := filepath.Glob(filepath.Join(top, ".sot", "reviews", "*"))
	paw, _ := filepath.Glob(filepath.Join(top, ".paw", "work", "*", "reviews"))
	spec, lens, month := map[string]*Acceptance{}, map[string]*Acceptance{}, map[string]*Acceptance{}
	dismissed := map[string]*Dismissal{}
	count := func(m map[string]*Acceptance, name, status string) {
		a := m[name]
		if a == nil {
			a = &Acceptance{Name: name}
			m[name] = a
		}
		switch status {
		case Accepted:
			a.Accepted++
		case Dismissed:
			a.Dismissed++
		case Deferred:
			a.Deferred++
		}
	}
	// The project's record holds every decision since it existed; the
	// reviews' own records hold those made before, and those of reviews
	// whose project record was lost. A run's latest decision about an
	// item wins.
	files := []string{filepath.Join(top, projectResolutions)}
	for _, dir := range append(dirs, paw...) {
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			files = append(files, filepath.Join(dir, resolutionsFile))
		}
	}
	latest := map[string]Resolution{}
	var order []string
	runs := map[string]bool{}
	for _, file := range files {
		b, err := plainfile.ReadOwn(file)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var r Resolution
			if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &r) != nil || r.Item == "" || r.Status == "" {
				continue
			}
			k := r.RunID + "\x00" + r.Item
			old, ok := latest[k]
			if !ok {
				order = append(order, k)
			}
			if !ok || !r.At.Before(old.At) {
				latest[k] = r
			}
			runs[r.RunID] = true
		}
	}
	st.Reviews = len(runs)
	for _, k := range order {
		r := latest[k]
		st.Decisions++
		if st.FirstDecided.IsZero() || r.At.Before(st.FirstDecided) {
			st.FirstDecided = r.At
		}
		if r.At.After(st.LastDecided) {
			st.LastDecided = r.At
		}
		for _, s := range r.Specialists {
			count(spec, s, r.Status)
		}
		for _, l := range lensesOf(r.FindingIDs) {
			count(lens, l, r.Status)
		}
		if !r.At.IsZero() {
			count(month, r.At.UTC().Format("2006-01"), r.Status)
		}
		if r.Status == Dismissed && r.Claim != "" {
			d := dismissed[r.Claim]
			if d == nil {
				d = &Dismissal{Claim: r.Claim}
				dismissed[r.Claim] = d
			}
			d.Times++
			if r.Reason != "" && !slices.Contains(d.Reasons, r.Reason) {
				d.Reasons = append(d.Reasons, r.Reason)
			}
		}
	}
	st.Specialists, st.Lenses, st.Months = sorted(spec, false), sorted(lens, false), sorted(month, true)
	for _, d := range dismissed {
		st.MostDismiss = append(st.MostDismiss, *d)
	}
	sort.Slice(st.MostDismiss, func(i, j int) bool {
		a, b := st.MostDismiss[i], st.MostDismiss[j]
		if a.Times != b.Times {
			return a.Times > b.Times
		}
		return a.Claim < b.Claim
	})
	if len(st.MostDismiss) > 10 {
		st.MostDismiss = st.MostDismiss[:10]
	}
	return st, nil
}

// lensesOf reads the lenses from finding ids: "security.premortem.1" was
// made under the premortem lens, "security.1" under none.
func lensesOf(ids []string) []string {
	var out []string
	for _, id := range ids {
		parts := strings.Split(id, ".")
		l := "none"
		if len(parts) >= 3 {
			l = parts[len(parts)-2]
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// sorted lists the counts by name (months, in time order) or by how many
// decisions they hold, with their acceptance rates.
func sorted(m map[string]*Acceptance, byName bool) []Acceptance {
	out := make([]Acceptance, 0, len(m))
	for _, a := range m {
		if n := a.Accepted + a.Dismissed; n > 0 {
			a.Rate = float64(a.Accepted) / float64(n)
		}
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool {
		if !byName {
			ni, nj := out[i].Accepted+out[i].Dismissed+out[i].Deferred, out[j].Accepted+out[j].Dismissed+out[j].Deferred
			if ni != nj {
				return ni > nj
			}
		}
		return out[i].Name < out[j].Name
	})
	return out
}
