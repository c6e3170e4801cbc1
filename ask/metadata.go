package ask

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/internal/plainfile"
)

// This file reads what sot sources keeps beside the corpus index (the
// SoT metadata an analysis stored, the themes a model named), which a
// question uses when it picks and groups its sources. Package ask/analyze
// writes them.

// CoverageTarget is the seed's target for SoT metadata: more than 95% of
// the sources have it.
const CoverageTarget = 0.95

// MetadataOf is the SoT metadata of an indexed source: its export
// payload's when it has any, else what an earlier analysis found; nil when
// it has neither.
func MetadataOf(doc index.Doc) *corpus.Metadata {
	if m := PayloadMetadata(doc); m != nil {
		return m
	}
	return AnalysisMetadata(doc)
}

// PayloadMetadata is the SoT metadata of an indexed source's export
// payload; nil when it has none.
func PayloadMetadata(doc index.Doc) *corpus.Metadata {
	return decodeMetadata(doc.Meta)
}

// AnalysisMetadata is the SoT metadata sot sources analyze stored for an
// indexed source (the sotMetadata member of index.Doc.Analysis); nil when
// no analysis found any.
func AnalysisMetadata(doc index.Doc) *corpus.Metadata {
	if len(doc.Analysis) == 0 {
		return nil
	}
	var a struct {
		Metadata json.RawMessage `json:"sotMetadata"`
	}
	if json.Unmarshal(doc.Analysis, &a) != nil {
		return nil
	}
	return decodeMetadata(a.Metadata)
}

// decodeMetadata reads metadata as JSON; nil when there is none, it is not
// metadata, or it says nothing.
func decodeMetadata(b json.RawMessage) *corpus.Metadata {
	if len(b) == 0 {
		return nil
	}
	var m corpus.Metadata
	if json.Unmarshal(b, &m) != nil || reflect.ValueOf(m).IsZero() {
		return nil
	}
	return &m
}

// ThemesFile is where sot sources group --thematic keeps the themes a
// model named, under the project's top.
var ThemesFile = filepath.Join(IndexDir, "themes.json")

// Themes are the themes a model named for a corpus's topic tags, as
// ThemesFile keeps them.
type Themes struct {
	Themes []route.Theme `json:"themes"`
	Model  string        `json:"model"`
	At     time.Time     `json:"at,omitzero"`
	// Tags is how many distinct topic tags the model was shown, and
	// Sources how many sources had them.
	Tags    int `json:"tags"`
	Sources int `json:"sources"`
}

// LoadThemes reads the themes sot sources group --thematic kept for the
// project at top; nil when there are none.
func LoadThemes(top string) (*Themes, error) {
	b, err := plainfile.Read(filepath.Join(top, ThemesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the themes: %w", err)
	}
	var t Themes
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s is not the themes sot keeps (%v): run sot sources group --thematic again, or remove it", ThemesFile, err)
	}
	return &t, nil
}
