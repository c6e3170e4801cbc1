// Command gen writes gitleaks' default rule set as the JSON file that
// package secrets embeds. It is a module of its own, so that sot itself
// never requires gitleaks and what gitleaks needs to load its configuration
// (viper, zerolog, archive readers and more). To take a newer rule set:
//
//	cd internal/secrets/gen
//	go get github.com/zricethezav/gitleaks/v8@latest && go mod tidy
//	go run . > ../gitleaks.json
//
// then run package secrets' tests, which compile every rule. The command
// fails when the configuration uses a feature that package secrets does not
// evaluate (composite rules, for now), rather than writing rules whose
// meaning would silently change.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sort"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// ruleSet is the file format package secrets reads.
type ruleSet struct {
	Source     string      `json:"source"`
	License    string      `json:"license"`
	Allowlists []allowlist `json:"allowlists"`
	Rules      []rule      `json:"rules"`
}

type rule struct {
	ID          string      `json:"id"`
	Regex       string      `json:"regex"`
	Path        string      `json:"path,omitempty"`
	SecretGroup int         `json:"secret_group,omitempty"`
	Entropy     float64     `json:"entropy,omitempty"`
	Keywords    []string    `json:"keywords,omitempty"`
	Allowlists  []allowlist `json:"allowlists,omitempty"`
}

type allowlist struct {
	And       bool     `json:"and,omitempty"`
	Target    string   `json:"target,omitempty"`
	Regexes   []string `json:"regexes,omitempty"`
	StopWords []string `json:"stopwords,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Commits   bool     `json:"commits,omitempty"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return err
	}
	cfg := d.Config
	out := ruleSet{Source: "github.com/zricethezav/gitleaks/v8 " + version() + ", config/gitleaks.toml", License: "MIT, see LICENSE.gitleaks"}
	for _, a := range cfg.Allowlists {
		out.Allowlists = append(out.Allowlists, convert(a))
	}
	ids := append([]string(nil), cfg.OrderedRules...)
	sort.Strings(ids)
	for _, id := range ids {
		r := cfg.Rules[id]
		if len(r.RequiredRules) > 0 || r.SkipReport {
			return fmt.Errorf("rule %s is a composite rule, which package secrets does not evaluate yet", id)
		}
		if r.Regex == nil {
			continue // a rule on file names only
		}
		o := rule{ID: id, Regex: r.Regex.String(), SecretGroup: r.SecretGroup, Entropy: r.Entropy, Keywords: r.Keywords}
		if r.Path != nil {
			o.Path = r.Path.String()
		}
		for _, a := range r.Allowlists {
			o.Allowlists = append(o.Allowlists, convert(a))
		}
		out.Rules = append(out.Rules, o)
	}
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	return w.Flush()
}

func convert(a *config.Allowlist) allowlist {
	o := allowlist{And: a.MatchCondition == config.AllowlistMatchAnd, Target: a.RegexTarget, StopWords: a.StopWords, Commits: len(a.Commits) > 0}
	sort.Strings(o.StopWords)
	for _, r := range a.Regexes {
		o.Regexes = append(o.Regexes, r.String())
	}
	for _, p := range a.Paths {
		o.Paths = append(o.Paths, p.String())
	}
	return o
}

// version is the gitleaks module version this command was built with.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/zricethezav/gitleaks/v8" {
				return m.Version
			}
		}
	}
	return "(unknown version)"
}
