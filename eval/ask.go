package eval

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/sotlabs/sot/internal/yamlfile"
)

// AskSet is a corpus and questions whose answers it holds, each with the
// notes that hold it: sot eval ask asks each question and counts the
// citations of other notes (unsupported) and the sentences the answer's
// own check dropped.
type AskSet struct {
	Name      string
	Notes     map[string][]byte // file name -> content
	Questions []AskQuestion     `yaml:"questions"`
}

// AskQuestion is one question and the notes that answer it.
type AskQuestion struct {
	ID       string   `yaml:"id" json:"id"`
	Question string   `yaml:"question" json:"question"`
	Sources  []string `yaml:"sources" json:"sources"`
}

//go:embed asks
var asks embed.FS

// BuiltinAskSets returns the question sets sot ships.
func BuiltinAskSets() ([]AskSet, error) {
	sub, err := fs.Sub(asks, "asks")
	if err != nil {
		return nil, err
	}
	return LoadAskSets(sub)
}

// LoadAskSets reads every directory of fsys holding a questions.yaml and
// a notes/ directory.
func LoadAskSets(fsys fs.FS) ([]AskSet, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var sets []AskSet
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		b, err := fs.ReadFile(fsys, path.Join(e.Name(), "questions.yaml"))
		if err != nil {
			continue
		}
		s := AskSet{Name: e.Name(), Notes: map[string][]byte{}}
		if err := yamlfile.Decode(path.Join(e.Name(), "questions.yaml"), b, &s, true, 0); err != nil {
			return nil, err
		}
		notes, err := fs.ReadDir(fsys, path.Join(e.Name(), "notes"))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		for _, n := range notes {
			if n.Type().IsRegular() {
				if s.Notes[n.Name()], err = fs.ReadFile(fsys, path.Join(e.Name(), "notes", n.Name())); err != nil {
					return nil, err
				}
			}
		}
		for _, q := range s.Questions {
			for _, src := range q.Sources {
				if _, ok := s.Notes[src]; !ok {
					return nil, fmt.Errorf("%s: question %s names %s, which is not among its notes", e.Name(), q.ID, src)
				}
			}
		}
		sets = append(sets, s)
	}
	return sets, nil
}

// AskOutcome is what one answer came to.
type AskOutcome struct {
	Question    string  `json:"question"`
	Sentences   int     `json:"sentences"`
	Dropped     int     `json:"dropped"`
	Citations   int     `json:"citations"`
	Unsupported int     `json:"unsupported"` // citations of notes that do not hold the answer
	CostUSD     float64 `json:"cost_usd"`
	Error       string  `json:"error,omitempty"`
}

// ScoreAnswer reads an answer.json and counts, for q, its sentences, the
// sentences dropped by the answer's own check, its citations, and those
// of readings of notes that do not hold the answer (a reading of several
// notes is supported when one of them does). answer.json names a source
// by its title, so titles maps each note's file name to its title.
func ScoreAnswer(q AskQuestion, titles map[string]string, answerJSON []byte) (AskOutcome, error) {
	var a struct {
		Sources []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"sources"`
		Answers []struct {
			ID      string   `json:"id"`
			Source  string   `json:"source"`
			Members []string `json:"members"`
		} `json:"answers"`
		Sentences []struct {
			Answers []string `json:"answers"`
		} `json:"sentences"`
		Dropped []json.RawMessage `json:"dropped"`
		Usage   struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(answerJSON, &a); err != nil {
		return AskOutcome{}, fmt.Errorf("answer.json: %w", err)
	}
	known := map[string]bool{}
	for _, src := range q.Sources {
		known[titles[src]] = true
	}
	titleOf := map[string]string{}
	for _, s := range a.Sources {
		titleOf[s.ID] = s.Title
	}
	supported := map[string]bool{}
	for _, ans := range a.Answers {
		ids := ans.Members
		if len(ids) == 0 {
			ids = []string{ans.Source}
		}
		supported[ans.ID] = slices.ContainsFunc(ids, func(id string) bool { return known[titleOf[id]] })
	}
	o := AskOutcome{Question: q.ID, Sentences: len(a.Sentences), Dropped: len(a.Dropped), CostUSD: a.Usage.CostUSD}
	for _, s := range a.Sentences {
		for _, id := range s.Answers {
			o.Citations++
			if !supported[id] {
				o.Unsupported++
			}
		}
	}
	return o, nil
}

// NoteTitle is the title a note is known by in an answer: its first "# "
// heading, or its file name without the extension.
func NoteTitle(name string, text []byte) string {
	for _, line := range strings.Split(string(text), "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return strings.TrimSuffix(name, path.Ext(name))
}

// AskFigures are the rates of a set of answers, each with its 95%
// interval by bootstrap over the questions.
type AskFigures struct {
	Questions   int      `json:"questions"`
	Unsupported Interval `json:"unsupported_citation_rate"`
	Dropped     Interval `json:"dropped_sentence_rate"`
	CostUSD     float64  `json:"cost_usd"`
	Failed      int      `json:"failed_questions"`
}

// SummarizeAsk computes the rates: unsupported citations over citations,
// dropped sentences over sentences written (kept and dropped).
func SummarizeAsk(os []AskOutcome, seed uint64) AskFigures {
	f := AskFigures{Questions: len(os)}
	rates := func(os []AskOutcome) (float64, float64) {
		var cit, uns, sent, drop int
		for _, o := range os {
			cit, uns, sent, drop = cit+o.Citations, uns+o.Unsupported, sent+o.Sentences, drop+o.Dropped
		}
		return ratio(uns, cit), ratio(drop, sent+drop)
	}
	for _, o := range os {
		f.CostUSD += o.CostUSD
		if o.Error != "" {
			f.Failed++
		}
	}
	u, d := rates(os)
	rng := rand.New(rand.NewPCG(seed, 0xa5c))
	var us, ds []float64
	sample := make([]AskOutcome, len(os))
	for range Bootstraps {
		for i := range sample {
			sample[i] = os[rng.IntN(len(os))]
		}
		a, b := rates(sample)
		us, ds = appendNum(us, a), appendNum(ds, b)
	}
	f.Unsupported, f.Dropped = interval(u, us), interval(d, ds)
	return f
}

// AskReport is sot eval ask's report: each set's figures and answers.
type AskReport struct {
	Name    string                  `json:"name"`
	Model   string                  `json:"model"`
	Sets    map[string]AskFigures   `json:"sets"`
	Answers map[string][]AskOutcome `json:"answers"`
}

// Markdown is the report as Markdown.
func (r AskReport) Markdown() string {
	var b strings.Builder
	model := r.Model
	if model == "" {
		model = "the configuration's default"
	}
	fmt.Fprintf(&b, "# Evaluation of answers: %s\n\nModel: %s. Intervals are 95%%, by bootstrap over the questions.\n\n", r.Name, model)
	b.WriteString("| set | questions | unsupported citations | dropped sentences | cost | failed |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, name := range sortedKeys(r.Sets) {
		f := r.Sets[name]
		fmt.Fprintf(&b, "| %s | %d | %s | %s | $%.4f | %d |\n", name, f.Questions, pct(f.Unsupported), pct(f.Dropped), f.CostUSD, f.Failed)
	}
	for _, name := range sortedKeys(r.Answers) {
		fmt.Fprintf(&b, "\n## %s\n\n| question | sentences | dropped | citations | unsupported |\n| --- | --- | --- | --- | --- |\n", name)
		for _, o := range r.Answers[name] {
			if o.Error != "" {
				fmt.Fprintf(&b, "| %s | failed: %s | | | |\n", o.Question, o.Error)
				continue
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", o.Question, o.Sentences, o.Dropped, o.Citations, o.Unsupported)
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
