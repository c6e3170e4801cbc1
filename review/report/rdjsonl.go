package report

import (
	"bytes"
	"errors"

	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// rdDiagnostic is one reviewdog Diagnostic (Reviewdog Diagnostic Format).
type rdDiagnostic struct {
	Message  string     `json:"message"`
	Location rdLocation `json:"location"`
	Severity string     `json:"severity"`
	Source   rdSource   `json:"source"`
	Code     rdCode     `json:"code"`
}

type rdLocation struct {
	Path  string   `json:"path"`
	Range *rdRange `json:"range,omitempty"`
}

type rdRange struct {
	Start rdPosition `json:"start"`
	End   rdPosition `json:"end"`
}

type rdPosition struct {
	Line int `json:"line"`
}

type rdSource struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type rdCode struct {
	Value string `json:"value"`
}

// RDSeverity maps a severity to reviewdog's: must-fix "ERROR", should-fix
// "WARNING", anything else "INFO".
func RDSeverity(s finding.Severity) string {
	switch s {
	case finding.MustFix:
		return "ERROR"
	case finding.ShouldFix:
		return "WARNING"
	}
	return "INFO"
}

// RDJSONL renders res for reviewdog (-f=rdjsonl): one Diagnostic per line
// for each actionable item that points at a file. The document section an
// item names is given in its message; an item that names a section but no
// file points at the one file reviewed, when there is exactly one. Other
// items without a file and observations are left out, since a diagnostic
// needs a path; REVIEW-SYNTHESIS.md lists them. Items the user dismissed
// with sot review --resolve are left out too.
func RDJSONL(res *synthesis.Result) ([]byte, error) {
	if res == nil {
		return nil, errors.New("report: no result to render")
	}
	items, _ := located(res)
	var buf bytes.Buffer
	for _, it := range items {
		if o := it.Outcome; o != nil && o.Status == "dismissed" {
			continue // the user dismissed it: reviewdog has nothing to report
		}
		d := rdDiagnostic{
			Message:  message(it.Item),
			Location: rdLocation{Path: cleanURIPath(it.file)},
			Severity: RDSeverity(it.Severity),
			Source:   rdSource{Name: "sot", URL: InformationURI},
			Code:     rdCode{Value: ruleSpecialist(it.Item) + "/" + string(it.Severity)},
		}
		// Lines count only in the file the item names.
		if start, end, ok := region(res, it); ok {
			d.Location.Range = &rdRange{Start: rdPosition{Line: start}, End: rdPosition{Line: end}}
		}
		line, err := encode(d, false)
		if err != nil {
			return nil, err
		}
		buf.Write(line)
	}
	return buf.Bytes(), nil
}
