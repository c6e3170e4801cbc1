// Package corpusgen writes a generated corpus of notes for the benchmarks
// and tests that need many sources and no large fixtures.
//
// The notes are what a team's knowledge base holds: meeting notes,
// transcripts, reports and documents, in Markdown with the YAML
// frontmatter sot ask reads (title, source_type, date), spread over five
// years, with named attendees and speakers. Each note is about one of a
// handful of decisions, and the notes disagree about them: one says the
// team decided to delay the billing migration to Q4, another that the
// team agreed to ship it in Q3, and the people who object say so with the
// words the lexical conflict detector counts ("but", "however", "risk").
// Half of the notes that are about something else mention the billing
// migration in passing too, so a question about it ([Question]) finds
// relevant sources at every size.
//
// The same n and seed always write the same files with the same bytes.
package corpusgen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Question is a question every generated corpus answers, and on which its
// notes disagree: the billing migration's date.
const Question = "How do the teams' positions on the billing migration differ, and why?"

// Topic is the decision every corpus disagrees about, as the notes spell
// it: every note about it holds these words in its sentences about it.
const Topic = "billing migration"

// Write writes n notes into dir, creating it and a directory per year
// under it, as Markdown files with YAML frontmatter. The same n and seed
// write the same files, byte for byte.
func Write(dir string, n int, seed uint64) error {
	if n < 0 {
		return fmt.Errorf("corpusgen: %d notes: want 0 or more", n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x50746f72))
	made := map[string]bool{}
	for i := range n {
		note := generate(rng, i)
		sub := filepath.Join(dir, note.date.Format("2006"))
		if !made[sub] {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return fmt.Errorf("corpusgen: %w", err)
			}
			made[sub] = true
		}
		if err := os.WriteFile(filepath.Join(sub, note.name), []byte(note.text), 0o644); err != nil {
			return fmt.Errorf("corpusgen: %w", err)
		}
	}
	return nil
}

// note is one generated file: its name and its bytes.
type note struct {
	name string
	date time.Time
	text string
}

// decision is something the teams decided, and decided again otherwise:
// each note about it takes one of its two positions.
type decision struct {
	slug  string
	title string
	// positions are the two sides; each is a sentence with %s for who
	// decided it ("We", "The finance team").
	positions [2]string
	// reasons back each side, one picked at random.
	reasons [2][]string
	// objections are what someone who disagrees says, with %s for the
	// name; they hold conflict markers.
	objections []string
	// support is what someone who agrees says, with %s for the name; it
	// holds agreement markers.
	support []string
	// words are the decision's vocabulary, for the rest of the note.
	words []string
}

var decisions = []decision{
	{
		slug: "billing-migration", title: "Billing migration",
		positions: [2]string{
			"%s decided to delay the billing migration to Q4.",
			"%s agreed to ship the billing migration in Q3.",
		},
		reasons: [2][]string{{
			"The billing migration cannot start while the vendor contract is still under legal review.",
			"The billing migration needs three more engineers than the plan gives it.",
			"Finance wants the billing migration after the renewal quarter closes.",
		}, {
			"The billing migration pilot already moved two thousand customers without a failed invoice.",
			"The old billing license ends in October, and renewing it for the billing migration would double its cost.",
			"Support is ready for the billing migration and has trained every agent on the new invoices.",
		}},
		objections: []string{
			"%s disagreed: the billing migration date is a risk to the renewal quarter, but nobody owns that risk.",
			"%s raised a concern: however the billing migration is scheduled, the data backfill is the real problem.",
			"%s said the billing migration plan differs from what finance signed off, and asked to slip it instead.",
		},
		support: []string{
			"%s confirms the billing migration plan and supports the date as well.",
			"%s agrees; the billing migration schedule is consistent with the vendor timeline.",
		},
		words: strings.Fields("invoices ledger vendor contract license backfill customers pilot cutover reconciliation tax refunds subscription"),
	},
	{
		slug: "enterprise-pricing", title: "Enterprise pricing",
		positions: [2]string{
			"%s decided to raise enterprise prices by ten percent in January.",
			"%s agreed to keep enterprise prices flat for another year.",
		},
		reasons: [2][]string{
			{"Margins on the enterprise tier fell for three quarters in a row.", "Competitors raised their enterprise prices last spring."},
			{"Churn in the enterprise tier doubled after the last price change.", "Sales needs a stable price list for the renewal season."},
		},
		objections: []string{
			"%s disagreed: a price change now is a risk to renewals, but the board wants the margin.",
			"%s said the pricing proposal conflicts with the discounts sales already promised.",
		},
		support: []string{"%s supports the pricing decision and confirms the numbers."},
		words:   strings.Fields("pricing discount tier margin renewal churn quote seats upsell packaging competitor"),
	},
	{
		slug: "platform-hiring", title: "Platform hiring",
		positions: [2]string{
			"%s decided to freeze hiring for the platform team until the budget review.",
			"%s agreed to hire two more platform engineers this quarter.",
		},
		reasons: [2][]string{
			{"The budget review found spending above the forecast.", "The runway estimate dropped after the last board meeting."},
			{"The on-call rotation has burned out two engineers already.", "The platform backlog has grown for six sprints."},
		},
		objections: []string{
			"%s disagreed: freezing hiring is a risk to the on-call rotation, but the budget is the budget.",
			"%s said the hiring plan conflicts with the headcount finance approved.",
		},
		support: []string{"%s agrees with the hiring decision and supports it."},
		words:   strings.Fields("hiring headcount recruiter candidates interviews onboarding backlog rotation budget offers"),
	},
	{
		slug: "analytics-cluster", title: "Analytics cluster",
		positions: [2]string{
			"%s decided to move the analytics cluster to the cloud by summer.",
			"%s agreed to keep the analytics cluster on premises for two more years.",
		},
		reasons: [2][]string{
			{"The hardware lease ends in June.", "The cloud credits cover the first year."},
			{"Egress costs would eat the savings.", "The data residency rules are not settled yet."},
		},
		objections: []string{
			"%s disagreed: the move is a risk to the quarterly reports, but the lease forces a choice.",
			"%s raised the issue of egress costs, which the plan ignores.",
		},
		support: []string{"%s confirms the cluster plan is consistent with the security review."},
		words:   strings.Fields("cluster storage egress latency replicas backups region capacity dashboards queries lease"),
	},
	{
		slug: "first-line-support", title: "First-line support",
		positions: [2]string{
			"%s decided to outsource first-line support to a partner in the spring.",
			"%s agreed to keep first-line support in-house.",
		},
		reasons: [2][]string{
			{"Ticket volume grew faster than the support team.", "The partner covers nights and weekends."},
			{"Satisfaction scores dropped the last time support was outsourced.", "The product changes too fast for a partner to keep up."},
		},
		objections: []string{
			"%s disagreed: outsourcing is a risk to satisfaction scores, but the queue keeps growing.",
			"%s said the partner contract differs from what legal reviewed.",
		},
		support: []string{"%s supports the support plan and confirms the staffing numbers."},
		words:   strings.Fields("tickets queue escalation satisfaction partner training macros backlog refunds chat survey"),
	},
	{
		slug: "mobile-app", title: "Mobile app",
		positions: [2]string{
			"%s decided to rewrite the mobile app in a cross-platform framework.",
			"%s agreed to keep the two native mobile apps.",
		},
		reasons: [2][]string{
			{"Two codebases double the work of every feature.", "The mobile team lost its only iOS engineer."},
			{"The native apps have the best store ratings we ever had.", "A rewrite would freeze features for two quarters."},
		},
		objections: []string{
			"%s disagreed: a rewrite is a risk to the store ratings, but two codebases are a problem too.",
			"%s said the rewrite estimate conflicts with the roadmap.",
		},
		support: []string{"%s agrees with the mobile decision; the estimate matches the roadmap as well."},
		words:   strings.Fields("mobile release store ratings crashes framework codebase features screens designers testers"),
	},
	{
		slug: "office-policy", title: "Office policy",
		positions: [2]string{
			"%s decided that everyone returns to the office three days a week.",
			"%s agreed to stay remote-first.",
		},
		reasons: [2][]string{
			{"Onboarding went slower for people who never met the team.", "The office lease runs for four more years."},
			{"Half of the engineers live more than two hours away.", "Attrition fell after the company went remote."},
		},
		objections: []string{
			"%s disagreed: the policy is a risk to retention, but the lease is a cost either way.",
			"%s said the office plan conflicts with the offers made last year.",
		},
		support: []string{"%s supports the office decision and confirms the survey results."},
		words:   strings.Fields("office desks commute survey attrition onboarding lease badges meetings calendar kitchen"),
	},
	{
		slug: "security-keys", title: "Hardware keys",
		positions: [2]string{
			"%s decided to require hardware security keys for every employee.",
			"%s agreed to keep authenticator apps and skip hardware keys.",
		},
		reasons: [2][]string{
			{"The phishing test caught one employee in five.", "The audit asked for phishing-resistant logins."},
			{"Shipping keys to every contractor takes months.", "Authenticator apps passed the last audit."},
		},
		objections: []string{
			"%s disagreed: the rollout is a risk to contractors' access, but the audit is firm.",
			"%s said the key plan conflicts with the contractor agreements.",
		},
		support: []string{"%s confirms the audit supports the decision."},
		words:   strings.Fields("phishing audit keys logins contractors rollout policy access devices compliance laptops"),
	},
}

// people are the names that attend, speak, object and agree.
var people = []string{
	"Ana Ruiz", "Bruno Costa", "Chen Wei", "Dana Levi", "Emeka Obi", "Farah Haddad",
	"Goran Petrovic", "Hana Sato", "Ivo Novak", "Jun Park", "Kofi Mensah", "Lena Berg",
	"Mateo Silva", "Nadia Rahman", "Omar Aziz", "Priya Nair", "Quinn Harper", "Rosa Marin",
}

// teams decide; "We" is a team too.
var teams = []string{"We", "The finance team", "The platform team", "The support team", "The sales team", "The leadership team"}

// types are the source types, and how a note of each type reads.
var types = []string{"meeting", "transcript", "report", "document"}

// filler is the vocabulary of a note's other sentences: words of no
// decision, and none of the detector's markers.
var filler = strings.Fields(`agenda update status weekly monthly quarter roadmap numbers follow-up
	owner timeline draft review notes slides dashboard metrics estimate plan summary customers
	release sprint demo feedback priorities milestones schedule team partners forecast`)

// start is the first date a note can have; notes span five years.
var start = time.Date(2021, 1, 4, 0, 0, 0, 0, time.UTC)

// generate makes note i.
func generate(rng *rand.Rand, i int) note {
	d := &decisions[rng.IntN(len(decisions))]
	side := rng.IntN(2)
	date := start.AddDate(0, 0, rng.IntN(5*365))
	typ := types[rng.IntN(len(types))]
	attendees := pickPeople(rng, 3+rng.IntN(4))
	// Every other note that is about something else mentions the billing
	// migration in passing, taking a side of it too.
	var aside *decision
	if d != &decisions[0] && i%2 == 0 {
		aside = &decisions[0]
	}

	title := fmt.Sprintf("%s %s %d, %s", d.title, typ, i+1, date.Format("2 January 2006"))
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntitle: %s\nsource_type: %s\ndate: %s\nattendees: [%s]\n---\n\n", title, typ, date.Format(time.DateOnly), strings.Join(attendees, ", "))
	fmt.Fprintf(&b, "# %s\n\n", title)
	switch typ {
	case "transcript":
		writeTranscript(&b, rng, d, side, aside, attendees)
	default:
		writeNotes(&b, rng, d, side, aside, attendees, typ)
	}
	name := fmt.Sprintf("%s-%s-%05d.md", date.Format(time.DateOnly), d.slug, i)
	return note{name: name, date: date, text: b.String()}
}

// writeNotes writes meeting notes, a report or a document: who was there,
// what was decided and why, who objected, and the rest in prose.
func writeNotes(b *strings.Builder, rng *rand.Rand, d *decision, side int, aside *decision, attendees []string, typ string) {
	if typ == "meeting" {
		fmt.Fprintf(b, "Attendees: %s\n\n", strings.Join(attendees, ", "))
	} else {
		fmt.Fprintf(b, "Author: %s\n\n", attendees[0])
	}
	b.WriteString("## Summary\n\n")
	b.WriteString(prose(rng, d.words, 2+rng.IntN(3)) + "\n\n")
	b.WriteString("## Decision\n\n")
	b.WriteString(stance(rng, d, side, attendees) + "\n\n")
	b.WriteString("## Discussion\n\n")
	for range 2 + rng.IntN(3) {
		b.WriteString(prose(rng, d.words, 3+rng.IntN(3)) + "\n\n")
	}
	if aside != nil {
		b.WriteString("## Other business\n\n")
		b.WriteString(stance(rng, aside, rng.IntN(2), attendees) + "\n\n")
	}
	b.WriteString("## Action items\n\n")
	for range 1 + rng.IntN(3) {
		fmt.Fprintf(b, "- %s: %s.\n", attendees[rng.IntN(len(attendees))], strings.TrimSuffix(sentence(rng, d.words), "."))
	}
}

// writeTranscript writes a transcript: speakers' turns, the decision and
// the objection among them.
func writeTranscript(b *strings.Builder, rng *rand.Rand, d *decision, side int, aside *decision, attendees []string) {
	b.WriteString("## Transcript\n\n")
	turn := func(who, text string) { fmt.Fprintf(b, "**%s:** %s\n\n", who, text) }
	speaker := func() string { return attendees[rng.IntN(len(attendees))] }
	for range 1 + rng.IntN(3) {
		turn(speaker(), prose(rng, d.words, 2))
	}
	turn(speaker(), fmt.Sprintf(d.positions[side], "We")+" "+d.reasons[side][rng.IntN(len(d.reasons[side]))])
	turn(speaker(), reaction(rng, d, speaker()))
	for range 1 + rng.IntN(3) {
		turn(speaker(), prose(rng, d.words, 2))
	}
	if aside != nil {
		s := rng.IntN(2)
		turn(speaker(), fmt.Sprintf(aside.positions[s], "We")+" "+aside.reasons[s][rng.IntN(len(aside.reasons[s]))])
	}
}

// stance is a paragraph taking a side of d: the decision, its reason, and
// an attendee's objection or support.
func stance(rng *rand.Rand, d *decision, side int, attendees []string) string {
	who := teams[rng.IntN(len(teams))]
	return fmt.Sprintf(d.positions[side], who) + " " + d.reasons[side][rng.IntN(len(d.reasons[side]))] + " " +
		reaction(rng, d, attendees[rng.IntN(len(attendees))])
}

// reaction is what someone says of a decision: two times in three an
// objection, else support.
func reaction(rng *rand.Rand, d *decision, who string) string {
	if rng.IntN(3) < 2 {
		return fmt.Sprintf(d.objections[rng.IntN(len(d.objections))], who)
	}
	return fmt.Sprintf(d.support[rng.IntN(len(d.support))], who)
}

// prose is n sentences of a topic's words and filler.
func prose(rng *rand.Rand, words []string, n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = sentence(rng, words)
	}
	return strings.Join(s, " ")
}

// sentence is six to fourteen words, about half of them the topic's, with
// a capital and a period.
func sentence(rng *rand.Rand, words []string) string {
	n := 6 + rng.IntN(9)
	w := make([]string, n)
	for i := range w {
		if rng.IntN(2) == 0 {
			w[i] = words[rng.IntN(len(words))]
		} else {
			w[i] = filler[rng.IntN(len(filler))]
		}
	}
	w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	return strings.Join(w, " ") + "."
}

// pickPeople picks n different people.
func pickPeople(rng *rand.Rand, n int) []string {
	idx := rng.Perm(len(people))[:n]
	out := make([]string, n)
	for i, j := range idx {
		out[i] = people[j]
	}
	return out
}
