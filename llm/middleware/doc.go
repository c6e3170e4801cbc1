// Package middleware wraps an llm.Provider with the behaviour every model call
// in sot shares: bounded retries, concurrency and rate limits, metering with
// budgets, JSON Schema checks, an on-disk response cache and the run journal.
//
// Each wrapper is an llm.Provider around another llm.Provider, so they compose
// in any order. The order sot uses, outermost first, is
//
//	Journal -> Cache -> CheckSchema -> Redact -> Meter -> Router -> Retry -> Limit -> backend
//
// so that a replayed or cached answer costs nothing, both calls of a schema
// repair are metered, a retry's back-off never holds a concurrency slot, and
// the journal, the cache and the schema check only ever see answers whose
// secrets are masked.
package middleware
