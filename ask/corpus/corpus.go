// Package corpus reads knowledge sources for sot ask: northstar agent
// exports, Markdown, text and export payloads.
//
// Load reads files and directories into Sources, one per file, and lists
// every file it leaves out, with the reason, as Skipped. A file's format is
// told by its content first and its name second:
//
//   - a northstar agent export is Markdown whose YAML frontmatter has
//     agent_type: northstar-meeting-agent (northstar.LM's exporter) or
//     agent_name (hand-written agents such as the one the Societies of
//     Thought seed is), or that ends in an "## Export Payload (JSON)"
//     block. Its sections (Summary or Executive Summary, Key Points,
//     Action Items, Sentiment or Sentiment Analysis, Transcript or Full
//     Transcript) become the Source's fields, and the fields of its export
//     payload win over them. The transcript runs to the JSON blocks at the
//     end of the file, so "##" headings inside it never cut it;
//   - an export payload on its own is a JSON object with an "analysis" or
//     "sotMetadata" member, or "schema": "northstar-agent-md";
//   - Markdown (.md, .markdown, .mdx, .mkd, or any file that opens with YAML
//     frontmatter) and text (any other UTF-8 file) are one Source each, the
//     whole file as its text, titled by the first heading or else the file
//     name.
//
// Binary, non-UTF-8 and empty files are skipped, and so are hidden files,
// links that lead out of the directory given, and a second file with the
// same bytes as one already read. Every secret in a Source's text is masked
// (package internal/secrets) before Load returns it, and a source whose text
// is over Options.PartTokens is split into Parts that together hold all of
// it (Split).
//
// Export writes a Source back as a northstar agent file that northstar.LM
// imports, with the export payload that Load reads back field for field.
package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/internal/project"
)

// Format is how a file was read.
type Format string

// The formats Load reads.
const (
	// FormatNorthstar is a northstar agent export: Markdown with
	// frontmatter, analysis sections and usually an export payload.
	FormatNorthstar Format = "northstar"
	// FormatPayload is a northstar export payload, the JSON alone.
	FormatPayload Format = "payload"
	// FormatMarkdown is a Markdown file.
	FormatMarkdown Format = "markdown"
	// FormatText is any other UTF-8 text file.
	FormatText Format = "text"
)

// Source is one knowledge source: a file, with the analysis northstar
// keeps for it when the file is a northstar export or payload.
//
// Every string a Source holds has its secrets masked, line breaks as "\n",
// and neither leading blank lines nor trailing white space.
type Source struct {
	// ID names the source by its content: the first 16 hex digits of Hash.
	ID string `json:"id"`
	// Path is the file, as reached from a path given to Load.
	Path string `json:"path"`
	// Format is how the file was read.
	Format Format `json:"format"`
	// Title is the export's agent name, or the file's first heading, or
	// its name without the extension.
	Title string `json:"title"`
	// Type is the kind of source: northstar's source type (audio, pdf,
	// text, documentation, ...) for an export, a Markdown file's
	// source_type frontmatter, or else "markdown" or "text".
	Type string `json:"type,omitempty"`
	// Date is when the source was made, when the file says: an export's
	// creation time, a Markdown file's date or created frontmatter, or a
	// YYYY-MM-DD date in the file's name. Zero when unknown.
	Date time.Time `json:"date,omitzero"`
	// AgentID is the northstar agent's id, for an export that has one.
	AgentID string `json:"agentId,omitempty"`

	// Summary, KeyPoints, ActionItems, Sentiment and Transcript are a
	// northstar export's analysis. A list's items have their bullets
	// removed; an item of several lines keeps its line breaks.
	Summary     string   `json:"summary,omitempty"`
	KeyPoints   []string `json:"keyPoints,omitempty"`
	ActionItems []string `json:"actionItems,omitempty"`
	Sentiment   string   `json:"sentiment,omitempty"`
	Transcript  string   `json:"transcript,omitempty"`
	// Extra is the Markdown of an export's other sections: text before
	// its first section, and sections northstar has no field for, with
	// their headings.
	Extra string `json:"extra,omitempty"`

	// Text is what there is to analyse. For Markdown and text it is the
	// file, frontmatter and all. For an export it is
	// the transcript alone when that is all the export has, and otherwise
	// Markdown with a "##" section for each analysis field that is set
	// (Summary, Key Points, Action Items, Sentiment), then Extra, then the
	// transcript under "## Transcript".
	Text string `json:"text"`
	// Metadata is the SoT metadata from the export payload; nil when the
	// source has none (or only northstar's defaults, which say nothing).
	Metadata *Metadata `json:"sotMetadata,omitempty"`
	// Hash is the hex SHA-256 of the file's bytes.
	Hash string `json:"hash"`
	// Parts is Text split to fit Options.PartTokens, in order; nil when
	// Text fits (or no budget was given).
	Parts []Part `json:"parts,omitempty"`
}

// Metadata is the Societies of Thought metadata northstar's Agent Builder
// extracts for a source, with northstar's JSON names.
type Metadata struct {
	// MeetingType is one of MeetingTypes.
	MeetingType     string           `json:"meetingType,omitempty"`
	KeyEntities     KeyEntities      `json:"keyEntities,omitzero"`
	TemporalContext *TemporalContext `json:"temporalContext,omitempty"`
	// TopicTags are 3 to 7 lowercase topic tags.
	TopicTags      []string        `json:"topicTags,omitempty"`
	ContentSignals *ContentSignals `json:"contentSignals,omitempty"`
	// SuggestedPerspective is one of Perspectives.
	SuggestedPerspective string `json:"suggestedPerspective,omitempty"`
}

// KeyEntities are the names a source mentions.
type KeyEntities struct {
	People        []string `json:"people,omitempty"`
	Projects      []string `json:"projects,omitempty"`
	Organizations []string `json:"organizations,omitempty"`
	Products      []string `json:"products,omitempty"`
}

// TemporalContext is when a source is about.
type TemporalContext struct {
	// Quarter is as the source names it, e.g. "Q4 2025".
	Quarter string `json:"quarter,omitempty"`
	// ExplicitDates are dates the source mentions, YYYY-MM-DD.
	ExplicitDates []string `json:"explicitDates,omitempty"`
	Deadlines     []string `json:"deadlines,omitempty"`
	// Timeframe is "past", "present" or "future".
	Timeframe string `json:"timeframe,omitempty"`
}

// ContentSignals count what a source holds.
type ContentSignals struct {
	RiskMentions       int `json:"riskMentions"`
	DecisionsMade      int `json:"decisionsMade"`
	ActionsAssigned    int `json:"actionsAssigned"`
	QuestionsRaised    int `json:"questionsRaised"`
	ConflictIndicators int `json:"conflictIndicators"`
}

// MeetingTypes are the values of Metadata.MeetingType northstar's Agent
// Builder chooses from.
var MeetingTypes = []string{"planning", "review", "standup", "brainstorm", "decision", "retrospective", "report", "general"}

// Perspectives are the values of Metadata.SuggestedPerspective: the seven
// perspective roles.
var Perspectives = []string{"analyst", "advocate", "critic", "synthesizer", "historian", "pragmatist", "stakeholder"}

// Part is a piece of a source's text that fits a token budget.
type Part struct {
	// Index is the part's place, from 0; Count is how many parts the
	// text has.
	Index int `json:"index"`
	Count int `json:"count"`
	// Offset is where Text starts in the whole text, in bytes.
	Offset int    `json:"offset"`
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
}

// Skipped is a file Load did not read as a source, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Options tune Load.
type Options struct {
	// PartTokens splits a source whose Text has more tokens than this
	// into Parts (see Split). Zero or less: never.
	PartTokens int
	// MaxFileBytes skips larger files. Zero: DefaultMaxFileBytes; less
	// than zero: no limit.
	MaxFileBytes int64
	// FollowSymlinks reads what symbolic links out of the project point
	// to (--follow-symlinks). Without it a path given that leads through
	// such a link is a *PathError wrapping a *project.LinkError, and such a
	// link found in a directory is skipped.
	FollowSymlinks bool
	// Known gives what files gave when they were read before (see
	// Scan). Scan calls it once its walk is over, so that the caller can
	// load it meanwhile; nil, or a nil Remembered, knows nothing. Load
	// ignores it.
	Known func() Remembered
	// ReadFile reads a file's bytes; nil: os.ReadFile. A caller can wrap
	// it to count or limit what is read.
	ReadFile func(name string) ([]byte, error)
	// Now is the caller's clock (engine.Hooks.Time), read once when Scan
	// begins: Result.Checked. Nil: Checked is 0, and a later scan trusts
	// no stat the result records, reading every file again. Load ignores
	// it.
	Now func() time.Time
}

// DefaultMaxFileBytes is the largest file Load reads unless told
// otherwise.
const DefaultMaxFileBytes = 32 << 20

// PathError is a path given to Load that cannot be read. A path that does
// not exist gives one that wraps os.ErrNotExist.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string {
	msg := e.Err.Error()
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		msg = pe.Err.Error()
	}
	return e.Path + ": " + msg
}

func (e *PathError) Unwrap() error { return e.Err }

// PayloadError is an export payload that cannot be read: a "## Export
// Payload (JSON)" block that is not a JSON object or whose members have the
// wrong types, or a payload file whose members do. Line is the line of the
// file where the problem is (1-based).
type PayloadError struct {
	Path string
	Line int
	Msg  string
	Err  error // the JSON error, when there is one
}

func (e *PayloadError) Error() string {
	return fmt.Sprintf("%s:%d: malformed export payload: %s", e.Path, e.Line, e.Msg)
}

func (e *PayloadError) Unwrap() error { return e.Err }

// Load reads the files at paths, and every file in the directories among
// them recursively, in order: paths as given, a directory's entries by
// name. It returns a Source for each file it can read as one, and a
// Skipped for each file it leaves out.
//
// A symbolic link is read as what it points to when that stays inside the
// project the link lies in (the nearest directory with .git, .sot or
// .paw; for a path in no project, the directory given). A path given that
// leads out of its project is refused, and such a link found in a
// directory is skipped, unless Options.FollowSymlinks is set. Entries
// whose names start with "." are skipped. A file with the same bytes as
// one read before it is skipped, naming that one; a file reached twice is
// read once. A file whose export payload is malformed is skipped with the
// reason (where in the file, and what is wrong), like a binary file.
//
// err joins a *PathError for each path given that cannot be read; such
// paths are in neither list. Everything else is read all the same, so
// sources and skipped are complete even when err is not nil.
func Load(paths []string, opts Options) (sources []Source, skipped []Skipped, err error) {
	opts.Known = nil
	res, err := Scan(paths, opts)
	sources = make([]Source, len(res.Sources))
	for i, s := range res.Sources {
		sources[i] = *s
	}
	return sources, res.Skipped, err
}

// file is a regular file found by the walk.
type file struct {
	path  string // as shown: under the path given
	real  string // resolved
	size  int64
	stamp Stamp
}

// walkSkip is a Skipped found while walking, placed before the file with
// index before.
type walkSkip struct {
	Skipped
	before int
}

type walker struct {
	files    []file
	skips    []walkSkip
	errs     []error
	seenDirs map[string]bool // real paths of the directories walked
	// seenFiles holds the real paths of the files walked, once a file
	// could be reached twice: after a link, or from a second path given.
	// Until then it is nil, and a walk of 10,000 plain files keeps no set
	// of their names.
	seenFiles map[string]bool
	dirs      []string // real paths of the directories walked
	follow    bool     // read what links out of the project point to
}

// mayRevisit says that a file walked from now on may be one walked
// before: a link was met, or another path given is walked.
func (w *walker) mayRevisit() {
	if w.seenFiles != nil {
		return
	}
	w.seenFiles = make(map[string]bool, len(w.files))
	for _, f := range w.files {
		w.seenFiles[f.real] = true
	}
}

func (w *walker) skip(path, reason string) {
	w.skips = append(w.skips, walkSkip{Skipped{Path: path, Reason: reason}, len(w.files)})
}

// walkRoot walks a path given to Load.
func (w *walker) walkRoot(p string) {
	if !w.follow {
		if err := project.CheckLinks(p); err != nil {
			w.errs = append(w.errs, &PathError{Path: p, Err: err})
			return
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if _, lerr := os.Lstat(p); lerr == nil {
			// The path is there, its target is not.
			err = &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		w.errs = append(w.errs, &PathError{Path: p, Err: err})
		return
	}
	if abs, err := filepath.Abs(real); err == nil {
		real = abs
	}
	info, err := os.Stat(real)
	if err != nil {
		w.errs = append(w.errs, &PathError{Path: p, Err: err})
		return
	}
	switch {
	case info.IsDir():
		// Links are judged against the project the directory lies in.
		root := real
		if abs, err := filepath.Abs(p); err == nil {
			if top, ok := project.Top(abs); ok {
				if t, err := filepath.EvalSymlinks(top); err == nil {
					top = t
				}
				if _, inside := within(top, real); inside {
					root = top
				}
			}
		}
		w.walkDir(p, real, root)
	case info.Mode().IsRegular():
		w.addFile(p, real, statOf(info))
	default:
		w.errs = append(w.errs, &PathError{Path: p, Err: errors.New("not a regular file or directory")})
	}
}

func (w *walker) addFile(path, real string, st entryStat) {
	if w.seenFiles != nil {
		if w.seenFiles[real] {
			return
		}
		w.seenFiles[real] = true
	}
	w.files = append(w.files, file{path: path, real: real, size: st.size, stamp: st.stamp(path)})
}

// walkDir walks the directory shown as dir, whose resolved path is real,
// inside the given directory root (resolved).
func (w *walker) walkDir(dir, real, root string) {
	if w.seenDirs[real] {
		return
	}
	w.seenDirs[real] = true
	// The directory is held open while its entries are looked at, so that
	// the stat of an entry resolves one name, not the whole path again:
	// at 10,000 files that was most of the walk's time. Its names are
	// all it is asked for: the stat says the rest.
	d, err := openDir(real)
	var names []string
	if err == nil {
		names, err = d.names()
		if err != nil {
			d.close()
		}
	}
	if err != nil {
		w.skip(dir, "unreadable directory: "+errText(err))
		return
	}
	w.dirs = append(w.dirs, real)
	// The entries are looked at (links resolved, stat read) in parallel,
	// and taken in order. Where the stat goes through an os.Root, which
	// takes a lock for every call, each goroutine in a large directory
	// stats through a handle of its own: two goroutines stat'ing 2,000
	// names fought over the lock.
	shown, resolved := joiner(dir), joiner(real)
	// An entry that is not a link is shown as the end of its resolved
	// path when the directory's shown path ends its resolved one (no link
	// on the way there, the usual case): a part of that string rather
	// than a second one for each of 10,000 files.
	cut := -1
	if rp, sp := joinPrefix(real), joinPrefix(dir); strings.HasSuffix(rp, sp) {
		cut = len(rp) - len(sp)
	}
	looks := make([]entryLook, len(names))
	if len(names) < ownHandleEntries || !ownStatHandles {
		parallel.For(len(names), func(i int) { looks[i] = w.look(resolved(names[i]), root, d, names[i]) })
	} else {
		parallel.ForWith(len(names), func() dirHandle {
			if own, err := d.root.OpenRoot("."); err == nil {
				return dirHandle{root: own}
			}
			return d
		}, func(own dirHandle, i int) {
			looks[i] = w.look(resolved(names[i]), root, own, names[i])
		}, func(own dirHandle) {
			if own.root != d.root {
				own.root.Close()
			}
		})
	}
	d.close() // before the walk goes down: one directory open at a time
	w.files = slices.Grow(w.files, len(names))
	for i, name := range names {
		l := looks[i]
		var path string
		if cut >= 0 && !l.link && l.target != "" {
			path = l.target[cut:]
		} else {
			path = shown(name)
		}
		if l.link {
			w.mayRevisit()
		}
		switch {
		case l.skip != "":
			w.skip(path, l.skip)
		case l.st.kind == kindDir:
			w.walkDir(path, l.target, root)
		case l.st.kind == kindRegular:
			w.addFile(path, l.target, l.st)
		default:
			w.skip(path, "not a regular file")
		}
	}
}

// ownHandleEntries is the size of a directory from which each goroutine
// that stats its entries opens a handle of its own: below it, two more
// opens cost more than the lock they would spare.
const ownHandleEntries = 64

// dirHandle is a directory open for the walk: as an os.Root, and, for
// the listing of its names and (where the system allows) the stats of its
// entries, as the directory itself.
type dirHandle struct {
	root *os.Root
	f    *os.File // nil in a handle a goroutine opened for its stats
}

// openDir opens the directory at path.
func openDir(path string) (dirHandle, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return dirHandle{}, err
	}
	f, err := root.Open(".")
	if err != nil {
		root.Close()
		return dirHandle{}, err
	}
	return dirHandle{root: root, f: f}, nil
}

// names lists the entries of the directory, sorted, without "." and "..".
func (d dirHandle) names() ([]string, error) {
	names, err := d.f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

func (d dirHandle) close() {
	d.f.Close()
	d.root.Close()
}

// entryKind is what kind of file an entry is, as far as the walk cares.
type entryKind uint8

const (
	kindOther entryKind = iota // a device, a pipe, a socket: skipped
	kindRegular
	kindDir
	kindLink
)

// entryStat is what the walk keeps of an entry's stat: a value, so that
// 10,000 of them are not 10,000 allocations.
type entryStat struct {
	kind         entryKind
	size         int64
	mtime, ctime int64 // nanoseconds since the epoch; ctime 0 where unknown
	ino          uint64
}

// statOf is what fi says, as the walk keeps it.
func statOf(fi fs.FileInfo) entryStat {
	st := entryStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	switch m := fi.Mode(); {
	case m.IsRegular():
		st.kind = kindRegular
	case m.IsDir():
		st.kind = kindDir
	case m&fs.ModeSymlink != 0:
		st.kind = kindLink
	}
	if _, ino, ctime, ok := identity(fi); ok {
		st.ino, st.ctime = ino, ctime
	}
	return st
}

// stamp is the stamp of the file shown as path, with this stat.
func (st entryStat) stamp(path string) Stamp {
	return Stamp{Path: path, Size: st.size, ModTime: st.mtime, Change: st.ctime, Inode: st.ino}
}

// joiner returns filepath.Join(dir, name) as a function of name, for the
// names of dir's entries (one element each, never "." or ".."): dir is
// joined and cleaned once, not for each of its entries.
func joiner(dir string) func(name string) string {
	prefix := joinPrefix(dir)
	return func(name string) string { return prefix + name }
}

// joinPrefix is what filepath.Join(dir, name) puts before name.
func joinPrefix(dir string) string {
	prefix := filepath.Join(dir, "x")
	return prefix[:len(prefix)-1]
}

// entryLook is what an entry of a directory is: the file it resolves to
// and its stat, or why it is skipped; link says it was a link.
type entryLook struct {
	target string
	st     entryStat
	skip   string
	link   bool
}

// look resolves the entry name of the directory d, whose resolved path
// joined with name is target (inside root), and reads its stat without
// following a link; a link is resolved, and followed when it stays inside
// root. It changes nothing in w, so entries can be looked at in parallel.
func (w *walker) look(target, root string, d dirHandle, name string) entryLook {
	st, err := d.lstat(name)
	if strings.HasPrefix(name, ".") {
		if err == nil && st.kind == kindDir {
			return entryLook{skip: "hidden directory"}
		}
		return entryLook{skip: "hidden file"}
	}
	if err == nil && st.kind != kindLink {
		return entryLook{target: target, st: st}
	}
	link := err == nil
	if link {
		resolved, err := filepath.EvalSymlinks(target)
		if err != nil {
			return entryLook{skip: "broken link", link: true}
		}
		if _, ok := within(root, resolved); !ok && !w.follow {
			return entryLook{skip: "a symbolic link to " + resolved + ", outside the project " + root + "; never read (--follow-symlinks reads it)", link: true}
		}
		target = resolved
	}
	info, err := os.Stat(target)
	if err != nil {
		return entryLook{skip: "unreadable: " + errText(err), link: link}
	}
	return entryLook{target: target, st: statOf(info), link: link}
}

// within reports whether path lies inside dir (or is dir), both absolute
// and clean.
func within(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// errText is err's message without the operation and path os puts in
// front of it.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// fileResult is what reading one file gave: a source, a reason to skip
// it, or an error; the hash of its bytes when they were read.
type fileResult struct {
	src  Source
	skip string
	err  error
	hash string
}

// readSource reads and parses one file found by the walk.
func readSource(f file, opts Options) fileResult {
	limit := opts.MaxFileBytes
	if limit == 0 {
		limit = DefaultMaxFileBytes
	}
	if limit > 0 && f.size > limit {
		return fileResult{skip: fmt.Sprintf("larger than %d bytes (%d)", limit, f.size)}
	}
	data, err := opts.readFile(f.real)
	if err != nil {
		return fileResult{skip: "unreadable: " + errText(err)}
	}
	if limit > 0 && int64(len(data)) > limit {
		return fileResult{skip: fmt.Sprintf("larger than %d bytes (%d)", limit, len(data))}
	}
	hash := hashOf(data)
	src, skip, err := parseFile(f.path, data)
	var pe *PayloadError
	if errors.As(err, &pe) {
		skip, err = fmt.Sprintf("malformed export payload at line %d: %s", pe.Line, pe.Msg), nil
	}
	if err != nil || skip != "" {
		return fileResult{skip: skip, err: err, hash: hash}
	}
	// No text has more tokens than bytes, so one that fits the budget in
	// bytes is one part and is not counted: the tokenizer's vocabulary,
	// whose loading costs more than reading a few small notes, is loaded
	// only for a text that could be over the budget.
	if opts.PartTokens > 0 && len(src.Text) > opts.PartTokens {
		if parts := Split(src.Text, opts.PartTokens); len(parts) > 1 {
			src.Parts = parts
		}
	}
	return fileResult{src: src, hash: hash}
}

// statOfRoot reads the stat of the entry name of root without following a
// link.
func statOfRoot(root *os.Root, name string) (entryStat, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return entryStat{}, err
	}
	return statOf(fi), nil
}
