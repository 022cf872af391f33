// Package lab is ragroute's research tooling: it measures choices of the
// route on a corpus and a question set, with the same embedder throughout,
// and scores them with eval's scorers. None of it runs in the product (the
// live scorer is eval/live).
//
// Retrieval (`make eval`, run.go): ablations of chunking and search —
// fixed-size chunks with dense search as the baseline (fixed.go),
// heading-tree chunks with dense and hybrid search, and the route's whole
// search body with each of its rules switched on in turn (configs.go, each
// row a route config the assembly builds; route-v1's screen-first order
// is the lab's own step, screenfirst.go) —
// over rankings fetched once per question (listindex.go); the curves of
// the not-found signals (floors.go), a sweep of the fusion weights and the
// dominance (weights.go), the route body with a cross-encoder rescoring
// its top 10/20/30 (rerank.go), every choice also made by 2-fold
// cross-validation and scored held out (crossval.go), the misses explained
// (misses.go), and another system's results (`make compare`, peer.go) by
// the same scorer. Vectors are cached between runs (vectorcache.go).
//
// Answers (`make eval-answers`, answers*.go): each question runs as a
// whole turn through the route's own turn (turn.Engine, as
// internal/assembly builds it for serve: one embedder client shared by
// the questions and the grounding check) with a real chat model, once
// per answer mode; the turns' events are scored by eval's turn scorer, and
// the grounding threshold's curve is measured on sentences cut as the
// route's check cuts them (answers_curve.go, route/answer).
//
// Agentic (`make eval-agentic`, agentic*.go): multi-part questions run in
// single-round and in agentic mode, scored for the parts the answer's
// fragments hold, grounding, rounds, searches, model calls and time.
//
// It imports nothing from Kubernetes.
package lab
