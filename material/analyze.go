package material

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/keywords"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/parallel"
)

// Categories of a change, as reported by Analyze.
const (
	CategoryNewLogic      = "new-logic"
	CategoryRefactor      = "refactor"
	CategoryConfig        = "config"
	CategoryAPISurface    = "api-surface"
	CategoryDataHandling  = "data-handling"
	CategoryTests         = "tests"
	CategoryDependencies  = "dependencies"
	CategoryOperational   = "operational"
	CategoryTrustBoundary = "trust-boundary"
	CategoryDocs          = "docs"
	CategoryDeletion      = "deletion"
	CategoryBehaviour     = "behaviour-change"
)

// maxKeywords caps Signals.Keywords.
const maxKeywords = 200

// minProseLines is the minimum relevance of prose: in documentation files
// (Markdown, reST, AsciiDoc, text), the line rules of trust-boundary,
// data-handling and api-surface must match on at least this many lines
// before the category counts. One passing mention of a token or of
// serialization in a README is not a signal; a document that keeps
// returning to it is.
const minProseLines = 2

// Evidence weights: a file that a path rule or a code pattern puts in a
// category weighs strongWeight; a file that only mentions it (a security
// word in code, or prose in a document) weighs weakWeight.
const (
	strongWeight = 1.0
	weakWeight   = 0.5
)

// Signals describes a change for selecting specialists and lenses. Every
// category comes with a reason naming an example file, so that a selection
// can be explained.
type Signals struct {
	Languages  map[string]int    // language -> number of files
	Dirs       []string          // top-level directories touched ("." for files at the root), sorted
	Categories []string          // sorted; see Analyze
	Reasons    map[string]string // category -> "config: deploy/k8s.yaml changed"
	Keywords   map[string]int    // lower-cased words on changed lines -> occurrences (the 200 most frequent)
	// Evidence maps each category to the files that carry it and how
	// strongly: 1 when a path rule or a code pattern puts the file in the
	// category (a handler, a Dockerfile, go.mod), 0.5 when the file only
	// mentions it (a security word in code, prose in a document). See
	// Strength.
	Evidence map[string]map[string]float64
	// Files counts the files touched, skipped ones included; Additions and
	// Deletions count the lines of the reviewed files.
	Files, Additions, Deletions        int
	TestFilesChanged, CodeFilesChanged int
}

// Has reports whether the change falls in category c.
func (s Signals) Has(c string) bool { return slices.Contains(s.Categories, c) }

// Strength says how strongly the change carries any of the categories:
// the sum over the files that carry one of them of the file's strongest
// evidence (see Evidence), so that a file in two of the categories counts
// once. It is 0 when the change carries none of them.
func (s Signals) Strength(cats ...string) float64 {
	best := make(map[string]float64)
	for _, c := range cats {
		for p, w := range s.Evidence[c] {
			best[p] = max(best[p], w)
		}
	}
	var sum float64
	for _, p := range slices.Sorted(maps.Keys(best)) {
		sum += best[p]
	}
	return sum
}

// Analyze describes the change with deterministic heuristics. The lines it
// reads are the changed (added and removed) lines of a diff, or every line
// of artifacts and freeform material. The categories:
//
//   - tests: a test file changed (_test., .spec., .test., test_*.py, or a
//     test/, tests/, __tests__/ or testdata/ directory).
//   - config: a configuration file changed (YAML, JSON, TOML, INI, .env,
//     HCL/Terraform, Dockerfile, CI workflows), tests excepted.
//   - dependencies: a manifest (go.mod, package.json, requirements*.txt,
//     constraints*.txt,
//     pyproject.toml, Cargo.toml, Gemfile, pom.xml, build.gradle, ...) or a
//     lock file changed, skipped lock files included.
//   - operational: deployment and operations files changed: deploy/, k8s/,
//     helm/, charts/, terraform/, infra/, ansible/ and migrations/
//     directories, Dockerfiles and compose files, *.tf, *.sql, CI
//     workflows (.github/workflows, .gitlab-ci.yml, Jenkinsfile, .circleci).
//   - trust-boundary: a line mentions authentication or authorization
//     (auth, token, password, secret, session, cookie, jwt, oauth,
//     permission, role, credential, csrf, ...), cryptography, HTTP handlers
//     and routes, request parameters, uploads, running commands or SQL.
//   - data-handling: SQL files, migrations and schemas, serialization
//     formats (.proto, .avsc), or lines that build SQL, define tables, use
//     an ORM or (de)serialize data.
//   - api-surface: exported Go declarations (func/type/var/const with an
//     upper-case name), exported TypeScript/JavaScript symbols, public
//     Java/Kotlin/C#/Rust declarations, HTTP routes, or OpenAPI/Swagger,
//     .proto, GraphQL and Thrift files, outside tests.
//   - new-logic: added control-flow lines (if, for, switch, case, return,
//     ...) outnumber removed ones in non-test code.
//   - refactor: non-test code whose added and removed line counts are
//     within 40% of each other, and which renames files or mostly moves
//     lines (half the added lines also appear among the removed ones); a
//     code file renamed without other changes counts too.
//   - docs: every file is documentation (Markdown, reST, AsciiDoc, text,
//     README/LICENSE-style names).
//   - deletion: a file was deleted.
//   - behaviour-change: lines of non-test code other than comments and
//     blank lines were added or removed. Every such change could alter
//     behaviour; it is the weakest category, there so that an ordinary
//     code change is never judged to concern nobody.
//
// Data-handling also covers lines that read or write files or read the
// environment (os.WriteFile, open(..., "w"), fs.writeFile, os.Getenv,
// process.env, ...).
//
// The line rules (trust-boundary, data-handling, api-surface) read the
// lines of documentation files as prose: there a category needs matches
// on minProseLines lines. Configuration, dependencies and operations are
// decided by file paths only, never by words.
func (m *Material) Analyze() Signals { return m.analyze(true) }

// Categorize is Analyze without the keywords (Signals.Keywords is empty):
// choosing lenses needs only the categories and their evidence, and
// counting every word takes about half of Analyze's time.
func (m *Material) Categorize() Signals { return m.analyze(false) }

func (m *Material) analyze(keywords bool) Signals {
	return m.analyzeIn(keywords, 0)
}

// analyzeIn is analyze with the files read in the given number of parts
// at once, or with 0 in one part for each CPU (see analyzeFiles).
func (m *Material) analyzeIn(keywords bool, parts int) Signals {
	a := m.analyzeFiles(keywords, parts)
	s := a.s
	allDocs := true
	for _, f := range m.Files {
		if !isDocPath(f.Path) {
			allDocs = false
		}
	}
	for _, sk := range m.Skipped {
		s.Files++
		a.dirs[topDir(sk.Path)] = true
		a.path(sk.Path)
		if !isDocPath(sk.Path) {
			allDocs = false
		}
	}
	if allDocs && s.Files > 0 {
		example := ""
		if len(m.Files) > 0 {
			example = m.Files[0].Path
		} else {
			example = m.Skipped[0].Path
		}
		a.note(CategoryDocs, "only documentation changed (%s)", example)
		for _, f := range m.Files {
			a.evidence(CategoryDocs, f.Path, strongWeight)
		}
		for _, sk := range m.Skipped {
			a.evidence(CategoryDocs, sk.Path, strongWeight)
		}
	}
	a.finish()
	for d := range a.dirs {
		s.Dirs = append(s.Dirs, d)
	}
	slices.Sort(s.Dirs)
	for c := range s.Reasons {
		s.Categories = append(s.Categories, c)
	}
	slices.Sort(s.Categories)
	s.Keywords = topKeywords(a.wordAt, a.wordCount, maxKeywords)
	return *s
}

// analysisPart is the text, in bytes, a part of a large material's files
// holds at least when they are analysed in parts.
const analysisPart = 256 << 10

// analyzeFiles applies the path and line rules to the material's files,
// cut into parts of about the same size in bytes (at most one a file):
// the given number of parts, or with 0 one for each CPU, but none of
// less than analysisPart bytes. The parts are analysed at once and merged
// in the files' order, which comes to what reading every file in turn
// comes to (see merge).
func (m *Material) analyzeFiles(keywords bool, parts int) *analysis {
	total := 0
	for _, f := range m.Files {
		total += len(f.Text)
	}
	if parts == 0 {
		parts = min(runtime.GOMAXPROCS(0), total/analysisPart)
	}
	parts = max(1, min(parts, len(m.Files)))
	// bounds[i] is the first file of part i.
	bounds := make([]int, 0, parts+1)
	bounds = append(bounds, 0)
	seen := 0
	for i, f := range m.Files {
		if len(bounds) < parts && seen >= total*len(bounds)/parts {
			bounds = append(bounds, i)
		}
		seen += len(f.Text)
	}
	bounds = append(bounds, len(m.Files))
	as := make([]*analysis, len(bounds)-1)
	parallel.For(len(as), func(i int) {
		as[i] = newAnalysis(keywords, m.Type, m.Files[bounds[i]:bounds[i+1]])
	})
	a := as[0]
	for _, b := range as[1:] {
		a.merge(b)
	}
	return a
}

// newAnalysis reads files of a material of type typ.
func newAnalysis(keywords bool, typ string, files []File) *analysis {
	a := &analysis{
		s: &Signals{
			Languages: make(map[string]int),
			Reasons:   make(map[string]string),
			Keywords:  make(map[string]int),
			Evidence:  make(map[string]map[string]float64),
		},
		dirs: make(map[string]bool), removedSet: make(map[string]int), prose: make(map[string]*proseHits), keywords: keywords,
	}
	if typ == TypeDiff {
		n := 0
		for _, f := range files {
			if isCodePath(f.Path) && !isTestPath(f.Path) {
				n += f.Additions
			}
		}
		a.addedCode = make([]codeLine, 0, n)
	}
	for _, f := range files {
		a.file(typ, f)
	}
	return a
}

// merge adds the analysis of the files after a's to a, as if a had read
// them too: counts add up, sets join, b's added lines follow a's, and of
// two reasons for a category b's stays only when its rank is lower (the
// first of the lowest rank stays, as in noteRank); the same holds for a
// prose hit's reason and for the file of the most added control flow.
func (a *analysis) merge(b *analysis) {
	s, t := a.s, b.s
	s.Files += t.Files
	s.Additions += t.Additions
	s.Deletions += t.Deletions
	s.TestFilesChanged += t.TestFilesChanged
	s.CodeFilesChanged += t.CodeFilesChanged
	for l, n := range t.Languages {
		s.Languages[l] += n
	}
	for cat, r := range b.rank {
		if old, ok := a.rank[cat]; ok && old <= r {
			continue
		}
		if a.rank == nil {
			a.rank = make(map[string]int)
		}
		a.rank[cat] = r
		s.Reasons[cat] = t.Reasons[cat]
	}
	for cat, e := range t.Evidence {
		for p, w := range e {
			a.evidence(cat, p, w)
		}
	}
	maps.Copy(a.dirs, b.dirs)
	for i, w := range b.wordIndex() {
		if j, ok := a.wordAt[w]; ok {
			a.wordCount[j] += b.wordCount[i]
			continue
		}
		if a.wordAt == nil {
			a.wordAt = make(map[string]int)
		}
		a.wordAt[w] = len(a.wordCount)
		a.wordCount = append(a.wordCount, b.wordCount[i])
	}
	a.cfAdded += b.cfAdded
	a.cfRemoved += b.cfRemoved
	if b.cfExampleCount > a.cfExampleCount {
		a.cfExample, a.cfExampleCount = b.cfExample, b.cfExampleCount
	}
	a.codeAdded += b.codeAdded
	a.codeRemoved += b.codeRemoved
	if a.renamedCode == "" {
		a.renamedCode, a.renamedTo = b.renamedCode, b.renamedTo
	}
	for l, n := range b.removedSet {
		a.removedSet[l] += n
	}
	a.addedCode = append(a.addedCode, b.addedCode...)
	for p := range b.cfFiles {
		if a.cfFiles == nil {
			a.cfFiles = make(map[string]bool)
		}
		a.cfFiles[p] = true
	}
	for p, n := range b.behaviour {
		if a.behaviour == nil {
			a.behaviour = make(map[string]int)
		}
		a.behaviour[p] += n
	}
	for cat, h := range b.prose {
		g := a.prose[cat]
		if g == nil {
			a.prose[cat] = h
			continue
		}
		g.lines += h.lines
		maps.Copy(g.files, h.files)
		if h.rank < g.rank {
			g.rank, g.reason = h.rank, h.reason
		}
	}
}

// wordIndex lists the words a counted, each at its index in wordCount.
func (a *analysis) wordIndex() []string {
	words := make([]string, len(a.wordCount))
	for w, i := range a.wordAt {
		words[i] = w
	}
	return words
}

// analysis accumulates what Analyze needs across files.
type analysis struct {
	s    *Signals
	dirs map[string]bool

	// wordAt indexes wordCount by lower-cased word: a word already seen
	// is counted without building its lower-cased string again. Words
	// are counted only with keywords set.
	keywords  bool
	wordAt    map[string]int
	wordCount []int

	// new-logic
	cfAdded, cfRemoved int
	cfExample          string
	cfExampleCount     int
	// refactor
	codeAdded, codeRemoved int
	renamedCode            string
	removedSet             map[string]int // trimmed removed code lines
	addedCode              []codeLine     // trimmed added code lines

	rank map[string]int // category -> rank of its reason

	cfFiles   map[string]bool       // files with added control-flow lines
	behaviour map[string]int        // non-test code file -> changed code lines
	prose     map[string]*proseHits // category -> matches in documentation
	renamedTo string                // the renamed code file of renamedCode
}

// proseHits are the matches of a line rule in documentation files, which
// count only once there are minProseLines of them.
type proseHits struct {
	lines  int
	files  map[string]bool
	rank   int
	reason string
}

// evidence records that file p carries category cat with weight w; the
// strongest weight stays.
func (a *analysis) evidence(cat, p string, w float64) {
	e := a.s.Evidence[cat]
	if e == nil {
		e = make(map[string]float64)
		a.s.Evidence[cat] = e
	}
	e[p] = max(e[p], w)
}

// noteFile records a category with its reason and file p as its evidence.
func (a *analysis) noteFile(cat, p string, w float64, rank int, format string, args ...any) {
	a.noteRank(cat, rank, format, args...)
	a.evidence(cat, p, w)
}

// lineHit records a line rule's match on a line of file p: at once for
// code and configuration, and as a prose hit for documentation.
func (a *analysis) lineHit(cat, p string, prose, weak bool, rank int, format string, args ...any) {
	if !prose {
		w := strongWeight
		if weak {
			w = weakWeight
		}
		a.noteFile(cat, p, w, rank, format, args...)
		return
	}
	h := a.prose[cat]
	if h == nil {
		h = &proseHits{files: make(map[string]bool), rank: rank + 1}
		a.prose[cat] = h
	}
	h.lines++
	h.files[p] = true
	if rank < h.rank {
		h.rank, h.reason = rank, fmt.Sprintf(format, args...)
	}
}

type codeLine struct{ text, path string }

// note records a category with its reason; the first reason stays.
func (a *analysis) note(cat, format string, args ...any) {
	a.noteRank(cat, 0, format, args...)
}

// noteRank records a category with a reason of the given rank; a reason of
// a lower rank replaces one of a higher rank, so that the most telling
// example is given (a route before a mere word, an added line before a
// removed one).
func (a *analysis) noteRank(cat string, rank int, format string, args ...any) {
	if a.rank == nil {
		a.rank = make(map[string]int)
	}
	if old, ok := a.rank[cat]; ok && old <= rank {
		return
	}
	a.rank[cat] = rank
	a.s.Reasons[cat] = cat + ": " + fmt.Sprintf(format, args...)
}

// topDir returns the first directory of p, or "." for a file at the root.
func topDir(p string) string {
	if d, _, ok := strings.Cut(p, "/"); ok {
		return d
	}
	return "."
}

// Path rules.
var (
	depManifests = map[string]bool{
		"go.mod": true, "go.work": true, "package.json": true, "pyproject.toml": true, "setup.py": true,
		"setup.cfg": true, "pipfile": true, "cargo.toml": true, "gemfile": true, "pom.xml": true,
		"build.gradle": true, "build.gradle.kts": true, "composer.json": true, "mix.exs": true,
		"pubspec.yaml": true, "vcpkg.json": true, "conanfile.txt": true, "environment.yml": true,
	}
	opsDirs = map[string]bool{
		"deploy": true, "deployment": true, "deployments": true, "k8s": true, "kubernetes": true,
		"helm": true, "charts": true, "terraform": true, "infra": true, "infrastructure": true,
		"ansible": true, "migrations": true, "migration": true, "migrate": true, ".circleci": true,
	}
	dataDirs = map[string]bool{"migrations": true, "migration": true, "migrate": true, "schema": true, "schemas": true, "models": true}
)

// path applies the rules that need only a file's path.
func (a *analysis) path(p string) {
	lp := strings.ToLower(p)
	base := path.Base(lp)
	lang := Language(p)
	dirs := strings.Split(path.Dir(lp), "/")
	test := isTestPath(p)
	if test {
		a.noteFile(CategoryTests, p, strongWeight, 0, "%s changed", p)
	}
	workflow := strings.HasPrefix(lp, ".github/workflows/") || base == ".gitlab-ci.yml" || base == "jenkinsfile" ||
		strings.HasPrefix(lp, ".circleci/") || base == "azure-pipelines.yml" || base == ".travis.yml"
	compose := strings.HasPrefix(base, "docker-compose") || strings.HasPrefix(base, "compose.y")
	if !test && (configLanguages[lang] || workflow) && !isLockFile(p) && !depManifests[base] {
		a.noteFile(CategoryConfig, p, strongWeight, 0, "%s changed", p)
	}
	if depManifests[base] || isRequirementsFile(p) || isLockFile(p) {
		a.noteFile(CategoryDependencies, p, strongWeight, 0, "%s changed", p)
	}
	ops := workflow || compose || lang == "dockerfile" || lang == "terraform" || lang == "sql" || base == "procfile" ||
		strings.HasSuffix(base, ".service")
	for _, d := range dirs {
		ops = ops || opsDirs[d]
	}
	if ops {
		a.noteFile(CategoryOperational, p, strongWeight, 0, "%s changed", p)
	}
	data := lang == "sql" || lang == "protobuf" || strings.HasSuffix(base, ".avsc") || strings.HasPrefix(base, "schema.") ||
		base == "models.py" || base == "schema.prisma"
	for _, d := range dirs {
		data = data || dataDirs[d]
	}
	if data {
		a.noteFile(CategoryDataHandling, p, strongWeight, 0, "%s changed", p)
	}
	if !test && (lang == "protobuf" || lang == "graphql" || strings.HasSuffix(base, ".thrift") || strings.HasSuffix(base, ".d.ts") ||
		strings.HasPrefix(base, "openapi") || strings.HasPrefix(base, "swagger")) {
		a.noteFile(CategoryAPISurface, p, strongWeight, 0, "%s changed", p)
	}
}

// file applies the path and line rules to one file.
func (a *analysis) file(typ string, f File) {
	s := a.s
	s.Files++
	s.Additions += f.Additions
	s.Deletions += f.Deletions
	if f.Language != "" {
		s.Languages[f.Language]++
	}
	a.dirs[topDir(f.Path)] = true
	a.path(f.Path)
	test := isTestPath(f.Path)
	code := isCodePath(f.Path) && !test
	switch {
	case test:
		s.TestFilesChanged++
	case code:
		s.CodeFilesChanged++
	}
	if f.Status == StatusDeleted {
		a.noteFile(CategoryDeletion, f.Path, strongWeight, 0, "%s deleted", f.Path)
	}
	if f.Status == StatusRenamed && code && a.renamedCode == "" {
		a.renamedCode = fmt.Sprintf("%s renamed from %s", f.Path, f.OldPath)
		a.renamedTo = f.Path
	}
	prose := isDocPath(f.Path)
	if code && typ == TypeDiff {
		a.codeAdded += f.Additions
		a.codeRemoved += f.Deletions
	}
	cfAdded := 0
	for l := range strings.Lines(f.Text) {
		mark, num, text := parseLine(strings.TrimSuffix(l, "\n"))
		if mark != markAdded && mark != markRemoved && mark != markPlain {
			continue // context, headers, notes
		}
		hits := keyHits(text)
		// Without keywords, the words are read only for a trust word,
		// which a line without any of their keys cannot hold.
		trustWord := ""
		if a.keywords || hits&trustWordKeys.bit != 0 {
			trustWord = a.addWords(text)
		}
		where := lineRef{f.Path, num}
		removed := 0
		if mark == markRemoved {
			removed = 1
		}
		if what, rank := trustMatch(text, hits, trustWord); what != "" {
			a.lineHit(CategoryTrustBoundary, f.Path, prose, rank > 0, 2*rank+removed, "%s %s", where, what)
		}
		if dataRule.match(text, hits) {
			a.lineHit(CategoryDataHandling, f.Path, prose, false, 2+removed, "%s %s", where, dataRule.what)
		} else if ioRule.match(text, hits) {
			a.lineHit(CategoryDataHandling, f.Path, prose, false, 3+removed, "%s %s", where, ioRule.what)
		}
		if !test && (apiLine(f.Language, text) || routeRule.match(text, hits)) {
			a.lineHit(CategoryAPISurface, f.Path, prose, false, 2+removed, "%s changes an exported declaration or route", where)
		}
		if !code || typ != TypeDiff {
			continue
		}
		t := strings.TrimSpace(text)
		cf := isControlFlow(text)
		switch mark {
		case markAdded:
			if cf {
				a.cfAdded++
				cfAdded++
				if a.cfFiles == nil {
					a.cfFiles = make(map[string]bool)
				}
				a.cfFiles[f.Path] = true
			}
			if t != "" {
				a.addedCode = append(a.addedCode, codeLine{t, f.Path})
			}
			a.codeLine(f.Path, t)
		case markRemoved:
			if cf {
				a.cfRemoved++
			}
			if t != "" {
				a.removedSet[t]++
			}
			a.codeLine(f.Path, t)
		}
	}
	if cfAdded > a.cfExampleCount {
		a.cfExample, a.cfExampleCount = f.Path, cfAdded
	}
}

// codeLine counts a changed line of non-test code toward behaviour-change
// unless it is blank or, by its first characters, a comment.
func (a *analysis) codeLine(p, t string) {
	if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "/*") ||
		strings.HasPrefix(t, "*") || strings.HasPrefix(t, "--") {
		return
	}
	if a.behaviour == nil {
		a.behaviour = make(map[string]int)
	}
	a.behaviour[p]++
}

// lineRef names a line in a reason: "a.go line 12", or "a.go (removed
// line)" for line 0. It is formatted only when a reason is recorded.
type lineRef struct {
	path string
	line int
}

func (r lineRef) String() string {
	if r.line == 0 {
		return r.path + " (removed line)"
	}
	return fmt.Sprintf("%s line %d", r.path, r.line)
}

// finish applies the rules that weigh the whole change.
func (a *analysis) finish() {
	for _, cat := range slices.Sorted(maps.Keys(a.prose)) {
		h := a.prose[cat]
		if h.lines < minProseLines {
			continue
		}
		// A reason from code outranks one from prose.
		a.noteRank(cat, 100+h.rank, "%s (and %d more line(s) of documentation)", h.reason, h.lines-1)
		for p := range h.files {
			a.evidence(cat, p, weakWeight)
		}
	}
	if len(a.behaviour) > 0 {
		n, example := 0, ""
		for _, p := range slices.Sorted(maps.Keys(a.behaviour)) {
			n += a.behaviour[p]
			if example == "" || a.behaviour[p] > a.behaviour[example] {
				example = p
			}
			a.evidence(CategoryBehaviour, p, weakWeight)
		}
		a.note(CategoryBehaviour, "%d changed line(s) of code (most in %s)", n, example)
	}
	if a.cfAdded > a.cfRemoved {
		a.note(CategoryNewLogic, "%d added control-flow lines against %d removed (most in %s)", a.cfAdded, a.cfRemoved, a.cfExample)
		for p := range a.cfFiles {
			a.evidence(CategoryNewLogic, p, strongWeight)
		}
	}
	lo, hi := min(a.codeAdded, a.codeRemoved), max(a.codeAdded, a.codeRemoved)
	balanced := hi == 0 || float64(lo) >= 0.6*float64(hi)
	moved, example := 0, ""
	movedTo := make(map[string]bool)
	for _, l := range a.addedCode {
		if a.removedSet[l.text] > 0 {
			a.removedSet[l.text]--
			moved++
			movedTo[l.path] = true
			if example == "" {
				example = l.path
			}
		}
	}
	switch {
	case a.renamedCode != "" && balanced:
		a.noteFile(CategoryRefactor, a.renamedTo, strongWeight, 0, "%s", a.renamedCode)
	case balanced && len(a.addedCode) > 0 && 2*moved >= len(a.addedCode):
		a.note(CategoryRefactor, "%d of %d added code lines move existing lines (e.g. into %s)", moved, len(a.addedCode), example)
		for p := range movedTo {
			a.evidence(CategoryRefactor, p, strongWeight)
		}
	}
}

// Line rules. Each regular expression comes with lower-case literals of
// which a line must contain one before the expression is tried: most lines
// contain none, which keeps Analyze linear and fast on large diffs.
type lineRule struct {
	bit  uint32 // the rule's bit in keyHits
	keys []string
	re   *lazyre.Regexp
	what string
}

// match reports whether the rule matches text, whose keyHits are hits.
func (r lineRule) match(text string, hits uint32) bool {
	return hits&r.bit != 0 && r.re.Re().MatchString(text)
}

// keyHits returns the bits of the line rules of which text, lower-cased,
// contains a key. An ASCII line is read once, by the keys' automaton
// (lineKeys); another line is lower-cased and searched key by key.
func keyHits(text string) uint32 {
	var hits uint32
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			lower := strings.ToLower(text)
			for _, r := range keyedRules {
				for _, k := range r.keys {
					if strings.Contains(lower, k) {
						hits |= r.bit
						break
					}
				}
			}
			return hits
		}
	}
	keys, bits := lineKeys()
	return keys.Bits(text, bits)
}

// keyedRules are the line rules; lineKeys gives the automaton that finds
// their keys in a line, and each key's rule bit by its id. It is built
// when a line is first read, not as the package starts: a command that
// reads no diff (sot ask, sot debate) started with 150 KB of a table it
// never used.
var (
	keyedRules = append(slices.Clone(trustRules), ioRule, dataRule, trustWordKeys)
	lineKeys   = sync.OnceValues(func() (*keywords.Index, []uint32) {
		var words []string
		var bits []uint32
		for _, r := range keyedRules {
			for _, k := range r.keys {
				if strings.ToLower(k) != k || k == "" || k[0] >= utf8.RuneSelf {
					panic("material: line rule key " + k + " is not lower-case ASCII")
				}
				words, bits = append(words, k), append(bits, r.bit)
			}
		}
		return keywords.New(words), bits
	})
)

var (
	routeRule = lineRule{
		bit:  1 << 0,
		keys: []string{"http.", "handlefunc", "mapping", "@", `("/`, `('/`, "(`/", `( "/`},
		re:   lazyre.New(`http\.(ResponseWriter|Request\b|Handle|HandlerFunc)|\.HandleFunc\(|@(app|router|bp|api)\.(route|get|post|put|delete|patch)\b|@(Get|Post|Put|Delete|Patch|Request)Mapping|\b(app|router|mux|server|api|r|e|g)\.(GET|POST|PUT|DELETE|PATCH|Get|Post|Put|Delete|Patch|get|post|put|delete|patch)\(\s*["'` + "`" + `]/`),
		what: "handles HTTP requests",
	}
	sqlRule = lineRule{
		bit:  1 << 1,
		keys: []string{"select", "insert", "update", "delete", "query", "exec", "raw("},
		re:   lazyre.New(`(?i)\bselect\s+[\w*,. ]{1,200}?\s+from\b|\binsert\s+into\b|\bupdate\s+\w+\s+set\b|\bdelete\s+from\b|\.(Query|QueryRow|QueryContext|QueryRowContext|Exec|ExecContext|Raw)\(|\bcursor\.execute\(`),
		what: "builds or runs SQL",
	}
	trustRules = []lineRule{
		routeRule,
		{
			bit:  1 << 2,
			keys: []string{".url.query", "formvalue", "formfile", "pathvalue", "multipartform", "req.", "request.", "$_"},
			re:   lazyre.New(`\.URL\.Query\(\)|\.(FormValue|PostFormValue|FormFile|PathValue|MultipartForm)\b|\breq(uest)?\.(query|params|body|args|form|files|cookies|headers|GET|POST)\b|\$_(GET|POST|REQUEST|COOKIE|FILES|SERVER)\b`),
			what: "reads request parameters",
		},
		{
			bit:  1 << 3,
			keys: []string{"exec", "subprocess", "child_process", "system(", "popen(", "shell", "processbuilder", "eval(", "spawn("},
			re:   lazyre.New(`\bexec\.Command|"os/exec"|\bsubprocess\.|child_process|\bos\.(system|popen)\(|\bshell\s*=\s*True|Runtime\.getRuntime\(\)\.exec|\bProcessBuilder\(|\b(eval|system|popen|execve?|spawn)\(`),
			what: "runs commands or evaluates code",
		},
		sqlRule,
	}
	ioRule = lineRule{
		bit:  1 << 4,
		keys: []string{"file", "getenv", "environ", "env", "open(", "os.create", "os.remove", "os.rename", "os.mkdir", "fs."},
		re:   lazyre.New(`\bos\.(WriteFile|ReadFile|Create|CreateTemp|OpenFile|Remove|RemoveAll|Rename|Mkdir|MkdirAll|Getenv|LookupEnv|Setenv|Environ)\b|\bioutil\.(WriteFile|ReadFile)\b|\bopen\([^)]*,\s*['"][rwa]b?\+?['"]|\bfs\.(writeFile|readFile|appendFile|unlink|rename|mkdir)(Sync)?\b|\bprocess\.env\b|\bos\.environ\b|\bSystem\.getenv\b|\bFiles\.(write|readAllLines|readString|writeString|delete)\b|\bstd::fs::|\bgetenv\(`),
		what: "reads or writes files or the environment",
	}
	dataRule = lineRule{
		bit: 1 << 5,
		keys: []string{"table", "index", "column", "json", "yaml", "proto.", "pickle", "encoding/", "database/sql",
			"gorm", "sqlx", "sqlalchemy", "prisma", "sequelize", "typeorm", "hibernate", "activerecord", "models.model", "serializ"},
		re:   lazyre.New(`(?i)\b(create|alter|drop)\s+(table|index|column)\b|\bjson\.(Marshal|Unmarshal|NewDecoder|NewEncoder|dumps?|loads?)\b|\bJSON\.(parse|stringify)\b|\byaml\.(Marshal|Unmarshal|safe_load|load|dump)\b|\bproto\.(Marshal|Unmarshal)\b|\bpickle\.|"encoding/(json|xml|gob|csv)"|"database/sql"|\b(gorm|sqlx|sqlalchemy|prisma|sequelize|typeorm|hibernate|ActiveRecord)\b|\bmodels\.Model\b|\b(de)?serializ`),
		what: "handles stored or serialized data",
	}
	tsExported = lazyre.New(`^export\s|^module\.exports\b|^exports\.`)
	publicDecl = lazyre.New(`^\s*public\s`)
	rustPublic = lazyre.New(`^\s*pub\s+(fn|struct|enum|trait|type|const|static|mod|use)\b`)
)

// controlWords start control-flow lines.
var controlWords = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "case": true, "select": true, "match": true,
	"return": true, "else": true, "elif": true, "try": true, "catch": true, "except": true, "finally": true,
	"defer": true, "go": true, "throw": true, "raise": true, "break": true, "continue": true, "goto": true,
	"loop": true, "unless": true, "until": true, "when": true,
}

// isControlFlow reports whether a line starts with a control-flow keyword
// or continues an if with "} else".
func isControlFlow(text string) bool {
	t := strings.TrimLeft(text, " \t")
	n := 0
	for n < len(t) && t[n] >= 'a' && t[n] <= 'z' {
		n++
	}
	if n > 0 && (n == len(t) || !isWordByte(t[n])) && controlWords[t[:n]] {
		return true
	}
	return strings.Contains(t, "} else")
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// trustMatch says what security-relevant thing a line touches, or "",
// with a rank: 0 for code patterns (handlers, request parameters, commands,
// SQL), 1 for a mere word. hits are the line's keyHits, and word its
// first trust word (see addWords) or "".
func trustMatch(text string, hits uint32, word string) (string, int) {
	for _, r := range trustRules {
		if r.match(text, hits) {
			return r.what, 0
		}
	}
	if word != "" {
		return "mentions " + word, 1
	}
	return "", 0
}

// trustWords name security-relevant things (see isTrustWord).
var trustWords = []string{
	"auth", "authn", "authz", "authenticate", "authenticated", "authentication", "authorize", "authorized",
	"authorization", "unauthorized", "token", "tokens", "password", "passwords", "passwd", "secret", "secrets",
	"session", "sessions", "cookie", "cookies", "jwt", "oauth", "oauth2", "oidc", "saml", "permission",
	"permissions", "role", "roles", "rbac", "acl", "privilege", "privileges", "credential", "credentials",
	"login", "logout", "csrf", "xss", "cors", "sanitize", "escape", "crypto", "cipher", "encrypt", "decrypt",
	"encryption", "hmac", "signature", "tls", "certificate", "apikey", "bcrypt", "scrypt", "argon2", "upload",
	"uploads", "multipart", "sudo", "sql",
}

var trustWordSet = func() map[string]bool {
	m := make(map[string]bool, len(trustWords))
	for _, w := range trustWords {
		m[w] = true
	}
	return m
}()

// isTrustWord reports whether w, an identifier part (camelCase and
// snake_case split, lower-cased), names a security-relevant thing. The
// lookup of a byte slice's string converts nothing.
func isTrustWord(w []byte) bool { return trustWordSet[string(w)] }

// trustWordKeys is no rule of its own: its keys are the trust words that
// hold no shorter one, so that keyHits tells whether a line, lower-cased,
// can hold a trust word at all. A trust word found among a line's words
// is part of the line lower-cased, and so holds one of the keys.
var trustWordKeys = lineRule{bit: 1 << 6, keys: func() []string {
	var keys []string
	for _, w := range trustWords {
		if !slices.ContainsFunc(trustWords, func(k string) bool { return len(k) < len(w) && strings.Contains(w, k) }) {
			keys = append(keys, w)
		}
	}
	return keys
}()}

// apiLine reports whether a line declares a public symbol. Each pattern
// starts with a keyword, which is looked for before the pattern is tried.
func apiLine(lang, text string) bool {
	switch lang {
	case "go":
		return goExported(text)
	case "typescript", "javascript":
		return (strings.HasPrefix(text, "export") || strings.HasPrefix(text, "module.exports")) && tsExported.Re().MatchString(text)
	case "java", "kotlin", "csharp", "scala":
		return strings.Contains(text, "public") && publicDecl.Re().MatchString(text)
	case "rust":
		return strings.Contains(text, "pub") && rustPublic.Re().MatchString(text)
	}
	return false
}

// goExported reports whether a line of Go declares an exported name: func
// (with or without a receiver), type, var or const, then white space, then
// an upper-case letter, as the regular expression
// ^(func\s+(\([^)]*\)\s*)?|type\s+|var\s+|const\s+)\p{Lu} matches (a test
// holds the two together). Most lines of a Go diff are tried, so it is
// written out.
func goExported(text string) bool {
	for _, kw := range [...]string{"func", "type", "var", "const"} {
		rest, ok := strings.CutPrefix(text, kw)
		if !ok {
			continue
		}
		name := strings.TrimLeft(rest, reSpace)
		if len(name) == len(rest) {
			return false
		}
		if kw == "func" && strings.HasPrefix(name, "(") {
			i := strings.IndexByte(name, ')')
			if i < 0 {
				return false
			}
			name = strings.TrimLeft(name[i+1:], reSpace)
		}
		r, _ := utf8.DecodeRuneInString(name)
		return unicode.IsUpper(r)
	}
	return false
}

// reSpace is what \s matches in a regular expression.
const reSpace = "\t\n\f\r "

// stopWords are words too common to tell a change apart.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "that": true, "this": true, "from": true, "are": true,
	"not": true, "but": true, "you": true, "all": true, "can": true, "has": true, "have": true, "was": true,
	"will": true, "its": true, "into": true, "then": true, "than": true, "when": true, "which": true,
	"return": true, "func": true, "var": true, "const": true, "nil": true, "null": true, "none": true,
	"true": true, "false": true, "else": true, "let": true, "def": true, "self": true, "new": true,
	"int": true, "string": true, "err": true, "end": true, "type": true, "struct": true, "import": true,
	"package": true, "public": true, "private": true, "static": true, "void": true, "class": true,
}

// addWords counts the words of a line: every identifier lower-cased, and
// the parts of camelCase and snake_case identifiers. It returns the first
// of those words, in that order (an identifier, then its parts), that
// names a security-relevant thing (isTrustWord), or "".
func (a *analysis) addWords(text string) (trust string) {
	if a.wordAt == nil {
		a.wordAt = make(map[string]int)
	}
	var buf [64]byte
	var parts [16][2]int // the parts of an identifier, as offsets
	for start, end := identifierAt(text, 0); start >= 0; start, end = identifierAt(text, end) {
		id := text[start:end]
		n, ok := asciiParts(id, &parts)
		if !ok || len(id) > len(buf) {
			trust = cmp.Or(trust, a.addWordsSlowly(id))
			continue
		}
		lower := lowerASCII(buf[:0], id)
		a.count(lower, id)
		if trust == "" && isTrustWord(lower) {
			trust = string(lower)
		}
		if n < 2 {
			continue
		}
		for _, p := range parts[:n] {
			w := lower[p[0]:p[1]]
			a.count(w, id[p[0]:p[1]])
			if trust == "" && isTrustWord(w) {
				trust = string(w)
			}
		}
	}
	return trust
}

// count counts the lower-cased word lower, spelt orig in the text, unless
// it is shorter than three bytes or a stop word.
func (a *analysis) count(lower []byte, orig string) {
	if !a.keywords || len(lower) < 3 {
		return
	}
	if i, ok := a.wordAt[string(lower)]; ok { // never a stop word
		a.wordCount[i]++
		return
	}
	if stopWords[string(lower)] {
		return
	}
	w := orig
	if string(lower) != orig {
		w = string(lower)
	}
	a.wordAt[w] = len(a.wordCount)
	a.wordCount = append(a.wordCount, 1)
}

// addWordsSlowly is addWords for one identifier that is not ASCII, or has
// many parts.
func (a *analysis) addWordsSlowly(id string) (trust string) {
	words := []string{strings.ToLower(id)}
	if parts := splitIdentifier(id); len(parts) > 1 {
		words = append(words, parts...)
	}
	for _, w := range words {
		a.count([]byte(w), w)
		if trust == "" && isTrustWord([]byte(w)) {
			trust = w
		}
	}
	return trust
}

// asciiParts splits an ASCII identifier as splitIdentifier does, into the
// offsets of its parts, and returns their number; ok is false when id is
// not ASCII or has more parts than fit.
func asciiParts(id string, parts *[16][2]int) (n int, ok bool) {
	start := 0
	flush := func(end int) bool {
		if end > start {
			if n == len(parts) {
				return false
			}
			parts[n] = [2]int{start, end}
			n++
		}
		return true
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= utf8.RuneSelf {
			return 0, false
		}
		if c == '_' {
			if !flush(i) {
				return 0, false
			}
			start = i + 1
			continue
		}
		if i > start && isUpperASCII(c) {
			prev := id[i-1]
			nextLower := i+1 < len(id) && isLowerASCII(id[i+1])
			if isLowerASCII(prev) || isDigitASCII(prev) || (isUpperASCII(prev) && nextLower) {
				if !flush(i) {
					return 0, false
				}
				start = i
			}
		}
	}
	if !flush(len(id)) {
		return 0, false
	}
	return n, true
}

func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLowerASCII(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigitASCII(c byte) bool { return c >= '0' && c <= '9' }

// lowerASCII appends s lower-cased to b; s must be ASCII.
func lowerASCII(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUpperASCII(c) {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// identifiers returns the identifiers in text (letters, digits and '_',
// not starting with a digit).
func identifiers(text string) []string {
	var out []string
	for start, end := identifierAt(text, 0); start >= 0; start, end = identifierAt(text, end) {
		out = append(out, text[start:end])
	}
	return out
}

// identifierAt returns the extent of the first identifier in text from
// byte from on, or -1, -1.
func identifierAt(text string, from int) (start, end int) {
	start = -1
	for i := from; i < len(text); {
		c := text[i]
		size := 1
		letter, digit := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
		if c >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			letter, digit = unicode.IsLetter(r), unicode.IsDigit(r)
		}
		if letter || (start >= 0 && digit) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			return start, i
		}
		i += size
	}
	if start >= 0 {
		return start, len(text)
	}
	return -1, -1
}

// splitIdentifier splits camelCase, PascalCase, snake_case and
// kebab-free identifiers into lower-cased parts: "parseHTTPRequest" ->
// "parse", "http", "request".
func splitIdentifier(id string) []string {
	simple := true
	for i := 0; i < len(id) && simple; i++ {
		c := id[i]
		simple = c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
	}
	if simple {
		return []string{id}
	}
	var parts []string
	rs := []rune(id)
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, strings.ToLower(string(rs[start:end])))
		}
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '_' {
			flush(i)
			start = i + 1
			continue
		}
		if i > start && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush(i)
				start = i
			}
		}
	}
	flush(len(rs))
	return parts
}

// topKeywords keeps the n most frequent words (wordAt indexes their
// counts), ties broken alphabetically. It keeps the n best seen so far in
// a heap whose root is the worst of them, so that most words cost one
// comparison with the root.
func topKeywords(wordAt map[string]int, counts []int, n int) map[string]int {
	if len(wordAt) <= n {
		out := make(map[string]int, len(wordAt))
		for w, i := range wordAt {
			out[w] = counts[i]
		}
		return out
	}
	type entry struct {
		word  string
		count int
	}
	// worse reports whether x ranks below y.
	worse := func(x, y entry) bool {
		if x.count != y.count {
			return x.count < y.count
		}
		return x.word > y.word
	}
	h := make([]entry, 0, n)
	down := func(i int) {
		for {
			l, least := 2*i+1, i
			if l < len(h) && worse(h[l], h[least]) {
				least = l
			}
			if r := l + 1; r < len(h) && worse(h[r], h[least]) {
				least = r
			}
			if least == i {
				return
			}
			h[i], h[least] = h[least], h[i]
			i = least
		}
	}
	for w, i := range wordAt {
		e := entry{w, counts[i]}
		switch {
		case len(h) < n:
			h = append(h, e)
			for k := len(h) - 1; k > 0 && worse(h[k], h[(k-1)/2]); k = (k - 1) / 2 {
				h[k], h[(k-1)/2] = h[(k-1)/2], h[k]
			}
		case worse(h[0], e):
			h[0] = e
			down(0)
		}
	}
	out := make(map[string]int, n)
	for _, e := range h {
		out[e.word] = e.count
	}
	return out
}
