package corpus

import "github.com/sotlabs/sot/internal/secrets"

// mask masks the secrets in every string of src (see package secrets),
// each looked for with the rules for src's file.
func mask(src *Source) {
	m := func(s *string) {
		if *s == "" {
			return
		}
		if spans := secrets.Find(*s, src.Path); len(spans) > 0 {
			*s = secrets.Apply(*s, spans)
		}
	}
	ms := func(list []string) {
		for i := range list {
			m(&list[i])
		}
	}
	for _, s := range []*string{&src.Title, &src.Type, &src.AgentID, &src.Summary, &src.Sentiment, &src.Transcript, &src.Extra, &src.Text} {
		m(s)
	}
	ms(src.KeyPoints)
	ms(src.ActionItems)
	if md := src.Metadata; md != nil {
		m(&md.MeetingType)
		m(&md.SuggestedPerspective)
		ms(md.TopicTags)
		ms(md.KeyEntities.People)
		ms(md.KeyEntities.Projects)
		ms(md.KeyEntities.Organizations)
		ms(md.KeyEntities.Products)
		if tc := md.TemporalContext; tc != nil {
			m(&tc.Quarter)
			m(&tc.Timeframe)
			ms(tc.ExplicitDates)
			ms(tc.Deadlines)
		}
	}
}
