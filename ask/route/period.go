package route

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Period is a quarter or a month of a year: what temporal groups are
// formed by. Exactly one of Quarter (1-4) and Month (1-12) is set.
type Period struct {
	Year    int `json:"year"`
	Quarter int `json:"quarter,omitempty"`
	Month   int `json:"month,omitempty"`
}

// QuarterOf is the quarter t falls in.
func QuarterOf(t time.Time) Period {
	return Period{Year: t.Year(), Quarter: (int(t.Month())-1)/3 + 1}
}

// MonthOf is the month t falls in.
func MonthOf(t time.Time) Period { return Period{Year: t.Year(), Month: int(t.Month())} }

// String is the period's one spelling: "Q4 2025" for a quarter, "October
// 2025" for a month.
func (p Period) String() string {
	if p.Month > 0 {
		return time.Month(p.Month).String() + " " + strconv.Itoa(p.Year)
	}
	return fmt.Sprintf("Q%d %d", p.Quarter, p.Year)
}

// first is the period's first month counted from year 0, which orders
// periods in time.
func (p Period) first() int {
	if p.Month > 0 {
		return p.Year*12 + p.Month - 1
	}
	return p.Year*12 + (p.Quarter-1)*3
}

// Compare orders periods in time: by their first month, then a quarter
// before the months it holds.
func (p Period) Compare(q Period) int {
	switch a, b := p.first(), q.first(); {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	switch {
	case p.Quarter > 0 && q.Quarter == 0:
		return -1
	case p.Quarter == 0 && q.Quarter > 0:
		return 1
	}
	return p.Month - q.Month
}

// quarterRE matches a quarter written as Q4 2025, 2025-Q4, Q4/2025,
// 2025 Q4 and the like, in any case: a Q and its digit and a four-digit
// year, either first, with at most a space, a dash or a slash between.
var quarterRE = lazyre.New(`(?i)^(?:q([1-4])\s*[-/ ]?\s*(\d{4})|(\d{4})\s*[-/ ]?\s*q([1-4]))$`)

// ParseQuarter reads s as a quarter ("Q4 2025", "2025-Q4", "Q4/2025",
// "2025 Q4", in any case, with space around it); anything else, such as a
// sentence about a quarter, is not one.
func ParseQuarter(s string) (Period, bool) {
	m := quarterRE.Re().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Period{}, false
	}
	q, y := m[1], m[2]
	if q == "" {
		q, y = m[4], m[3]
	}
	qn, _ := strconv.Atoi(q)
	yn, _ := strconv.Atoi(y)
	return Period{Year: yn, Quarter: qn}, true
}

// ParseMonth reads s as a month: "October 2025" (or "Oct 2025") or
// "2025-10", in any case; anything else is not one.
func ParseMonth(s string) (Period, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"January 2006", "Jan 2006", "2006-01"} {
		if t, err := time.Parse(layout, titleCase(s)); err == nil {
			return MonthOf(t), true
		}
	}
	return Period{}, false
}

// titleCase writes the first letter of s in upper case and the rest in
// lower case, as time.Parse wants a month's name.
func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
}

// PeriodOf is the period a source falls in for a temporal field
// (FieldQuarter or FieldMonth): the quarter or month of its parsed Date;
// for a source without a date, its field's value (a model's free text,
// such as northstar's temporalContext.quarter) only when that parses as a
// period (ParseQuarter, ParseMonth). Otherwise the source is undated.
func PeriodOf(c Candidate, field string) (Period, bool) {
	month := field == FieldMonth
	if !c.Date.IsZero() {
		if month {
			return MonthOf(c.Date), true
		}
		return QuarterOf(c.Date), true
	}
	if month {
		return ParseMonth(c.Fields[field])
	}
	return ParseQuarter(c.Fields[field])
}
