package knowledge

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// An embedder's cosines live in a band of its own: all-MiniLM-L6-v2 scores
// unrelated texts around 0.1, multilingual-e5-small around 0.8. A raw
// similarity floor therefore means something else for every embedder. The
// background similarity measures the band on the collection itself: how
// similar question-like texts (chunk titles, embedded as queries) are to
// chunks of other documents. A floor set in standard deviations above its
// mean (Background.Floor) means the same for any embedder.

// backgroundProperty on a generation's collection holds its background
// similarity, as JSON.
const backgroundProperty = "ragroute.background"

// backgroundVersion is recorded with a background; one recorded by another
// way of measuring reads as none, so the next ingestion measures again.
const backgroundVersion = 1

// Background sums up the similarities of question-like texts to chunks
// of other documents, in the units a search reports (Hit.Similarity: the
// cosine to the chunk's text or title vector, whichever is closer).
type Background struct {
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stdDev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	// Samples is how many (text, chunk) pairs were measured.
	Samples int `json:"samples"`
}

// Floor is the similarity sigmas standard deviations above the mean: with
// sigmas 3, few unrelated chunks score above it, whatever the embedder.
func (b Background) Floor(sigmas float64) float64 { return b.Mean + sigmas*b.StdDev }

// BackgroundQuery is a question-like text's vector and the document it
// came from.
type BackgroundQuery struct {
	DocID  string
	Vector []float32
}

// BackgroundChunk is a stored chunk's two dense vectors and its document.
type BackgroundChunk struct {
	DocID string
	Text  []float32
	Title []float32
}

// BackgroundOf is the background of queries against chunks: for every pair
// from different documents, the cosine of the query to the chunk's text or
// title vector, whichever is closer, as a search scores a hit. Pairs from
// one document are left out: they are related by construction. Figures are
// rounded to four decimals; Samples is 0 when no pair qualifies.
func BackgroundOf(queries []BackgroundQuery, chunks []BackgroundChunk) Background {
	texts := make([][]float64, len(chunks))
	titles := make([][]float64, len(chunks))
	for i, c := range chunks {
		texts[i], titles[i] = unitVector(c.Text), unitVector(c.Title)
	}
	var sims []float64
	for _, q := range queries {
		v := unitVector(q.Vector)
		for i, c := range chunks {
			if c.DocID == q.DocID {
				continue
			}
			sims = append(sims, max(dotProduct(v, texts[i]), dotProduct(v, titles[i])))
		}
	}
	return summarise(sims)
}

// summarise gives the mean, population standard deviation and nearest-rank
// percentiles of sims.
func summarise(sims []float64) Background {
	if len(sims) == 0 {
		return Background{}
	}
	var sum float64
	for _, s := range sims {
		sum += s
	}
	mean := sum / float64(len(sims))
	var squares float64
	for _, s := range sims {
		squares += (s - mean) * (s - mean)
	}
	sorted := slices.Clone(sims)
	slices.Sort(sorted)
	percentile := func(p float64) float64 {
		rank := int(math.Ceil(p / 100 * float64(len(sorted))))
		return sorted[min(max(rank, 1), len(sorted))-1]
	}
	return Background{
		Mean:    round4(mean),
		StdDev:  round4(math.Sqrt(squares / float64(len(sims)))),
		P50:     round4(percentile(50)),
		P90:     round4(percentile(90)),
		P99:     round4(percentile(99)),
		Samples: len(sims),
	}
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// unitVector is v scaled to length 1 (nil for a zero or empty vector,
// whose cosine to anything is 0).
func unitVector(v []float32) []float64 {
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return nil
	}
	norm = math.Sqrt(norm)
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x) / norm
	}
	return out
}

// dotProduct of two unit vectors is their cosine; 0 when they differ in
// length (a zero vector is nil).
func dotProduct(a, b []float64) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot float64
	for i := range a {
		dot += a[i] * b[i]
	}
	return dot
}

// recordedBackground is the property's JSON form.
type recordedBackground struct {
	Version int `json:"version"`
	Background
}

func marshalBackground(b Background) (string, error) {
	data, err := json.Marshal(recordedBackground{Version: backgroundVersion, Background: b})
	if err != nil {
		return "", fmt.Errorf("marshal background similarity: %w", err)
	}
	return string(data), nil
}

// parseBackground reads the property; nil when it is missing, unreadable,
// of another version or of no samples: all mean "measure again".
func parseBackground(value string) *Background {
	if value == "" {
		return nil
	}
	var r recordedBackground
	if err := json.Unmarshal([]byte(value), &r); err != nil || r.Version != backgroundVersion || r.Samples <= 0 {
		return nil
	}
	return &r.Background
}
