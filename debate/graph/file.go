package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/safedir"
	"github.com/sotlabs/sot/internal/termsafe"
)

// The file format: canonical JSON, named and versioned.
const (
	// FormatName is the value of the file's "format" member.
	FormatName = "sot-argument-graph"
	// FormatVersion is the version this package writes. A file of a newer
	// version is refused rather than misread.
	FormatVersion = 1
)

// file is the graph as its JSON file holds it.
type file struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Nodes   []*ArgumentNode `json:"nodes"`
	Edges   []Edge          `json:"edges"`
	// Missing is written only when a passage lacks nodes.
	Missing []Failure `json:"missing,omitempty"`
}

// MarshalJSON writes the graph's canonical JSON: the format name and
// version, the nodes in the order they were added (times in UTC, empty
// lists as []), and the edges sorted by their From node's place, then
// their To node's, then their type's place in EdgeTypes. The same graph
// always gives the same bytes, and Parse of them gives the graph back.
func (g *DebateDAG) MarshalJSON() ([]byte, error) {
	// Nothing is written unmasked: what Parse, AddNode and AddEdge masked
	// is not searched again, but edges and missing nodes are cheap to.
	f := file{Format: FormatName, Version: FormatVersion, Nodes: make([]*ArgumentNode, len(g.Nodes)), Edges: maskEdges(g.SortedEdges())}
	if len(g.Missing) > 0 {
		f.Missing = slices.Clone(g.Missing)
		var ps []*string
		for i := range f.Missing {
			ps = append(ps, &f.Missing[i].Reason)
		}
		maskTexts(ps)
	}
	for i, n := range g.Nodes {
		n.maskSecrets() // a node put in Nodes by hand
		c := *n
		c.Created = c.Created.UTC()
		c.Tags = orEmpty(c.Tags)
		c.Turns = orEmpty(c.Turns)
		c.Claims = make([]Claim, len(n.Claims))
		for k, cl := range n.Claims {
			c.Claims[k] = Claim{Text: cl.Text, Turns: orEmpty(cl.Turns)}
		}
		f.Nodes[i] = &c
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return termsafe.JSON(b.Bytes()), nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// SortedEdges returns a copy of the edges in the file's canonical order
// (see MarshalJSON), which the narrative and the exports follow too.
func (g *DebateDAG) SortedEdges() []Edge {
	es := slices.Clone(g.Edges)
	if es == nil {
		es = []Edge{}
	}
	place := func(id string) int {
		i, ok := g.index(id)
		if !ok {
			return len(g.Nodes)
		}
		return i
	}
	slices.SortStableFunc(es, func(a, b Edge) int {
		if c := place(a.From) - place(b.From); c != 0 {
			return c
		}
		if c := place(a.To) - place(b.To); c != 0 {
			return c
		}
		return slices.Index(EdgeTypes, a.Type) - slices.Index(EdgeTypes, b.Type)
	})
	return es
}

// UnmarshalJSON reads a graph file (see Parse).
func (g *DebateDAG) UnmarshalJSON(data []byte) error {
	h, err := Parse(data)
	if err != nil {
		return err
	}
	*g = *h
	return nil
}

// Parse reads a graph from its JSON file and checks it as AddNode and
// AddEdge would: node ids unique, types known, claims referring to turns
// the node has, edges between nodes it holds, no edge twice, no cycle.
// Members the format does not have are refused. The errors say where: a
// line and column for JSON that does not parse, a node's or edge's number
// for one that does not fit.
func Parse(data []byte) (*DebateDAG, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the file is empty; a graph file is the JSON sot debate --graph writes")
	}
	// The file is read once; when it does not fit, the format and version
	// are read first, so that a newer file is refused for its version and
	// not for a member this version does not know.
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f)
	if err := checkHead(data, err, f.Format, f.Version); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the file holds more than one JSON value")
	}
	// The file is material: its secrets are masked before anything of it
	// is used (see maskTexts).
	maskFile(&f)
	g := New()
	for i, n := range f.Nodes {
		if n == nil {
			return nil, fmt.Errorf("node %d is null", i+1)
		}
		if err := g.AddNode(n); err != nil {
			return nil, fmt.Errorf("node %d: %s", i+1, strings.TrimPrefix(err.Error(), "graph: "))
		}
	}
	if err := g.addEdges(f.Edges); err != nil {
		return nil, err
	}
	for i, m := range f.Missing {
		if strings.TrimSpace(m.ID) == "" || g.Node(m.ID) != nil {
			return nil, fmt.Errorf("missing node %d: %q is no id of a node the graph lacks", i+1, m.ID)
		}
	}
	g.Missing = f.Missing
	return g, nil
}

// checkHead refuses a file that is not an argument graph of a version
// this package reads, by its format and version: as the whole file read
// them when it read without error (decodeErr nil), else read alone.
func checkHead(data []byte, decodeErr error, format string, version int) error {
	if decodeErr != nil {
		var head struct {
			Format  string `json:"format"`
			Version int    `json:"version"`
		}
		if err := json.NewDecoder(bytes.NewReader(data)).Decode(&head); err != nil {
			return jsonError(data, err)
		}
		format, version = head.Format, head.Version
	}
	if format != FormatName {
		if format == "" {
			return fmt.Errorf("this is not an argument graph: it has no \"format\": %q", FormatName)
		}
		return fmt.Errorf("this is not an argument graph: its format is %q, not %q", format, FormatName)
	}
	if version > FormatVersion {
		return fmt.Errorf("the graph is of version %d, written by a newer sot; this one reads version %d", version, FormatVersion)
	}
	if version < 1 {
		return fmt.Errorf("the graph has version %d; versions start at 1", version)
	}
	return nil
}

// jsonError says where JSON went wrong, as line:column when it can.
func jsonError(data []byte, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := position(data, int64(len(bytes.TrimRight(data, " \t\r\n"))))
		return fmt.Errorf("%d:%d: the JSON ends too early", line, col)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the byte that went wrong.
		line, col := position(data, se.Offset-1)
		return fmt.Errorf("%d:%d: not valid JSON: %v", line, col, err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		line, col := position(data, te.Offset)
		field := te.Field
		if field == "" {
			field = "the file"
		}
		return fmt.Errorf("%d:%d: %s should be %s, not a JSON %s", line, col, field, kindName(te.Type), te.Value)
	}
	return err
}

// kindName names the JSON a Go type reads.
func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Load reads the graph file at path. The file must not be a symlink. A
// missing file is an error that matches fs.ErrNotExist (see LoadOrNew).
// Every problem with the file (missing, unreadable, not a graph) is an
// *engine.UserError that names it.
func Load(path string) (*DebateDAG, error) {
	data, err := readPlain(path)
	if err != nil {
		return nil, err
	}
	g, err := Parse(data)
	if err != nil {
		return nil, &engine.UserError{Field: path, Err: err}
	}
	return g, nil
}

// LoadOrNew is Load, with an empty graph for a file that does not exist
// yet.
func LoadOrNew(path string) (*DebateDAG, error) {
	g, err := Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	return g, err
}

// readPlain reads a regular file that is not a symlink; the file opened
// is checked to be the one that was looked at.
func readPlain(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &engine.UserError{Field: path, Msg: "no such file", Err: fs.ErrNotExist}
		}
		return nil, &engine.UserError{Field: path, Err: err}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return nil, &engine.UserError{Field: path, Msg: "a graph file is never read or written through a symlink", Err: &safedir.SymlinkError{Path: path, Target: target}}
	}
	if !fi.Mode().IsRegular() {
		return nil, &engine.UserError{Field: path, Msg: "not a regular file; give the graph's JSON file"}
	}
	f, err := plainfile.Open(path)
	if err != nil {
		return nil, &engine.UserError{Field: path, Err: err}
	}
	defer f.Close()
	now, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(fi, now) {
		return nil, &engine.UserError{Field: path, Msg: "the file was replaced while it was being opened"}
	}
	return io.ReadAll(f)
}

// Save writes the graph's canonical JSON to path atomically: into a new
// temporary file beside it, then renamed over it, so a crash leaves the
// old file or the new one and never half of either. Neither the file nor
// its directory may be a symlink; the directory is created when missing.
func Save(path string, g *DebateDAG) error { return SaveIn("", path, g) }

// SaveIn is Save with a trusted top: when path lies inside top, no
// directory between top and the file may be a symlink either (see
// internal/safedir).
func SaveIn(top, path string, g *DebateDAG) error {
	data, err := g.MarshalJSON()
	if err != nil {
		return err
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if name == "" {
		return &engine.UserError{Field: path, Msg: "name a file for the graph, not a directory"}
	}
	d, err := safedir.Open(top, filepath.Clean(dir))
	if err != nil {
		return &engine.UserError{Field: path, Msg: "cannot write the graph there: " + err.Error(), Err: err}
	}
	defer d.Close()
	if fi, err := d.Lstat(name); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return &engine.UserError{Field: path, Msg: "not a regular file; name a file for the graph"}
	}
	if err := d.WriteFile(name, data, 0o644); err != nil {
		var se *safedir.SymlinkError
		if errors.As(err, &se) {
			return &engine.UserError{Field: path, Msg: "a graph file is never read or written through a symlink", Err: err}
		}
		return fmt.Errorf("save the graph to %s: %w", path, err)
	}
	return nil
}
