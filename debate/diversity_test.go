package debate

import (
	"math"
	"strings"
	"testing"
)

// The seed's distance over bias and focus words scores two ensembles alike
// although one of them is three wordings of one idea; the distance between
// the branch questions the observers asked, against the baseline drawn
// from the debate's own words, tells the two apart.
func TestDiversityTellsEnsemblesApart(t *testing.T) {
	bad := []*Observer{
		{Name: "The Mourner", Bias: "Death is the hidden subject of every line, and grief shapes how the speaker sees it.", Focus: "Mortality, loss, the end of life and the fear behind calm words"},
		{Name: "The Elegist", Bias: "A poem about dying is finally a lament, whatever its courteous surface pretends.", Focus: "Bereavement, dying, the last journey and what the speaker dreads"},
		{Name: "The Thanatologist", Bias: "Every image here rehearses the approach of the grave and the terror it brings.", Focus: "The process of dying, final hours, burial and denial of an ending"},
	}
	good := []*Observer{
		{Name: "The Phenomenologist", Bias: "Meaning begins in how the ride is lived from inside, moment by moment.", Focus: "Pace, attention, the body's sense of time and the reader's own waiting"},
		{Name: "The Materialist Historian", Bias: "The poem is made by a woman whose work and leisure were set by money and class.", Focus: "Labor, domestic duty, property and the economics of an 1860s household"},
		{Name: "The Pragmatist Engineer", Bias: "A reading is worth what it predicts about details the debate has not used.", Focus: "Testable claims, observable details and criteria that separate readings"},
	}
	badQ := []string{
		"Is Death in the carriage a suitor, or a kindly gentleman driving the speaker toward eternity?",
		"Does the carriage ride with Death lead the speaker toward eternity, or is Death only a civil suitor?",
		"Why is Death so kind and civil in the carriage, and does the speaker's ride reach eternity?",
	}
	goodQ := []string{
		"What does the felt slowness of the drive do to the reader's own sense of time passing?",
		"Who paid for the labor and leisure put away here, and what work did a woman in 1860s Amherst give up?",
		"Which detail would let a reader test whether the school, fields and sun mark stages of a life?",
	}
	corpus := testPassage(t).Text + strings.Repeat(" The Literalist reads a carriage ride with a civil suitor named Death. The Symbolist reads a courtship that leads toward eternity and Immortality. The Structuralist reads the journey of a life from school to fields to setting sun.", 3)

	db, dg := ensembleDiversity(bad), ensembleDiversity(good)
	qb, qg := questionDiversity(badQ, corpus, 7), questionDiversity(goodQ, corpus, 7)
	t.Logf("seed jaccard: bad %.3f, good %.3f; content words: bad %.3f, good %.3f", db.Seed.Avg, dg.Seed.Avg, db.Content.Avg, dg.Content.Avg)
	t.Logf("questions: bad %+v; good %+v", *qb, *qg)
	if db.Seed.Avg < 0.85 || dg.Seed.Avg < 0.85 || math.Abs(db.Seed.Avg-dg.Seed.Avg) > 0.1 {
		t.Errorf("the seed's measure was expected to score both ensembles near 0.9: bad %.3f, good %.3f", db.Seed.Avg, dg.Seed.Avg)
	}
	if qg.Distinctness-qb.Distinctness < 0.4 || qb.Distinctness > 0.3 || qg.Distinctness < 0.7 {
		t.Errorf("question distinctness: bad %.3f, good %.3f; want the good ensemble well above the bad one", qb.Distinctness, qg.Distinctness)
	}
	if qb.Distinctness < -1 || qg.Distinctness > 1 {
		t.Errorf("distinctness out of [-1, 1]: %.3f, %.3f", qb.Distinctness, qg.Distinctness)
	}
	if same := questionDiversity([]string{badQ[0], badQ[0]}, corpus, 7); same.Distinctness != -1 {
		t.Errorf("the same question twice: distinctness %.3f, want -1", same.Distinctness)
	}
	if qb.Observed >= qb.Baseline+0.1 {
		t.Errorf("the bad ensemble's questions (%.3f) should sit near or below the baseline (%.3f)", qb.Observed, qb.Baseline)
	}
	// Seeded: the same figures every time.
	if again := questionDiversity(goodQ, corpus, 7); again.Baseline != qg.Baseline {
		t.Errorf("baseline %.3f, then %.3f", qg.Baseline, again.Baseline)
	}
	if questionDiversity(goodQ[:1], corpus, 7) != nil {
		t.Errorf("one question has no diversity")
	}
}

func TestSeedDistanceIsTheSeeds(t *testing.T) {
	a := &Observer{Bias: "Power shapes", Focus: "meaning"}
	b := &Observer{Bias: "power", Focus: "shapes meaning"}
	// The seed runs bias and focus together: "shapesmeaning" and
	// "powershapes" are words of their own.
	// a: {power, shapesmeaning}; b: {powershapes, meaning}.
	if d := SeedDistance(a, b); d != 1 {
		t.Errorf("seed distance %v, want 1", d)
	}
	if d := ContentDistance(a, b); d != 0 {
		t.Errorf("content distance %v, want 0: the same content words", d)
	}
}
