package index

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// topics are the vocabularies the generated sources are written in.
var topics = []struct {
	name  string
	words []string
}{
	{"pricing", strings.Fields("pricing price discount enterprise tier subscription margin revenue churn upsell contract renewal invoice billing seats quote competitor packaging annual monthly")},
	{"hiring", strings.Fields("hiring candidate interview recruiter offer onboarding headcount engineer manager referral salary equity pipeline role backfill intern team culture retention")},
	{"infrastructure", strings.Fields("cluster kubernetes latency outage database migration deploy rollback capacity region failover incident monitoring alert storage network cost autoscaling replica backup")},
	{"security", strings.Fields("security vulnerability audit compliance encryption access credential phishing patch breach firewall policy review certificate token rotation pentest soc2 gdpr risk")},
	{"roadmap", strings.Fields("roadmap milestone feature launch release priority scope deadline backlog sprint estimate dependency beta feedback design prototype spec quarter goal okr")},
	{"support", strings.Fields("customer ticket escalation response satisfaction complaint refund bug workaround documentation training sla queue agent backlog survey nps feedback faq chat")},
	{"finance", strings.Fields("budget forecast spend cash runway board investor expense approval variance accrual audit payroll vendor procurement tax report ebitda quarter plan")},
	{"legal", strings.Fields("contract clause liability indemnity negotiation counsel signature agreement term license dispute trademark privacy regulation filing amendment renewal terms obligation warranty")},
}

// filler is what every source says besides its topics.
var filler = strings.Fields(`meeting team update discussed agreed decided next steps action item follow week
	concern question proposal option plan status review call note summary group project people time
	issue change work need want think said asked suggested noted raised mentioned point idea approach`)

var sourceTypes = []string{"meeting", "report", "document", "transcript"}

// generate makes n sources deterministically: each has a main topic and a
// second one, a title from its main topic, 150 to 400 words of text (about
// 60% main topic, 15% second topic, the rest filler and a project code name
// shared by about 20 sources), a type, and a date in one of 16 quarters
// from 2022 to 2025.
func generate(n int) []Doc {
	rng := rand.New(rand.NewPCG(2026, 13))
	pick := func(ws []string) string { return ws[rng.IntN(len(ws))] }
	start := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	docs := make([]Doc, n)
	for i := range docs {
		main, second := topics[rng.IntN(len(topics))], topics[rng.IntN(len(topics))]
		code := fmt.Sprintf("orion%d", rng.IntN(n/20+1))
		date := start.AddDate(0, 0, rng.IntN(4*365))
		var text strings.Builder
		for w := range 150 + rng.IntN(251) {
			if w > 0 {
				text.WriteByte(' ')
			}
			switch r := rng.IntN(100); {
			case r < 60:
				text.WriteString(pick(main.words))
			case r < 75:
				text.WriteString(pick(second.words))
			case r < 77:
				text.WriteString(code)
			default:
				text.WriteString(pick(filler))
			}
		}
		typ := sourceTypes[rng.IntN(len(sourceTypes))]
		meta, _ := json.Marshal(map[string]any{
			"meetingType": typ,
			"quarter":     fmt.Sprintf("Q%d %d", int(date.Month()-1)/3+1, date.Year()),
			"topicTags":   []string{main.name, second.name},
		})
		docs[i] = Doc{
			ID:    fmt.Sprintf("src-%05d", i),
			Path:  fmt.Sprintf("corpus/%s/%05d.md", main.name, i),
			Title: fmt.Sprintf("%s %s: %s and %s", strings.ToUpper(main.name[:1])+main.name[1:], typ, pick(main.words), pick(main.words)),
			Type:  typ,
			Date:  date,
			Text:  text.String(),
			Meta:  meta,
		}
	}
	return docs
}

// BenchmarkSearch10k builds an index of 10,000 generated sources once,
// reporting the time that took (build-s) and the database's size (db-MB),
// then reopens it and times Search for three kinds of query, with the limit sot ask uses
// for its candidates (three times --max-sources' default 10). matches is
// how many sources the query matches, all of which are ranked.
func BenchmarkSearch10k(b *testing.B) {
	ctx := context.Background()
	docs := generate(10_000)
	path := filepath.Join(b.TempDir(), "index.db")
	x, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	c, err := x.Sync(ctx, docs, SyncOptions{Prune: true})
	build := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if c.Added != len(docs) {
		b.Fatalf("added %d of %d", c.Added, len(docs))
	}
	// Searches run on an index an earlier sot command built: closing it
	// checkpoints the WAL into the database file.
	if err := x.Close(); err != nil {
		b.Fatal(err)
	}
	size := 0.0
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			size += float64(fi.Size()) / (1 << 20)
		}
	}
	if x, err = Open(path); err != nil {
		b.Fatal(err)
	}
	defer x.Close()

	for _, q := range []struct{ name, query string }{
		{"question", "What did we decide about the discount for enterprise renewal contracts?"},
		{"rare", "orion42"},
		{"common", "team meeting update"},
	} {
		b.Run(q.name, func(b *testing.B) {
			var matches int
			if err := x.r.QueryRowContext(ctx, "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?", MatchExpression(q.query)).Scan(&matches); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				hits, err := x.Search(ctx, q.query, SearchOptions{Limit: 30})
				if err != nil {
					b.Fatal(err)
				}
				if len(hits) == 0 {
					b.Fatal("no hits")
				}
			}
			b.ReportMetric(float64(matches), "matches")
			b.ReportMetric(build.Seconds(), "build-s")
			b.ReportMetric(size, "db-MB")
		})
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := generate(50), generate(50)
	for i := range a {
		if a[i].Text != b[i].Text || !a[i].Date.Equal(b[i].Date) || a[i].Title != b[i].Title {
			t.Fatalf("source %d differs between two runs", i)
		}
	}
	quarters := map[string]bool{}
	for _, d := range generate(2000) {
		quarters[fmt.Sprintf("%d-%d", d.Date.Year(), (int(d.Date.Month())-1)/3)] = true
	}
	if len(quarters) != 16 {
		t.Errorf("dates span %d quarters, want 16", len(quarters))
	}
}
