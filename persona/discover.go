package persona

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/project"
)

//go:embed all:builtin
var builtinFS embed.FS

// builtinDirs maps each built-in directory to the kind its files are.
var builtinDirs = []struct {
	dir  string
	kind Kind
}{
	{"specialists", Specialist}, {"lenses", Lens}, {"roles", Role}, {"debaters", Debater}, {"observers", Observer},
}

// Dirs are the places discovery looks, per level.
type Dirs struct {
	// Project is the repository root (.sot/ and .paw/ are read there).
	Project string
	// User is sot's user config directory ($XDG_CONFIG_HOME/sot).
	User string
	// Home is the home directory (~/.paw is read there).
	Home string
}

// DefaultDirs finds the repository root from workDir and the user's directories.
func DefaultDirs(workDir, userConfigDir string) Dirs {
	home, _ := os.UserHomeDir()
	return Dirs{Project: RepoRoot(workDir), User: userConfigDir, Home: home}
}

// RepoRoot is the nearest parent of dir holding .git, .sot or .paw, or dir.
func RepoRoot(dir string) string {
	if top, ok := project.Top(dir); ok {
		return top
	}
	return dir
}

// source is one directory scanned at one level.
type source struct {
	dir   string
	kind  Kind // the kind implied by the directory
	level Level
}

func (d Dirs) sources() []source {
	var s []source
	add := func(base string, level Level, sub string, kind Kind) {
		if base != "" {
			s = append(s, source{filepath.Join(base, sub), kind, level})
		}
	}
	add(d.Project, LevelProject, filepath.Join(".sot", "personas"), "")
	add(d.Project, LevelProject, filepath.Join(".sot", "lenses"), Lens)
	add(d.Project, LevelProject, filepath.Join(".paw", "personas"), Specialist)
	add(d.Project, LevelProject, filepath.Join(".paw", "perspectives"), Lens)
	add(d.User, LevelUser, "personas", "")
	add(d.User, LevelUser, "lenses", Lens)
	add(d.Home, LevelUser, filepath.Join(".paw", "personas"), Specialist)
	add(d.Home, LevelUser, filepath.Join(".paw", "perspectives"), Lens)
	return s
}

// Library is every persona discovered, with the most specific file of each
// name and kind winning.
type Library struct {
	winners map[Kind]map[string]*Persona
	// Shadowed are files that lost to a more specific one of the same name.
	Shadowed []*Persona
	// Problems are the warnings of discovery: skipped files and why.
	Problems []Problem
	// Rejected are the files skipped because of errors (see RejectedFor).
	Rejected []Rejection

	vet func(*Persona) []Problem
}

// Discover scans every level. Malformed or empty files are skipped with a
// problem that names the file; only an unreadable directory is an error.
func Discover(d Dirs) (*Library, error) {
	lib := &Library{winners: map[Kind]map[string]*Persona{}}
	for _, src := range d.sources() {
		entries, err := os.ReadDir(src.dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read persona directory %s: %w", src.dir, err)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(strings.ToLower(e.Name()), ".md") {
				continue
			}
			path := filepath.Join(src.dir, e.Name())
			if src.level == LevelProject {
				if target, outside := leavesProject(d.Project, path); outside {
					lib.Problems = append(lib.Problems, Problem{File: path, Warning: true,
						Message: fmt.Sprintf("skipped: a link to %s, outside the project; a reviewed repository's persona may not bring in files from elsewhere on this machine", target)})
					continue
				}
			}
			data, err := readLimited(path)
			if err != nil {
				if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Path == path {
					err = fmt.Errorf("skipped: %w", pe.Err) // the problem names the file
				}
				lib.Problems = append(lib.Problems, Problem{File: path, Message: err.Error(), Warning: true})
				continue
			}
			lib.add(path, data, src.kind, src.level)
		}
	}
	for _, bd := range builtinDirs {
		entries, err := builtinFS.ReadDir("builtin/" + bd.dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			data, err := builtinFS.ReadFile("builtin/" + bd.dir + "/" + e.Name())
			if err != nil {
				return nil, err
			}
			lib.add("builtin:"+bd.dir+"/"+e.Name(), data, bd.kind, LevelBuiltin)
		}
	}
	return lib, nil
}

// leavesProject reports whether path, in a project's persona directory,
// resolves (through symbolic links) to a file outside the project top.
func leavesProject(top, path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return "", false
	}
	if _, err := filepath.EvalSymlinks(path); err != nil {
		return "", false // a dangling link fails to read, with its own message
	}
	if target, inside := project.ResolvedWithin(top, path); !inside {
		return target, true
	}
	return "", false
}

// maxPersonaBytes bounds a persona file; anything larger is not a persona.
const maxPersonaBytes = 256 << 10

func readLimited(path string) ([]byte, error) {
	// A persona's text is instructions: a link out of the project it lies
	// in could make a file of the user's into one.
	if err := project.CheckLinks(path); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxPersonaBytes {
		return nil, fmt.Errorf("skipped: %d bytes is too large for a persona file (limit %d)", fi.Size(), maxPersonaBytes)
	}
	return plainfile.Read(path)
}

// Vet sets a check for every persona from the project or named by the
// caller (the levels a reviewed repository can write): it applies to those
// already discovered and to every file added later with AddFile. The check
// may clear settings the file is not trusted to make; the problems it
// returns are kept as warnings in Problems.
func (l *Library) Vet(check func(*Persona) []Problem) {
	l.vet = check
	for _, m := range l.winners {
		for _, p := range m {
			l.vetOne(p)
		}
	}
	for _, p := range l.Shadowed {
		l.vetOne(p)
	}
}

func (l *Library) vetOne(p *Persona) []Problem {
	if l.vet == nil || (p.Level != LevelProject && p.Level != LevelExplicit) {
		return nil
	}
	probs := l.vet(p)
	for i := range probs {
		probs[i].Warning = true
	}
	l.Problems = append(l.Problems, probs...)
	return probs
}

// add parses a file and keeps it unless a more specific one already won;
// it returns the persona, or nil when the file is rejected.
func (l *Library) add(path string, data []byte, kind Kind, level Level) *Persona {
	p, probs := Parse(path, data, kind, level)
	if HasErrors(probs) {
		var errs []Problem
		var holders []Problem
		for _, pr := range probs {
			switch {
			case pr.Warning:
			case pr.placeholder:
				holders = append(holders, pr)
			default:
				errs = append(errs, pr)
			}
		}
		if len(holders) > 0 {
			// One warning for a template nobody has filled in yet, not
			// one per placeholder on every run.
			errs = append(errs, Problem{File: path, Line: holders[0].Line,
				Message: fmt.Sprintf("%d template placeholder(s) <<TODO: ...>> left, the first on this line; replace them, then check the file with: sot personas validate %s", len(holders), path)})
		}
		for i := range errs {
			errs[i].Message = "skipped: " + errs[i].Message
			errs[i].Warning = true
		}
		l.Problems = append(l.Problems, errs...)
		if p.Kind == "" {
			p.Kind = Specialist
		}
		l.Rejected = append(l.Rejected, Rejection{Persona: p, Problems: errs})
		return nil
	}
	l.put(p)
	return p
}

// Rejection is a persona file that discovery skipped because of an error.
type Rejection struct {
	// Persona is what could be read of the file: its ID, kind, level and
	// path at least.
	Persona *Persona
	// Problems are the errors that made it unusable, as reported.
	Problems []Problem
}

// RejectedFor returns the files of a kind and name that were skipped
// because of errors and would otherwise have won over the persona now used
// (a more specific level, or any level when no persona of that name is
// left), most specific first. It is how a caller says that a project file
// was rejected and, say, a built-in took its place.
func (l *Library) RejectedFor(kind Kind, id string) []Rejection {
	id = strings.ToLower(id)
	winner, ok := l.Get(kind, id)
	var out []Rejection
	for _, r := range l.Rejected {
		if r.Persona.Kind == kind && r.Persona.ID == id && (!ok || r.Persona.Level < winner.Level) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Persona.Level < out[j].Persona.Level })
	return out
}

func (l *Library) put(p *Persona) {
	m := l.winners[p.Kind]
	if m == nil {
		m = map[string]*Persona{}
		l.winners[p.Kind] = m
	}
	if cur, ok := m[p.ID]; ok && cur.Level <= p.Level {
		l.Shadowed = append(l.Shadowed, p)
		return
	} else if ok {
		l.Shadowed = append(l.Shadowed, cur)
	}
	m[p.ID] = p
}

// AddFile loads a file named by the caller at the explicit level, so that it
// wins over every discovered persona of the same name.
func (l *Library) AddFile(path string) (*Persona, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("persona file %s: %w", path, err)
	}
	p, probs := Parse(path, data, "", LevelExplicit)
	if HasErrors(probs) {
		return nil, fmt.Errorf("persona file %w", firstError(probs))
	}
	l.vetOne(p)
	l.put(p)
	return p, nil
}

func firstError(probs []Problem) error {
	for _, p := range probs {
		if !p.Warning {
			return p
		}
	}
	return nil
}

// Get returns the winning persona of a kind and name.
func (l *Library) Get(kind Kind, id string) (*Persona, bool) {
	p, ok := l.winners[kind][strings.ToLower(id)]
	return p, ok
}

// Find returns the winning persona of any kind with that name, preferring
// specialists, then lenses, then the other kinds.
func (l *Library) Find(id string) (*Persona, bool) {
	for _, k := range Kinds {
		if p, ok := l.Get(k, id); ok {
			return p, true
		}
	}
	return nil, false
}

// List returns the winners of one kind, sorted by name.
func (l *Library) List(kind Kind) []*Persona {
	var out []*Persona
	for _, p := range l.winners[kind] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// All returns every winner, by kind then name.
func (l *Library) All() []*Persona {
	var out []*Persona
	for _, k := range Kinds {
		out = append(out, l.List(k)...)
	}
	return out
}

// Chain returns every file of that name and kind, the winner first.
func (l *Library) Chain(kind Kind, id string) []*Persona {
	var out []*Persona
	if p, ok := l.Get(kind, id); ok {
		out = append(out, p)
	}
	var rest []*Persona
	for _, p := range l.Shadowed {
		if p.Kind == kind && p.ID == strings.ToLower(id) {
			rest = append(rest, p)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].Level < rest[j].Level })
	return append(out, rest...)
}

// SharedRules returns the shared rules that win (a project or user
// _shared-rules.md overrides the built-in one).
func (l *Library) SharedRules() *Persona {
	p, _ := l.Get(SharedRules, "_shared-rules")
	return p
}

// Builtins lists the built-in persona files of a kind, for tests and
// fallbacks.
func (l *Library) Builtins(kind Kind) []*Persona {
	var out []*Persona
	for _, p := range l.List(kind) {
		if p.Level == LevelBuiltin {
			out = append(out, p)
		}
	}
	for _, p := range l.Shadowed {
		if p.Kind == kind && p.Level == LevelBuiltin {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// File is a persona file with the kind its directory implies.
type File struct {
	Path string
	Kind Kind
}

// Files lists the persona files at the project and user levels.
func Files(d Dirs) []File {
	var out []File
	for _, src := range d.sources() {
		entries, err := os.ReadDir(src.dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(strings.ToLower(e.Name()), ".md") {
				out = append(out, File{filepath.Join(src.dir, e.Name()), src.kind})
			}
		}
	}
	return out
}

// KindForDir is the kind implied by a directory's name: lenses and
// perspectives hold lenses; the built-in directory names hold their kinds;
// anything else is read from the frontmatter (specialist by default).
func KindForDir(dir string) Kind {
	switch strings.ToLower(filepath.Base(dir)) {
	case "lenses", "perspectives":
		return Lens
	case "roles":
		return Role
	case "debaters":
		return Debater
	case "observers":
		return Observer
	}
	return ""
}

// ValidateFile parses one file and returns every problem, warnings included.
func ValidateFile(path string, kind Kind) []Problem {
	data, err := readLimited(path)
	if err != nil {
		return []Problem{{File: path, Message: err.Error()}}
	}
	_, probs := Parse(path, data, kind, LevelExplicit)
	return probs
}

// ReadSource returns the text of a persona's source file, built-in or not.
func ReadSource(path string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(path, "builtin:"); ok {
		return builtinFS.ReadFile("builtin/" + rest)
	}
	return plainfile.Read(path)
}
