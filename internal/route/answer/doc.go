// Package answer judges and filters what the chat model writes back, and
// writes the answer itself when no model may: the stream filters are
// Stages composed by one Pipe (stage.go) between the model's stream and
// the client, in the order the turn names them:
//
//   - FenceScrubber removes the turn's fence markers a model echoes
//     (scrub.go);
//   - LinkGuard removes links and URLs the answer was not given
//     (links.go);
//   - Gate cuts the answer into sentences as it streams and checks each
//     against the packed fragments in the background, showing, holding or
//     withholding them as the grounding policy says (gate.go, with the
//     similarity Scorer of support.go or the judge model of judge.go,
//     whose call the caller makes: JudgeCall).
//
// Quoter writes the extractive answer: cited quotes of the fragments
// (quotes.go). What a sentence, a list item and a citation marker are is
// decided once, in sentences.go and units.go, for the check, the quotes,
// packing's cuts and the evaluations alike.
//
// Nothing here emits turn events or knows the turn: the caller passes a
// sink for the text and a func for each sentence's verdict. It imports
// the fragments' shape (route/retrieval), the embedder's (knowledge),
// token counting (tokenize), the policy enums (podconfig) and
// ingestion's Markdown rule for a list item (ingest).
package answer
