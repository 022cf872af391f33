package retrieval

import (
	"cmp"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Confidence is how sure a search is that the knowledge holds an answer,
// from what the route has without a cross-encoder. An on-topic question
// about something the documents never describe still finds close
// neighbors (the same product, the same vocabulary), so similarity alone
// cannot tell it; what gives it away is a term of the question that no
// candidate contains (a tool, a resource kind, a flag the documents never
// name), dense and lexical search disagreeing on what is relevant, and
// a best candidate that does not stand out from its neighbors.
type Confidence struct {
	// Similarity is the best candidate's cosine similarity to the query.
	Similarity float64 `json:"similarity"`
	// Missing are the query's distinctive terms found in no candidate.
	Missing []string `json:"missing,omitempty"`
	// Agreement is the share of the best dense text candidates that
	// lexical text search also ranks among its best.
	Agreement float64 `json:"agreement"`
	// Standout is how far the best candidate's similarity lies above the
	// mean of the next standoutNeighbors (in cosine). A question the
	// documents answer finds its section a step above the rest; an
	// on-topic gap finds many sections about the same thing, all about as
	// close (the query performance predictors of information retrieval,
	// NQC and WIG, read the same spread of the best scores).
	Standout float64 `json:"standout"`
	// Sigmas is Similarity in standard deviations over the embedder's
	// background similarity on the store. Score adds Standout, in the same
	// sigmas and weighted by standoutWeight, and takes one off for no
	// agreement at all and a half for a missing name: how far the best
	// candidate stands out from unrelated text and from its neighbors,
	// discounted for what gives an on-topic gap away. Both are set only
	// when the serving generation has a background recorded.
	Sigmas *float64 `json:"sigmas,omitempty"`
	Score  *float64 `json:"score,omitempty"`
}

// Penalties of the confidence score, in background sigmas. Round numbers
// on purpose: `make eval` prints the curve they give, and finer ones
// would fit the questions they were read from.
const (
	disagreementPenalty = 1.0
	missingNamePenalty  = 0.5
)

// standoutWeight weighs Standout, in background sigmas, in the score. The
// best candidate's lead over its neighbors is a small fraction of the
// background's spread, so it needs a weight to count; 8 was read from the
// curves of `make eval` (1 to 16 tried: 8 separated the unanswerable
// questions best on MiniLM and bge; on multilingual-e5-small, whose
// similarity over the background separates them better, 1–2 would),
// a coarse choice like the penalties.
const standoutWeight = 8.0

// standoutNeighbors is how many of the next best candidates Standout
// compares the best with.
const standoutNeighbors = 9

// scored sets Sigmas and Score from the background.
func (c Confidence) scored(b knowledge.Background) Confidence {
	if b.StdDev <= 0 {
		return c
	}
	sigmas := (c.Similarity - b.Mean) / b.StdDev
	score := sigmas + standoutWeight*c.Standout/b.StdDev
	if c.Agreement == 0 {
		score -= disagreementPenalty
	}
	if len(c.Missing) > 0 {
		score -= missingNamePenalty
	}
	c.Sigmas, c.Score = &sigmas, &score
	return c
}

// agreementDepth is how many of each ranking agreement compares.
const agreementDepth = 10

// confidenceOf reads the signals from a search's fused candidates.
func confidenceOf(query string, hits []knowledge.Hit) Confidence {
	var c Confidence
	var corpus strings.Builder
	dense, both := 0, 0
	for _, h := range hits {
		c.Similarity = max(c.Similarity, float64(h.Similarity))
		corpus.WriteString(strings.ToLower(h.Text))
		corpus.WriteByte(' ')
		corpus.WriteString(strings.ToLower(strings.Join(h.HeadingPath, " ")))
		corpus.WriteByte(' ')
		if r, ok := h.Ranks[knowledge.TextDense]; ok && r <= agreementDepth {
			dense++
			if r, ok := h.Ranks[knowledge.TextSparse]; ok && r <= agreementDepth {
				both++
			}
		}
	}
	if dense > 0 {
		c.Agreement = float64(both) / float64(dense)
	}
	c.Standout = standout(hits)
	c.Missing = MissingNames(query, corpus.String())
	return c
}

// standout is the best similarity less the mean of the next
// standoutNeighbors; 0 for fewer than two candidates.
func standout(hits []knowledge.Hit) float64 {
	similarities := make([]float64, len(hits))
	for i, h := range hits {
		similarities[i] = float64(h.Similarity)
	}
	slices.SortFunc(similarities, func(a, b float64) int { return cmp.Compare(b, a) })
	neighbors := similarities[min(1, len(similarities)):min(1+standoutNeighbors, len(similarities))]
	if len(neighbors) == 0 {
		return 0
	}
	sum := 0.0
	for _, s := range neighbors {
		sum += s
	}
	return similarities[0] - sum/float64(len(neighbors))
}
