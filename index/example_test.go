package index_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/sotlabs/sot/index"
)

func Example() {
	dir, err := os.MkdirTemp("", "sot-index-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	x, err := index.Open(filepath.Join(dir, "index.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()

	date := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	docs := []index.Doc{
		{ID: "q1-pricing", Path: "q1/pricing.md", Title: "Pricing review", Type: "meeting", Date: date("2025-02-10"),
			Text: "We keep the enterprise discount at 20% for another quarter."},
		{ID: "q3-pricing", Path: "q3/pricing.md", Title: "Pricing review", Type: "meeting", Date: date("2025-08-12"),
			Text: "We drop the enterprise discount to 10% from October."},
		{ID: "q3-hiring", Path: "q3/hiring.md", Title: "Hiring plan", Type: "report", Date: date("2025-08-30"),
			Text: "Two engineers join in September; the discount debate is not ours."},
	}
	changes, err := x.Sync(ctx, docs, index.SyncOptions{Prune: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("added %d, updated %d, unchanged %d, removed %d\n", changes.Added, changes.Updated, changes.Unchanged, changes.Removed)

	// A question in plain words; FTS5 syntax in it would be only words.
	fmt.Println(index.MatchExpression("What's our enterprise pricing discount?"))
	hits, err := x.Search(ctx, "What's our enterprise pricing discount?", index.SearchOptions{Limit: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%-10s relevance %.2f + recency %.3f = %.3f\n", h.Doc.ID, h.Relevance, h.Recency, h.Score())
	}

	// Syncing the same sources again writes nothing.
	changes, err = x.Sync(ctx, docs, index.SyncOptions{Prune: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("added %d, updated %d, unchanged %d, removed %d\n", changes.Added, changes.Updated, changes.Unchanged, changes.Removed)
	// Output:
	// added 3, updated 0, unchanged 0, removed 0
	// "enterprise" OR "pricing" OR "discount"
	// q3-pricing relevance 1.00 + recency 0.093 = 1.093
	// q1-pricing relevance 0.97 + recency 0.047 = 1.021
	// q3-hiring  relevance 0.26 + recency 0.100 = 0.355
	// added 0, updated 0, unchanged 3, removed 0
}
