package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sourcegraph/go-diff/diff"
)

// ImportJSONL reads cases from JSON Lines as public review benchmarks
// publish them: one object a line, with a unified diff and the issues
// found in it. The keys read are id (or instance_id), language, diff (or
// patch), and issues (or comments, ground_truth), each with file (or
// path), start_line (or line, line_start), end_line (or line_end),
// category (or type, label) and description (or comment, body, message).
// A line without issues is a clean case. name says where the lines came
// from, in errors.
//
// Such a diff comes without its repository, so each case's repository is
// made from the diff itself: every line the diff shows of a file (its
// context, what it removes and what it adds) stands at its own line
// number, and the lines it does not show are left blank. The change
// between the two is the diff's, and its line numbers are the issues'.
func ImportJSONL(name string, r io.Reader) ([]Case, error) {
	var cases []Case
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		c, err := importLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		c.Source = fmt.Sprintf("%s:%d", name, n)
		if err := c.check(); err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, sc.Err()
}

// first returns the first of keys that m holds, as a string.
func first(m map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			return v
		case float64:
			return fmt.Sprint(int(v))
		}
	}
	return ""
}

func firstInt(m map[string]any, keys ...string) int {
	for _, k := range keys {
		if v, ok := m[k].(float64); ok {
			return int(v)
		}
	}
	return 0
}

func importLine(line string) (Case, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return Case{}, err
	}
	c := Case{ID: first(m, "id", "instance_id"), Language: first(m, "language", "lang"), Summary: first(m, "summary", "title", "description"),
		Before: map[string][]byte{}, After: map[string][]byte{}}
	if c.ID == "" {
		return c, fmt.Errorf("no id")
	}
	patch := first(m, "diff", "patch")
	if patch == "" {
		return c, fmt.Errorf("case %s: no diff", c.ID)
	}
	if err := c.fromDiff(patch); err != nil {
		return c, fmt.Errorf("case %s: %w", c.ID, err)
	}
	var issues []any
	for _, k := range []string{"issues", "comments", "ground_truth"} {
		if v, ok := m[k].([]any); ok {
			issues = v
			break
		}
	}
	for _, raw := range issues {
		is, ok := raw.(map[string]any)
		if !ok {
			return c, fmt.Errorf("case %s: an issue is not an object", c.ID)
		}
		d := Defect{File: first(is, "file", "path"), Description: first(is, "description", "comment", "body", "message")}
		start := firstInt(is, "start_line", "line", "line_start")
		end := max(firstInt(is, "end_line", "line_end"), start)
		d.Lines = []int{start, end}
		d.Category = categoryOf(first(is, "category", "type", "label"), d.Description)
		c.Defects = append(c.Defects, d)
	}
	c.Kind = KindClean
	if len(c.Defects) > 0 {
		c.Kind = KindDefect
	}
	return c, nil
}

// categoryOf files an imported issue under one of Categories: the first
// its own words name, "logic" when they name none.
func categoryOf(category, description string) string {
	if cats := categoriesOf(Finding{Category: category, Claim: description}); len(cats) > 0 {
		return cats[0]
	}
	return "logic"
}

// fromDiff makes the case's two versions of each file from a unified
// diff (see ImportJSONL).
func (c *Case) fromDiff(patch string) error {
	files, err := diff.ParseMultiFileDiff([]byte(patch))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("the diff changes no file")
	}
	for _, f := range files {
		oldName, newName := strings.TrimPrefix(f.OrigName, "a/"), strings.TrimPrefix(f.NewName, "b/")
		var before, after []string
		put := func(lines *[]string, at int, text string) {
			for len(*lines) < at {
				*lines = append(*lines, "")
			}
			(*lines)[at-1] = text
		}
		for _, h := range f.Hunks {
			o, n := int(h.OrigStartLine), int(h.NewStartLine)
			for _, l := range strings.Split(strings.TrimSuffix(string(h.Body), "\n"), "\n") {
				if l == "" {
					l = " " // an empty context line some tools strip of its space
				}
				switch l[0] {
				case ' ':
					put(&before, o, l[1:])
					put(&after, n, l[1:])
					o++
					n++
				case '-':
					put(&before, o, l[1:])
					o++
				case '+':
					put(&after, n, l[1:])
					n++
				}
			}
		}
		if oldName != "/dev/null" && oldName != "dev/null" {
			c.Before[oldName] = []byte(strings.Join(before, "\n") + "\n")
		}
		switch {
		case newName == "/dev/null" || newName == "dev/null":
			c.Deleted = append(c.Deleted, oldName)
		default:
			if oldName != newName && oldName != "/dev/null" && oldName != "dev/null" {
				c.Deleted = append(c.Deleted, oldName)
			}
			c.After[newName] = []byte(strings.Join(after, "\n") + "\n")
		}
	}
	return nil
}
