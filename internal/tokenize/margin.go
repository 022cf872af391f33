package tokenize

// MarginPercent of a model's token limit is kept free when texts are
// counted here for a model whose tokenizer is not known. The counts are
// BERT uncased WordPiece (InputCounter); an embedder may tokenize
// otherwise: a cased WordPiece, XLM-R's SentencePiece (e5, bge-m3) or a
// BPE. On English documentation those count within a few percent of
// uncased WordPiece (BPEs fewer), so a tenth covers the difference; past
// its limit a server cuts the input silently (sentence-transformers) or
// refuses it (llama.cpp).
const MarginPercent = 10

// WithMargin is limit less MarginPercent of it, rounded up: the most
// tokens, counted here, that a text for that limit may take.
func WithMargin(limit int) int {
	return limit - (limit*MarginPercent+99)/100
}
