// Package debate is the adapter of sot debate: a dialectical debate over
// one passage (seed 003).
//
// Debaters with fixed interpretive stances (persona.Debater files) argue
// about the passage in rounds, either taking turns (each turn sees the
// passage and every earlier turn, in order) or answering a round at once
// (each sees every earlier round). Observers, each with a bias and blind
// spots (persona.Observer files, or generated ones), then name the question
// the debate missed; near-duplicate questions are merged. Every branch
// question is debated on its own, the branches in lockstep; each branch is
// synthesized and merged back into the reading of the main debate, and one
// final merge gathers what the branches changed.
//
// Every model call goes through an engine.Executor and is journaled in the
// run's directory, so a run killed at any point continues, when the same
// command runs again, without sending a finished call twice. The protocol
// is deterministic: steps are fixed by the plan and by earlier answers,
// never by timing. Calls that no later call reads (the per-turn and
// per-phase summaries, and the next link of the observer-generation chain)
// never get a step of their own: they ride in the Execute of the next step
// that is due anyway.
package debate
