package report

import (
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// fnd builds a specialist finding for fixtures.
func fnd(id, specialist, lens string, sev finding.Severity, conf finding.Confidence, claim, grounds string, loc finding.Location) finding.Finding {
	return finding.Finding{
		ID: id, Specialist: specialist, Lens: lens, Claim: claim, Severity: sev, Confidence: conf,
		Category: "general", Grounds: grounds, Location: loc,
		Warrant:      "The cited lines show the behaviour directly.",
		Rebuttal:     "A caller that already guarantees the precondition.",
		Verification: "Add a test that exercises the path.",
		Model:        "openai:gpt-4.1",
	}
}

func loc(file string, start, end int) finding.Location {
	return finding.Location{File: file, StartLine: start, EndLine: end}
}

// Specialist findings the fixture's items are merged from.
var (
	fTokenCompare = fnd("security.red-team.1", "security", "red-team", finding.MustFix, finding.High,
		"Session tokens are compared with ==, which leaks timing information.",
		"`internal/auth/session.go:88-91` compares the presented token with the stored one using ==.",
		loc("internal/auth/session.go", 88, 91))
	fTokenCompare2 = fnd("correctness.1", "correctness", "", finding.MustFix, finding.Medium,
		"Token comparison is not constant-time.",
		"session.go:88 uses a plain string comparison on secret material.",
		loc("internal/auth/session.go", 88, 88))
	fRetry = fnd("performance.premortem.1", "performance", "premortem", finding.MustFix, finding.Medium,
		"The retry loop never gives up when the upstream keeps answering 503.",
		"retry.go:40-57 loops while status == 503 with no attempt limit.",
		loc("internal/client/retry.go", 40, 57))
	fRetry2 = fnd("correctness.2", "correctness", "", finding.ShouldFix, finding.Medium,
		"Retries have no upper bound.",
		"The loop condition at retry.go:44 only checks the status code.",
		loc("internal/client/retry.go", 44, 44))
	fMigration = fnd("correctness.c2.3", "correctness", "", finding.MustFix, finding.High,
		"The migration drops the old column before readers stop using it.",
		"The rollout plan removes `users.email_old` in step 1 while the reader switch happens in step 3.",
		finding.Location{Section: "Rollout plan"})
	fCacheKey = fnd("security.premortem.3", "security", "premortem", finding.ShouldFix, finding.Medium,
		"The cache key omits the tenant id, so one tenant can read another's entries.",
		"key.go:12 builds the key from the path alone.",
		loc("internal/cache/key.go", 12, 0))
	fCacheKeyNo = fnd("security.red-team.2", "security", "red-team", finding.Consider, finding.Low,
		"The cache is per-tenant already; the key does not need the tenant id.",
		"cache.New is called once per tenant in server.go:30.",
		loc("internal/server/server.go", 30, 0))
	fBuffer = fnd("performance.2", "performance", "", finding.ShouldFix, finding.High,
		"Each request allocates a fresh 64 KiB buffer; pooling would cut GC pressure.",
		"handler.go:120-131 calls make([]byte, 64<<10) per request.",
		loc("internal/server/handler.go", 120, 131))
	fBufferSec = fnd("security.premortem.4", "security", "premortem", finding.Consider, finding.Medium,
		"Pooled buffers could leak one request's data into the next.",
		"handler.go:125 writes partial bodies into the buffer without clearing it.",
		loc("internal/server/handler.go", 125, 0))
	fLogURL = fnd("security.4", "security", "", finding.Consider, finding.Low,
		"The access log records the full request URL, query string included.",
		"log.go:5 logs r.URL.String().",
		loc("internal/server/log.go", 5, 0))
	fDocName = fnd("correctness.4", "correctness", "", finding.Consider, finding.Low,
		"The design notes call the helper by its old name.",
		"The notes still say `retryForever`.",
		loc("docs/design notes.md", 0, 0))
	fJWT = fnd("security.5", "security", "", finding.ShouldFix, finding.Medium,
		"The JWT library in go.mod is two major versions behind.",
		"go.mod pins github.com/example/jwt v1.4.0; v3 fixes algorithm confusion.",
		loc("go.mod", 7, 0))
)

func init() {
	// The leads of S1 and S2 carry their own reasoning and checks, which
	// the synthesis repeats next to the items.
	fTokenCompare.Warrant = "== returns at the first differing byte, so the response time tells an attacker how much of a guessed token matched."
	fTokenCompare.Verification = "Replace == with subtle.ConstantTimeCompare and run the session tests."
	fRetry.Verification = "Point the client at a server that always answers 503.\nCheck that the call returns an error after the configured attempts."
}

func fixture(debate bool) *synthesis.Result {
	cacheDispute := &synthesis.Dispute{
		ID: "D1", Kind: synthesis.Factual,
		FindingIDs: []string{"security.premortem.3", "security.red-team.2"},
		Positions: []synthesis.Position{
			{Source: "security/premortem", FindingID: "security.premortem.3", Summary: "The key must include the tenant id."},
			{Source: "security/red-team", FindingID: "security.red-team.2", Summary: "Caches are per tenant, so the key is safe."},
		},
		Resolution: "Both sides cite code; which caller constructs the cache decides it.",
		Unresolved: true, HighSignal: true,
	}
	bufferTradeOff := synthesis.Dispute{
		ID: "D2", Kind: synthesis.TradeOff,
		FindingIDs: []string{"performance.2", "security.premortem.4"},
		Positions: []synthesis.Position{
			{Source: "performance", FindingID: "performance.2", Summary: "Pool the buffers to cut allocation."},
			{Source: "security/premortem", FindingID: "security.premortem.4", Summary: "Pooling risks leaking data between requests."},
		},
		Axis:           "Performance vs. Security (request isolation)",
		Options:        []string{"Pool buffers and clear them before reuse", "Keep per-request buffers"},
		Recommendation: "Keep per-request buffers: Security ranks above Performance.",
		Resolution:     "Decided by the priority hierarchy (non-interactive run).",
	}
	res := &synthesis.Result{
		RunID:       "20260101-120000-ab12",
		Mode:        "parallel",
		Type:        "diff",
		Coordinates: "main...feature/session-cache",
		Specialists: []string{"correctness", "performance", "security"},
		Models: map[string]string{
			"security":    "anthropic:claude-sonnet-4-5",
			"performance": "openai:gpt-4.1",
			"correctness": "openai:gpt-4.1",
		},
		Context:              "backend",
		SelectionRationale:   "adaptive:3 picked the specialists for auth, caching and HTTP client changes.",
		Perspectives:         []string{"premortem", "red-team"},
		PerspectiveCap:       2,
		PerspectiveMode:      "auto",
		PerspectiveRationale: "The change touches authentication (red-team) and retry behaviour with operational impact (premortem).",
		PerspectiveMap: map[string][]string{
			"premortem": {"performance", "security"},
			"red-team":  {"security"},
		},
		PerspectivesSkipped: []string{"retrospective: over the perspective cap of 2"},
		Items: []synthesis.Item{
			{ID: "S1", Claim: "Session tokens are compared in non-constant time.", Severity: finding.MustFix, Confidence: finding.High,
				Grounding: synthesis.Direct, Score: 1.6, Location: loc("internal/auth/session.go", 88, 91), Category: "security",
				Sources: []finding.Finding{fTokenCompare, fTokenCompare2}, Lead: "security.red-team.1"},
			{ID: "S2", Claim: "The retry loop has no attempt limit.", Severity: finding.MustFix, Confidence: finding.Medium,
				Grounding: synthesis.Inferential, Score: 0.9, Location: loc("internal/client/retry.go", 40, 57), Category: "reliability",
				Sources: []finding.Finding{fRetry, fRetry2}, Lead: "performance.premortem.1",
				Chain: "1. retry.go:44 loops while the status is 503.\n2. Nothing counts attempts or checks the context.\n3. A permanently failing upstream therefore pins a goroutine forever."},
			{ID: "S3", Claim: "The migration drops the old column before readers stop using it.", Severity: finding.MustFix, Confidence: finding.High,
				Grounding: synthesis.Direct, Score: 1, Location: finding.Location{Section: "Rollout plan"}, Category: "correctness",
				Sources: []finding.Finding{fMigration}, Lead: "correctness.c2.3"},
			{ID: "S4", Claim: "The cache key may let one tenant read another's entries.", Severity: finding.ShouldFix, Confidence: finding.Medium,
				Grounding: synthesis.Direct, Score: 0.6, Location: loc("internal/cache/key.go", 12, 0), Category: "security",
				Sources: []finding.Finding{fCacheKey, fCacheKeyNo}, Lead: "security.premortem.3", Dispute: cacheDispute},
			{ID: "S5", Claim: "Each request allocates a fresh 64 KiB buffer.", Severity: finding.ShouldFix, Confidence: finding.High,
				Grounding: synthesis.Direct, Score: 1, Location: loc("internal/server/handler.go", 120, 131), Category: "performance",
				Sources: []finding.Finding{fBuffer, fBufferSec}, Lead: "performance.2", Dispute: &bufferTradeOff,
				Decision: &synthesis.Decision{By: "priority hierarchy", Choice: "Keep per-request buffers",
					Reason: "Security ranks above Performance.", Flagged: true}},
			{ID: "S6", Claim: "The access log records full request URLs, query strings included.", Severity: finding.Consider, Confidence: finding.Low,
				Grounding: synthesis.Direct, Score: 0.3, Location: loc("internal/server/log.go", 5, 0), Category: "security",
				Sources: []finding.Finding{fLogURL}, Lead: "security.4",
				Outcome: &synthesis.Outcome{Status: "deferred", Reason: "Tracked separately."}},
			{ID: "S7", Claim: "The design notes call the helper by its old name.", Severity: finding.Consider, Confidence: finding.Low,
				Grounding: synthesis.Direct, Score: 0.3, Location: loc("docs/design notes.md", 0, 0), Category: "maintainability",
				Sources: []finding.Finding{fDocName}, Lead: "correctness.4"},
		},
		Observations: []synthesis.Item{
			{ID: "S8", Claim: "The JWT library is two major versions behind.", Severity: finding.ShouldFix, Confidence: finding.Medium,
				Grounding: synthesis.Contextual, Score: 0.4, Location: loc("go.mod", 7, 0), Category: "security",
				Sources: []finding.Finding{fJWT}, Lead: "security.5"},
		},
		TradeOffs: []synthesis.Dispute{bufferTradeOff},
		Dissent:   []synthesis.Dispute{*cacheDispute, bufferTradeOff},
		Trace: []synthesis.TraceEntry{
			{ItemID: "S1", Sources: []string{"security.red-team.1", "correctness.1"}, Grounding: synthesis.Direct, Resolution: "merged: same lines, compatible claims"},
			{ItemID: "S2", Sources: []string{"performance.premortem.1", "correctness.2"}, Grounding: synthesis.Inferential, Resolution: "merged; severity from the higher-scored source"},
			{ItemID: "S3", Sources: []string{"correctness.c2.3"}, Grounding: synthesis.Direct},
			{ItemID: "S4", Sources: []string{"security.premortem.3", "security.red-team.2"}, Grounding: synthesis.Direct, Resolution: "factual dispute D1, unresolved"},
			{ItemID: "S5", Sources: []string{"performance.2", "security.premortem.4"}, Grounding: synthesis.Direct, Resolution: "trade-off D2, priority hierarchy"},
			{ItemID: "S6", Sources: []string{"security.4"}, Grounding: synthesis.Direct},
			{ItemID: "S7", Sources: []string{"correctness.4"}, Grounding: synthesis.Direct},
			{ItemID: "S8", Sources: []string{"security.5"}, Grounding: synthesis.Contextual, Resolution: "demoted to observations: beyond the diff"},
		},
		Narrative:  "Two must-fix problems dominate: a timing leak in token comparison (S1) and an unbounded retry loop (S2).\n\nThe two security perspectives disagree about the cache key (S4); that dispute is unresolved.",
		Seed:       20260101,
		InputOrder: []string{"performance/premortem", "security/red-team", "correctness", "security/premortem", "performance", "security"},
		Rejected:   []string{"item \"Add rate limiting\" cites no finding; the triage lead may not add findings"},
		Reviewed: []string{"internal/auth/session.go", "internal/cache/key.go", "internal/client/retry.go",
			"internal/server/handler.go", "internal/server/log.go", "docs/design notes.md"},
		Skipped: []synthesis.SkippedFile{
			{Path: "vendor/github.com/example/jwt/jwt.go", Reason: "vendored"},
			{Path: "assets/logo.png", Reason: "binary"},
			{Path: "api/service.pb.go", Reason: "generated"},
		},
		Chunks:  2,
		Missing: []synthesis.Missing{{Specialist: "performance", Lens: "premortem", Chunk: 2, Files: []string{"internal/client/retry.go"}, Error: "openai: 429 Too Many Requests after 4 retries"}},
		Notes:   []string{"Model openai:o3 is unavailable for performance; used the session default openai:gpt-4.1."},
		Usage: synthesis.Usage{Calls: 11, InputTokens: 184233, CachedInputTokens: 151002, OutputTokens: 9120,
			CostUSD: 0.41273, WallMS: 48213, Replayed: 2, NewCalls: 9, NewCostUSD: 0.33791},
	}
	if debate {
		res.Mode = "debate"
		res.Rounds = 3
		res.Threads = []synthesis.Thread{
			{ID: "T1", FindingID: "security.red-team.1", Claim: fTokenCompare.Claim, Source: "security/red-team", State: "agreed",
				Resolution: "evidence",
				Rounds: []synthesis.ThreadRound{
					{Round: 1, State: "open", Responses: []synthesis.Response{{Source: "security/red-team", Stance: "raises", Argument: "session.go:88 compares secrets with ==."}}},
					{Round: 2, State: "agreed", Responses: []synthesis.Response{{Source: "correctness", Stance: "supports", Argument: "Confirmed; subtle.ConstantTimeCompare fixes it."}}},
				}},
			{ID: "T2", FindingID: "security.premortem.3", Claim: fCacheKey.Claim, Source: "security/premortem", State: "contested",
				Resolution: "budget exhaustion",
				Rounds: []synthesis.ThreadRound{
					{Round: 1, State: "open", Responses: []synthesis.Response{{Source: "security/premortem", Stance: "raises", Argument: "key.go:12 has no tenant component."}}},
					{Round: 2, State: "contested", Responses: []synthesis.Response{
						{Source: "security/red-team", Stance: "challenges", Argument: "server.go:30 builds one cache per tenant.\nSo keys never collide across tenants."},
						{Source: "security/premortem", Stance: "maintains", Argument: "The admin endpoint shares one cache across tenants."},
					}},
					{Round: 3, State: "contested"},
					{Continuation: 1, Called: []string{"security/premortem", "security/red-team"}, State: "contested", Responses: []synthesis.Response{
						{Source: "security/red-team", Stance: "disagree", Argument: "The admin endpoint is behind the tenant middleware."},
					}},
				}},
			{ID: "T3", FindingID: "performance.2", Claim: fBuffer.Claim, Source: "performance", State: "trade-off",
				Resolution: "conservative default (priority hierarchy)",
				Rounds: []synthesis.ThreadRound{
					{Round: 1, State: "open", Responses: []synthesis.Response{{Source: "performance", Stance: "raises", Argument: "64 KiB per request dominates allocation."}}},
					{Round: 2, State: "trade-off", Responses: []synthesis.Response{{Source: "security/premortem", Stance: "challenges", Argument: "Pooling without clearing leaks data."}}},
				}},
		}
	}
	return res
}

// specialistReport is security's red-team review, findings deliberately
// out of severity order.
func specialistReport() finding.Report {
	return finding.Report{
		Specialist: "security", Lens: "red-team", Model: "anthropic:claude-sonnet-4-5",
		Findings: []finding.Finding{fCacheKeyNo, fTokenCompare},
		Examined: "Read every changed handler and the session store.\nTraced the token from the cookie to the comparison.",
	}
}
