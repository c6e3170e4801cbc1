package ask

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/internal/parallel"
	"github.com/sotlabs/sot/internal/project"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/prompt"
)

// Options configure one question. The options every scenario shares are
// scenario.Options': for a question, OutputDir defaults to
// .sot/answers/<run-id> at the project's top, FollowSymlinks reads named
// corpus paths that lead through a symbolic link out of their project,
// and such links found in directories (a corpus the user did not name,
// ask.corpus or .sot/corpus, is always read from inside the project),
// Model is the model every step calls, and Formats are the machine
// outputs written besides ANSWER.md and answer.json ("json" is
// answer.json itself).
type Options struct {
	scenario.Options

	Question string
	// Paths are the corpus: files and directories, read recursively. None
	// means the config's ask.corpus, else the project's .sot/corpus.
	Paths []string
	// Intent overrides the classification (--intent).
	Intent string
	// Debate runs the debate step whatever the intent (--debate).
	Debate bool
	// Groups asks for group decomposition, grouping the chosen sources by
	// "temporal" (quarter), "source" (source type), "thematic" (theme), or
	// by the custom groups a comma-separated list names; "" reads them one
	// by one (default: the config's ask.groups). Groups are used when the
	// seed's conditions hold (at least two groups, min_agents_for_group_
	// decomposition sources, a question that is not simple).
	Groups string
	// CustomGroups are groups defined for this run (--group); they come
	// before the config's ask.custom_groups of the same name.
	CustomGroups []config.CustomGroup

	// Library holds the personas the roles are read with. When it is nil,
	// Prepare calls LoadLibrary for it, beside the walk of the corpus.
	Library *persona.Library
	// LoadLibrary loads the personas for a caller that has not: loading
	// them (parsing every built-in and project persona) then costs the
	// question no time of its own.
	LoadLibrary func() (*persona.Library, error)
}

// Plan is everything decided before the first model call.
type Plan struct {
	RunID     string
	OutputDir string
	Question  string
	Model     string

	Classification route.Classification
	Roles          []string // the intent's roles
	Strategy       route.Strategy
	// SoT is false in the control run or below min_agents_for_sot.
	SoT     bool
	SoTNote string
	// Debate says whether the debate step will run, and why.
	Debate    bool
	DebateWhy string

	// Chosen are the sources picked, with the numbers that picked them;
	// Assignments their roles, in the same order.
	Chosen      []route.Choice
	Assignments []route.Assignment
	Readings    []Reading
	// Sources are the corpus's sources by ID. The chosen ones are read
	// in full from their files; the others are complete only when their
	// file was read for this question (new or changed), and otherwise
	// hold what the index keeps for selection (ID, Path, Title, Type,
	// Date, Metadata, Hash), without Text or Parts.
	Sources map[string]*corpus.Source
	Skipped []corpus.Skipped
	Notes   []string

	// Groups, when the question is decomposed by group (enough sources
	// that fall into several groups, and a question that is not simple),
	// are the groups each read from one role; GroupsWhy says why or why not.
	Groups    []route.GroupAssignment
	GroupsWhy string
	// Spans, when the sources are read one by one, are the readings of
	// the cross-source roles (the historian, the synthesizer): each reads
	// the sources the strategy gave it together with sources that reach
	// across time or themes, in one reading (route.Spans).
	Spans []route.Span
	// GroupCount is how many groups with sources the chosen sources fell
	// into when grouping was asked for, whether or not they were used.
	GroupCount int

	Nonce string
	top   string
	cfg   config.Ask
}

// source is the source of the plan whose ID is id, or the zero Source
// when it has none by that ID (a group's reading names its group).
func (p *Plan) source(id string) corpus.Source {
	if s := p.Sources[id]; s != nil {
		return *s
	}
	return corpus.Source{}
}

// Calls is how many model calls the plan makes at most: one a reading,
// the debate, and the reduce step with its one retry.
func (p *Plan) Calls() int {
	n := len(p.Readings) + 2
	if p.Debate {
		n++
	}
	return n
}

// Prepare reads the corpus, classifies the question, picks the sources and
// their roles, and composes nothing yet: no model is called. An error that
// is the caller's to fix is an *engine.UserError.
func Prepare(ctx context.Context, o *Options) (*Plan, error) {
	// The question reaches the prompts, the journal and answer.json: a key
	// typed in it is masked like one in the corpus.
	q := secrets.Mask(strings.TrimSpace(o.Question))
	if q == "" {
		return nil, &engine.UserError{Msg: "ask a question: sot ask \"QUESTION\" [PATH...]"}
	}
	cfg := o.Config.Ask
	model, err := o.Config.ResolveModel(o.Model)
	if err != nil {
		return nil, engine.AsUserError(err)
	}
	top := projectTop(o.Dir)
	p := &Plan{Question: q, Model: model.String(), top: top, cfg: cfg, Strategy: route.Strategy(cfg.RoleStrategy)}

	paths, err := corpusPaths(o, top)
	if err != nil {
		return nil, err
	}
	budget := llm.ContextWindow(p.Model) - 4096 - 2048 // the answer, and the instructions around the source
	copts := corpus.Options{PartTokens: max(2048, budget), FollowSymlinks: o.FollowSymlinks && len(o.Paths) > 0, ReadFile: corpusReadFile, Now: o.Time}

	// Classify.
	if o.Intent != "" {
		in, err := route.ParseIntent(o.Intent)
		if err != nil {
			return nil, &engine.UserError{Field: "--intent", Msg: err.Error()}
		}
		p.Classification = route.ClassifyAs(q, in)
	} else {
		p.Classification = route.Classify(q)
	}
	p.Roles = route.RolesFor(p.Classification.Intent)

	// Read the corpus through its index, retrieve, then select, and read
	// the chosen sources in full. A chosen file that changed after the
	// corpus was scanned sends the whole step round again: what was chosen
	// was chosen from what it held before. The index is opened while the
	// corpus is walked, which needs it only once it asks what is known of
	// the files it found.
	openIndex := parallel.Go(func() openedIndex {
		ix, err := OpenIndex(top)
		return openedIndex{ix, err}
	})
	library := loadLibrary(o)
	defer library() // its warnings are written before Prepare returns
	defer func() {
		if ix := openIndex().ix; ix != nil {
			ix.Close()
		}
	}()
	for attempt := 1; ; attempt++ {
		err := p.gather(ctx, openIndex, paths, copts)
		if err == nil {
			break
		}
		if !errors.Is(err, corpus.ErrChanged) || attempt == 3 {
			if errors.Is(err, corpus.ErrChanged) {
				return nil, fmt.Errorf("the corpus kept changing while it was read, %d times; ask again when it is still: %w", attempt, err)
			}
			return nil, err
		}
	}
	if note := RebuiltNote(openIndex().ix); note != "" {
		p.Notes = append(p.Notes, note)
	}

	// Roles.
	skip, note := route.SkipSoT(len(p.Chosen), cfg.MinAgentsForSoT)
	switch {
	case !cfg.EnableSoT:
		p.SoTNote = "society of thought turned off (ask.enable_sot: false): every source read plainly, as a control run"
	case skip:
		p.SoTNote = note
	default:
		p.SoT = true
		p.Assignments = route.Assign(route.Sources(p.Chosen), p.Roles, p.Strategy)
		by := cmp.Or(o.Groups, cfg.Groups)
		if by == "" && len(o.CustomGroups) > 0 {
			for _, g := range o.CustomGroups {
				by += "," + g.Name
			}
			by = by[1:]
		}
		if by != "" {
			if err := p.decompose(by, top, append(slices.Clone(o.CustomGroups), cfg.CustomGroups...)); err != nil {
				return nil, err
			}
		}
		if len(p.Groups) == 0 {
			p.span(top)
		}
	}
	roles := map[string]*persona.Persona{}
	lib, err := library()
	if err != nil {
		return nil, err
	}
	if p.SoT {
		for _, a := range p.Assignments {
			if _, ok := roles[a.Role]; ok {
				continue
			}
			r, ok := lib.Get(persona.Role, a.Role)
			if !ok {
				return nil, &engine.UserError{Msg: fmt.Sprintf("no persona for the role %q; add one under .sot/personas/roles/ or restore the built-in", a.Role)}
			}
			roles[a.Role] = r
		}
	}
	switch intent := p.Classification.Intent; {
	case !p.SoT:
		p.DebateWhy = "no society of thought, so no debate"
	case !cfg.DebatePhase && !o.Debate:
		p.DebateWhy = "the debate step is off (ask.debate_phase: false)"
	case o.Debate:
		p.Debate, p.DebateWhy = true, "asked for with --debate"
	case intent == route.IntentAnalytical || intent == route.IntentComparative:
		p.Debate, p.DebateWhy = true, fmt.Sprintf("the question is %s", intent)
	default:
		p.DebateWhy = fmt.Sprintf("the question is %s; the debate step runs for analytical and comparative questions, or with --debate", intent)
	}

	// Readings: one a group when the question is decomposed by group, else
	// one a source; a source or group too large for a prompt is read in
	// parts, all of them.
	partBudget := max(2048, budget)
	for _, g := range p.Groups {
		members, order := g.Group.Members, ""
		if g.Role == route.RoleHistorian {
			// The historian reads a group in date order, as it reads a span.
			members, order = route.DateOrder(members, route.Sources(p.Chosen)), route.InDateOrder
		}
		text, _ := p.joinSources(members, nil)
		for _, part := range splitOver(text, partBudget) {
			p.Readings = append(p.Readings, Reading{ID: fmt.Sprintf("A%d", len(p.Readings)+1), Source: "group:" + g.Group.ID,
				Title: fmt.Sprintf("%s (%d sources)", g.Group.Name, len(g.Group.Members)), Type: "group of " + string(g.Group.Kind) + " sources",
				Part: part.Index + 1, Parts: part.Count, Text: part.Text, Role: roles[g.Role], Why: g.Why, Members: members, Order: order})
		}
	}
	spanned := map[string]bool{} // the roles whose span was read
	for i, c := range p.Chosen {
		if len(p.Groups) > 0 {
			break
		}
		s := p.source(c.ID)
		var role *persona.Persona
		why := ""
		if p.SoT {
			role, why = roles[p.Assignments[i].Role], p.Assignments[i].Why
			if j := slices.IndexFunc(p.Spans, func(sp route.Span) bool { return sp.Role == p.Assignments[i].Role }); j >= 0 {
				// A cross-source role reads its span once, where its
				// first source comes.
				if sp := p.Spans[j]; !spanned[sp.Role] {
					spanned[sp.Role] = true
					p.readSpan(sp, roles[sp.Role], partBudget)
				}
				continue
			}
		}
		parts := s.Parts
		if len(parts) == 0 {
			parts = []corpus.Part{{Index: 0, Count: 1, Text: s.Text}}
		}
		for _, part := range parts {
			r := Reading{ID: fmt.Sprintf("A%d", len(p.Readings)+1), Source: s.ID, Title: s.Title, Type: s.Type,
				Part: part.Index + 1, Parts: part.Count, Text: part.Text, Role: role, Why: why}
			if !s.Date.IsZero() {
				r.Date = s.Date.Format("2006-01-02")
			}
			p.Readings = append(p.Readings, r)
		}
	}

	p.RunID = p.runID(o)
	p.OutputDir = o.OutputDir
	if p.OutputDir == "" {
		p.OutputDir = project.FromWorkDir(filepath.Join(top, ".sot", "answers", p.RunID))
	}
	if err := run.Check(top, p.OutputDir, layout); err != nil {
		return nil, err
	}
	st := loadState(p.OutputDir)
	if st.RunID == p.RunID && st.Authentic && !o.Fresh {
		p.Nonce = st.Nonce
	} else {
		p.Nonce = prompt.NonceFor(run.Key(), p.RunID)
	}
	return p, nil
}

// joinSources is the text of several sources read as one: each under a
// "## Source:" heading with its title and date. The sources in part are
// shown in excerpt (excerpt, excerptBytes), and their heading says so.
func (p *Plan) joinSources(ids []string, part map[string]bool) (text string, excerpts int) {
	var b strings.Builder
	var terms []string
	if len(part) > 0 {
		terms = index.Terms(p.Question)
	}
	for _, id := range ids {
		s := p.source(id)
		fmt.Fprintf(&b, "## Source: %s", strings.Join(strings.Fields(s.Title), " "))
		if !s.Date.IsZero() {
			fmt.Fprintf(&b, " (%s)", s.Date.Format("2006-01-02"))
		}
		text := strings.TrimSpace(s.Text)
		if part[id] {
			var cut bool
			if text, cut = excerpt(text, terms, excerptBytes); cut {
				b.WriteString(" (excerpt)")
				excerpts++
			}
		}
		fmt.Fprintf(&b, "\n\n%s\n\n", text)
	}
	return strings.TrimSpace(b.String()), excerpts
}

// span gives the cross-source roles that read by source their spans
// (route.Spans): themes are those sot sources group --thematic named,
// else the topic tags the sources share.
func (p *Plan) span(top string) {
	var themes []route.Theme
	if slices.ContainsFunc(p.Assignments, func(a route.Assignment) bool { return a.Role == route.RoleSynthesizer }) {
		t, err := LoadThemes(top)
		switch {
		case err != nil:
			p.Notes = append(p.Notes, fmt.Sprintf("the synthesizer's themes are the topic tags the sources share: %v", err))
		case t != nil:
			themes = t.Themes
		}
	}
	p.Spans, p.Assignments = route.Spans(route.Sources(p.Chosen), p.Assignments, themes)
}

// readSpan adds the readings of a span: its sources as one text, in parts
// when they do not fit one prompt.
func (p *Plan) readSpan(sp route.Span, role *persona.Persona, budget int) {
	titles := make([]string, len(sp.Members))
	for i, id := range sp.Members {
		titles[i] = strings.Join(strings.Fields(p.source(id).Title), " ")
	}
	title := strings.Join(titles, ", ")
	if n := len(titles); n > 1 {
		title = strings.Join(titles[:n-1], ", ") + " and " + titles[n-1]
	}
	// The sources added to the span are read in full by their own role:
	// the span shows the passages of each nearest the question.
	added := map[string]bool{}
	for _, id := range sp.Members {
		if !slices.Contains(sp.Own, id) {
			added[id] = true
		}
	}
	text, excerpts := p.joinSources(sp.Members, added)
	if excerpts > 0 {
		sp.Why += fmt.Sprintf(" (%d of them shown in excerpt: the passages nearest the question)", excerpts)
		if i := slices.IndexFunc(p.Spans, func(s route.Span) bool { return s.Role == sp.Role }); i >= 0 {
			p.Spans[i].Why = sp.Why
		}
	}
	for _, part := range splitOver(text, budget) {
		p.Readings = append(p.Readings, Reading{ID: fmt.Sprintf("A%d", len(p.Readings)+1), Source: "span:" + sp.Role, Title: title,
			Part: part.Index + 1, Parts: part.Count, Text: part.Text, Role: role, Why: sp.Why, Members: sp.Members, Order: sp.Order, Excerpts: excerpts})
	}
}

// splitOver cuts a group's text into parts of at most budget tokens. A
// text no longer in bytes than the budget cannot be over it (no token is
// shorter than a byte), so it is one part and nothing is counted: the
// tokenizer's vocabulary is loaded only for a text that could need it.
// The parts' token counts are not used here, and a part that was not
// counted says 0.
func splitOver(text string, budget int) []corpus.Part {
	if len(text) > budget {
		if parts := corpus.Split(text, budget); len(parts) > 0 {
			return parts
		}
	}
	return []corpus.Part{{Index: 0, Count: 1, Text: text}}
}

// corpusReadFile reads the corpus's files; nil: os.ReadFile. Tests count
// the files a question reads through it.
var corpusReadFile func(name string) ([]byte, error)

// loadLibrary returns o.Library, or else starts o.LoadLibrary and returns
// what waits for it.
func loadLibrary(o *Options) func() (*persona.Library, error) {
	if o.Library != nil || o.LoadLibrary == nil {
		return func() (*persona.Library, error) { return o.Library, nil }
	}
	type loaded struct {
		lib *persona.Library
		err error
	}
	wait := parallel.Go(func() loaded {
		lib, err := o.LoadLibrary()
		return loaded{lib, err}
	})
	return func() (*persona.Library, error) {
		l := wait()
		return l.lib, l.err
	}
}

// openedIndex is the corpus index OpenIndex opened, or why it could not.
type openedIndex struct {
	ix  *index.Index
	err error
}

// gather reads the corpus at paths through the index openIndex gives (it
// waits for the index, and returns the error that opening it met), records
// in the index what changed, retrieves and selects the sources for the
// question, and reads the chosen ones in full (see scanCorpus). It returns
// an error wrapping corpus.ErrChanged when a chosen file changed after the
// scan.
func (p *Plan) gather(ctx context.Context, openIndex func() openedIndex, paths []string, copts corpus.Options) error {
	// The question is ranked while the corpus is scanned: over a corpus
	// that has not changed the ranking is the one the index gives now,
	// and the two together take little more than the longer of them. A
	// scan that changed a source in the index ranks again.
	type ranked struct {
		hits []index.Hit
		err  error
	}
	early := parallel.Go(func() ranked {
		opened := openIndex()
		if opened.err != nil {
			return ranked{err: opened.err}
		}
		hits, err := search(ctx, opened.ix, p.Question, p.cfg.MaxSources)
		return ranked{hits, err}
	})
	res, changed, err := scanCorpus(ctx, openIndex, paths, copts)
	r := early() // always waited for: the search must be over before the index closes
	if opened := openIndex(); opened.err != nil {
		return opened.err
	}
	if err == nil && changed {
		r.hits, r.err = search(ctx, openIndex().ix, p.Question, p.cfg.MaxSources)
	}
	if err != nil {
		var pe *corpus.PathError
		if errors.As(err, &pe) || errors.Is(err, os.ErrNotExist) {
			return engine.AsUserError(err)
		}
		return err
	}
	sources := res.Sources
	p.Skipped = res.Skipped
	if len(sources) == 0 {
		return &engine.UserError{Msg: fmt.Sprintf("no source to read in %s (%d file(s) skipped); put meeting notes, reports or northstar exports there, or name files and directories after the question", strings.Join(paths, ", "), len(res.Skipped))}
	}
	// The map of every source (10,000 entries) is built beside the choice and the reading of the chosen sources, which need
	// only the hits' sources, or in the fallback every source.
	all := parallel.Go(func() map[string]*corpus.Source {
		m := make(map[string]*corpus.Source, len(sources))
		for _, s := range sources {
			m[s.ID] = s
		}
		return m
	})

	if r.err != nil {
		return r.err
	}
	// Only the sources this question's corpus holds are candidates: the
	// index may hold others (another corpus of the project, sources added
	// with sot sources add).
	held := hitSources(r.hits, sources)
	hits := slices.DeleteFunc(r.hits, func(h index.Hit) bool { _, ok := held[h.Doc.ID]; return !ok })
	cands := candidates(hits, held)
	p.Notes = slices.DeleteFunc(p.Notes, func(n string) bool { return n == noMatchNote })
	if len(cands) == 0 {
		p.Notes = append(p.Notes, noMatchNote)
		cands = newest(sources)
		held = all()
	}
	div := route.DiversityOptions{}
	if p.cfg.DiversitySelection {
		div = route.DefaultDiversity()
	}
	p.Chosen = route.Select(cands, p.cfg.MaxSources, div)

	// The chosen sources are read from their files, not from the text the
	// index keeps: what the models read is what the files hold now, masked
	// by the rules of this sot.
	files := make(map[string]int, len(p.Chosen)) // the chosen sources' first files, in res.Files
	for _, c := range p.Chosen {
		if s := held[c.ID]; s == nil || s.Text == "" {
			files[c.ID] = -1
		}
	}
	for i := range res.Files {
		f := &res.Files[i]
		if j, ok := files[f.Source.ID]; ok && j < 0 && f.Skip == "" && f.Hash != "" {
			files[f.Source.ID] = i
		}
	}
	// They are read in parallel: each is parsed and masked.
	type reread struct {
		src corpus.Source
		err error
	}
	read := make([]reread, len(p.Chosen))
	parallel.For(len(p.Chosen), func(k int) {
		i, ok := files[p.Chosen[k].ID]
		if !ok {
			return
		}
		var f corpus.File
		if i >= 0 {
			f = res.Files[i]
		}
		read[k].src, read[k].err = corpus.Reread(f, copts)
	})
	p.Sources = all()
	for k, c := range p.Chosen {
		if _, ok := files[c.ID]; !ok {
			continue
		}
		if err := read[k].err; err != nil {
			return fmt.Errorf("read the source %s: %w", c.ID, err)
		}
		p.Sources[c.ID] = &read[k].src
	}
	return nil
}

// hitSources are the sources, of those given, that hits name, by ID.
func hitSources(hits []index.Hit, sources []*corpus.Source) map[string]*corpus.Source {
	named := make(map[string]bool, len(hits))
	for _, h := range hits {
		named[h.Doc.ID] = true
	}
	held := make(map[string]*corpus.Source, len(hits))
	for _, s := range sources {
		if named[s.ID] {
			held[s.ID] = s
		}
	}
	return held
}

// noMatchNote is the note of a question none of whose words a source has.
const noMatchNote = "no source shares a word with the question; the newest sources are read instead"

// scanCorpus reads the corpus at paths as corpus.Scan does, with the
// files the index (from openIndex) remembers as what is known: a file
// whose stat has not changed since it was read is not read again, and its
// source (without its text) is the one the index keeps. It then records
// in the index, in one transaction, the files read and the sources of
// those that changed, and forgets the files that are gone, with the
// sources only they gave. Over a corpus that has not changed it writes
// nothing. changed says whether a source was added to the index, changed
// in it or removed from it.
func scanCorpus(ctx context.Context, openIndex func() openedIndex, paths []string, copts corpus.Options) (res *corpus.Result, changed bool, err error) {
	// What the index remembers is read while the corpus is walked: the
	// walk waits on the disk and the reading on SQLite, and Scan asks
	// what is known of a file only once the walk is over. A file's record
	// becomes a corpus.Known only when Scan asks for it.
	var (
		remembered []index.File // sorted by path, as Files gives them
		ferr       error
	)
	loaded := parallel.Start(func() {
		opened := openIndex()
		if ferr = opened.err; ferr != nil {
			return
		}
		remembered, ferr = opened.ix.Files(ctx)
	})
	copts.Known = func() corpus.Remembered {
		loaded()
		return rememberedFiles(remembered)
	}
	res, err = corpus.Scan(paths, copts)
	loaded()
	if ferr != nil {
		return nil, false, fmt.Errorf("read the corpus index: %w", ferr)
	}
	if err != nil {
		return nil, false, err
	}
	var u index.FileUpdate
	synced := map[string]bool{}
	for i := range res.Files {
		f := &res.Files[i]
		if !f.Read || f.Hash == "" {
			continue
		}
		u.Put = append(u.Put, fileOf(*f, res.Checked))
		if f.Changed && f.Skip == "" && !synced[f.Source.ID] {
			synced[f.Source.ID] = true
			u.Docs = append(u.Docs, DocOf(f.Source))
		}
	}
	u.Gone = res.Gone()
	c, err := openIndex().ix.UpdateFiles(ctx, u)
	if err != nil {
		return nil, false, fmt.Errorf("update the corpus index: %w", err)
	}
	return res, c.Added+c.Updated+c.Removed > 0, nil
}

// rememberedFiles are the files the index remembers, sorted by path, as
// corpus.Scan takes them.
type rememberedFiles []index.File

func (r rememberedFiles) Len() int                 { return len(r) }
func (r rememberedFiles) Real(i int) string        { return r[i].Path }
func (r rememberedFiles) Known(i int) corpus.Known { return knownOf(r[i]) }

// knownOf is what the index remembers of a file, as corpus.Scan takes it.
func knownOf(f index.File) corpus.Known {
	k := corpus.Known{
		Stamp:   corpus.Stamp{Path: f.Doc.Path, Size: f.Size, ModTime: f.ModTime, Change: f.Change, Inode: f.Inode},
		Checked: f.Checked, Reader: f.Reader, Hash: f.Hash, Skip: f.Skip,
	}
	if f.Skip == "" {
		k.Source = corpus.Source{ID: f.Doc.ID, Path: f.Doc.Path, Title: f.Doc.Title, Type: f.Doc.Type, Date: f.Doc.Date,
			Hash: f.Hash, Metadata: decodeMetadata(f.Doc.Meta)}
	}
	return k
}

// fileOf is a file corpus.Scan read, as the index remembers it.
func fileOf(f corpus.File, checked int64) index.File {
	x := index.File{Path: f.Real, Size: f.Stamp.Size, ModTime: f.Stamp.ModTime, Change: f.Stamp.Change, Inode: f.Stamp.Inode,
		Checked: checked, Reader: corpus.Reader, Hash: f.Hash, Skip: f.Skip, Doc: index.Doc{Path: f.Path}}
	if f.Skip == "" {
		d := DocOf(f.Source)
		d.Text = ""
		x.Doc = d
	}
	return x
}

// search ranks the sources of the index ix for the question: BM25 with a
// recency bonus, enough of them to choose want among.
func search(ctx context.Context, ix *index.Index, question string, want int) ([]index.Hit, error) {
	return ix.Search(ctx, question, index.SearchOptions{Limit: max(want*8, 64)})
}

// decompose reads the sources by group, as the seed's group decomposition
// does, when the question calls for it: the chosen sources are grouped as
// by names (see GroupsOf), each group takes one role, and each group is
// read as one source from that role.
func (p *Plan) decompose(by, top string, custom []config.CustomGroup) error {
	groups, how, err := groupCandidates(route.Sources(p.Chosen), by, top, custom)
	if err != nil {
		return err
	}
	if how != "" {
		p.Notes = append(p.Notes, "grouped by theme: "+how)
	}
	for _, g := range groups {
		if len(g.Members) == 0 && g.Kind == route.GroupCustom && g.ID != "custom:" {
			p.Notes = append(p.Notes, fmt.Sprintf("the custom group %q matches none of the sources chosen", g.Name))
		}
	}
	use, why := route.UseGroups(groups, len(p.Chosen), p.cfg.MinAgentsForGroupDecomposition, p.Classification.Complexity)
	p.GroupsWhy = why
	for _, g := range groups {
		if len(g.Members) > 0 {
			p.GroupCount++
		}
	}
	if !use {
		return nil
	}
	p.Groups = route.AssignGroups(groups)
	byID := map[string]route.Assignment{}
	for _, a := range route.MemberRoles(p.Groups) {
		if _, ok := byID[a.SourceID]; !ok {
			byID[a.SourceID] = a
		}
	}
	for i, c := range p.Chosen {
		if a, ok := byID[c.ID]; ok {
			p.Assignments[i] = a
		}
	}
	return nil
}

// runID names a question by what it reads and how: the same command over
// the same corpus gets the same id, so a re-run finds its journal.
func (p *Plan) runID(o *Options) string {
	id := run.NewID("sot-ask-v1")
	id.Add(p.Question, string(p.Classification.Intent), string(p.Strategy), p.Model, fmt.Sprint(p.SoT, p.Debate, p.cfg.ConflictThreshold))
	for _, r := range p.Readings {
		role := ""
		if r.Role != nil {
			role = r.Role.ID + "\x00" + r.Role.Body
		}
		id.Add(r.ID, p.source(r.Source).Hash, fmt.Sprint(r.Part, r.Parts), role)
		if len(r.Members) > 0 {
			id.Add(r.Source, r.Title)
		}
		for _, m := range r.Members {
			id.Add(m, p.source(m).Hash)
		}
	}
	return id.String()
}

// corpusPaths are the paths the corpus is read from.
func corpusPaths(o *Options, top string) ([]string, error) {
	if len(o.Paths) > 0 {
		return o.Paths, nil
	}
	dir := o.Config.Ask.Corpus
	field := "ask.corpus"
	if dir == "" {
		dir, field = filepath.Join(".sot", "corpus"), ""
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(top, dir)
	}
	where := "the project's corpus"
	if field != "" {
		where = "the corpus ask.corpus names"
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, &engine.UserError{Msg: fmt.Sprintf("%s, %s, does not exist: put the sources there (meeting notes, reports, northstar exports), or name files and directories after the question", where, project.FromWorkDir(dir))}
	}
	if err := insideRoot(top, dir); err != nil {
		return nil, &engine.UserError{Msg: fmt.Sprintf("%s, %s, %v; sot reads a corpus it was not given only from inside the project, because a repository could point it at your own files: move the sources into the project, or name the directory after the question (with --follow-symlinks if you mean it)", where, project.FromWorkDir(dir), err)}
	}
	return []string{project.FromWorkDir(dir)}, nil
}

// insideRoot checks, through an os.Root opened at the project's top, that
// dir resolves inside the project: a symbolic link anywhere on its way
// that leads out makes it fail.
func insideRoot(top, dir string) error {
	rel, ok := project.Within(top, dir)
	if !ok {
		return fmt.Errorf("lies outside the project %s", top)
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := root.Stat(rel); err != nil {
		if link, target := project.LinkOutside(top, dir); link != "" {
			return fmt.Errorf("leads through the symbolic link %s to %s, outside the project", project.FromWorkDir(link), target)
		}
		return fmt.Errorf("cannot be read inside the project: %w", err)
	}
	return nil
}

// projectTop is the absolute top of the project holding dir.
func projectTop(dir string) string { return ProjectTop(dir) }

// ProjectTop is the absolute top of the project holding dir (default
// "."): the nearest parent with .git, .sot or .paw.
func ProjectTop(dir string) string {
	dir = cmp.Or(dir, ".")
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return persona.RepoRoot(dir)
}

// RebuiltNote says, when the index had to be rebuilt because the file
// found was not one sot wrote (a planted trigger, say), what was wrong and
// what was lost; "" when it was not.
func RebuiltNote(ix *index.Index) string {
	why := ix.Rebuilt()
	if why == "" {
		return ""
	}
	return fmt.Sprintf("the corpus index %s was not one sot wrote (%s): sot removed it and built it again from the sources, so analyses from sot sources analyze must be run again", project.FromWorkDir(ix.Path()), why)
}

// DocOf is a source as the index keeps it.
func DocOf(s corpus.Source) index.Doc {
	d := index.Doc{ID: s.ID, Path: s.Path, Title: s.Title, Type: s.Type, Date: s.Date, Hash: s.Hash, Text: s.Text}
	if s.Metadata != nil {
		if b, err := jsonMarshal(s.Metadata); err == nil {
			d.Meta = b
		}
	}
	return d
}

// candidates turns hits into what selection weighs.
func candidates(hits []index.Hit, sources map[string]*corpus.Source) []route.Candidate {
	var out []route.Candidate
	for _, h := range hits {
		sp, ok := sources[h.Doc.ID]
		if !ok {
			continue
		}
		s := *sp
		s.Metadata = cmp.Or(s.Metadata, MetadataOf(h.Doc)) // an export's payload, else sot sources analyze's answer
		out = append(out, candidateOf(s, h.Score()))
	}
	return out
}

func candidateOf(s corpus.Source, relevance float64) route.Candidate {
	c := route.Candidate{ID: s.ID, Relevance: relevance, Fields: map[string]string{route.FieldSourceType: s.Type}, Path: s.Path, Date: s.Date}
	if m := s.Metadata; m != nil {
		c.Tags = m.TopicTags
		c.Fields[route.FieldMeetingType] = m.MeetingType
		c.Suggested = m.SuggestedPerspective
		if t := m.TemporalContext; t != nil {
			c.Fields[route.FieldQuarter] = t.Quarter
		}
		if sig := m.ContentSignals; sig != nil {
			c.Signals = route.Signals{RiskMentions: sig.RiskMentions, DecisionsMade: sig.DecisionsMade, ActionsAssigned: sig.ActionsAssigned,
				QuestionsRaised: sig.QuestionsRaised, ConflictIndicators: sig.ConflictIndicators}
		}
	}
	// The quarter and the month are periods: those of the parsed date, and
	// only without a date the quarter the metadata names, when it parses
	// as one (a model's sentence is no quarter); else none.
	for _, f := range []string{route.FieldQuarter, route.FieldMonth} {
		p, ok := route.PeriodOf(c, f)
		c.Fields[f] = ""
		if ok {
			c.Fields[f] = p.String()
		}
	}
	return c
}

// newest ranks sources by date, newest first, when none matches the
// question's words.
func newest(sources []*corpus.Source) []route.Candidate {
	s := slices.Clone(sources)
	slices.SortStableFunc(s, func(a, b *corpus.Source) int { return b.Date.Compare(a.Date) })
	var out []route.Candidate
	for i, src := range s {
		out = append(out, candidateOf(*src, 1/float64(i+1)))
	}
	return out
}
