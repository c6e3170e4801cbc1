package ask

import (
	"fmt"

	"github.com/sotlabs/sot/ask/corpus"
	"github.com/sotlabs/sot/ask/index"
	"github.com/sotlabs/sot/ask/route"
	"github.com/sotlabs/sot/engine"
)

// GroupsOf groups indexed sources as --groups would: by quarter
// ("temporal") or by source type ("source"), each group with the role it
// would be read from.
func GroupsOf(docs []index.Doc, by string) ([]route.GroupAssignment, error) {
	field := ""
	switch by {
	case "temporal":
		field = route.FieldQuarter
	case "source":
		field = route.FieldSourceType
	default:
		return nil, &engine.UserError{Field: "--by", Msg: fmt.Sprintf("%q: use temporal (by quarter) or source (by source type)", by)}
	}
	cands := make([]route.Candidate, 0, len(docs))
	for _, d := range docs {
		s := corpus.Source{ID: d.ID, Title: d.Title, Type: d.Type, Date: d.Date, Metadata: MetadataOf(d)}
		cands = append(cands, candidateOf(s, 0))
	}
	return route.AssignGroups(route.GroupBy(cands, field)), nil
}
