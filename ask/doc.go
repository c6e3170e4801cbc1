// Package ask is the adapter of sot ask: a question put to a corpus of
// knowledge sources, read by a society of perspective roles.
//
// The pipeline follows northstar's Societies of Thought (seed 000) in
// map-debate-reduce form. Classification, retrieval, diversity-aware
// selection and role assignment run locally (ask/route, index). Then
// three dependent steps call models, every call through an
// engine.Executor: MAP reads each chosen source (or part of one) from its
// role's perspective, all at once; DEBATE, for analytical and comparative
// questions, names the tensions between the answers; REDUCE writes one
// answer, which the program checks sentence by sentence against the
// sources before it is kept (see Check). The lexical conflict detector
// (package conflict) runs over the MAP answers beside the debate.
package ask
