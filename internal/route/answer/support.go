package answer

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The grounding check: each sentence of the model's answer is scored
// against the packed fragments' sentences, and the turn reports which are
// supported, by which fragment. A sentence whose numbers, flags, paths or
// URLs appear in no fragment is unsupported whatever its wording: an
// invented command must not pass on similarity. A supported sentence
// without a marker gets its supporting fragment's citation, inferred.
// The policy (podconfig.GroundingPolicy, applied by the Gate) decides
// what the client is shown.

// Grounding statuses.
const (
	Supported   = "supported"
	Unsupported = "unsupported"
)

// Grounding is the verdict on one sentence of the answer: its best support
// among the packed fragments and whether it suffices. It is the payload
// of the turn's grounding event.
type Grounding struct {
	Index    int     `json:"index"`
	Sentence string  `json:"sentence"`
	Status   string  `json:"status"`
	Marker   string  `json:"marker,omitempty"`
	Score    float64 `json:"score"`
	// Invented are numbers, flags, paths or URLs of the sentence that no
	// packed fragment holds.
	Invented []string `json:"invented,omitempty"`
	// UnsupportedMarkers are markers the model wrote that this sentence's
	// support does not come from.
	UnsupportedMarkers []string `json:"unsupported_markers,omitempty"`
	// Withheld: the sentence was not shown (grounding policy strip).
	Withheld bool `json:"withheld,omitempty"`
}

// Defaults of GroundingSettings, calibrated on the dev questions with the
// local all-MiniLM-L6-v2 (docs/eval.md, "Answer-level evaluation").
const (
	DefaultGroundingThreshold = 0.55
	DefaultFallbackBelow      = 0.5
)

// GroundingSettings are a route's answer.grounding.
type GroundingSettings struct {
	// Policy is annotate (also when empty), strip or fallback.
	Policy podconfig.GroundingPolicy
	// Threshold is the support a sentence needs: the mean of its best
	// embedding similarity to a fragment sentence and the share of its
	// content words that sentence holds. 0: DefaultGroundingThreshold.
	Threshold float64
	// FallbackBelow is the grounded ratio under which fallback replaces
	// the answer. 0: DefaultFallbackBelow.
	FallbackBelow float64
	// Scorer is similarity (also when empty: Scorer) or judge (the
	// Checker's Judge decides; judge.go).
	Scorer podconfig.GroundingScorer
}

func (g GroundingSettings) threshold() float64 {
	if g.Threshold > 0 {
		return g.Threshold
	}
	return DefaultGroundingThreshold
}

func (g GroundingSettings) fallbackBelow() float64 {
	if g.FallbackBelow > 0 {
		return g.FallbackBelow
	}
	return DefaultFallbackBelow
}

// maxGroundingUnits bounds the fragment sentences embedded per turn.
const maxGroundingUnits = 256

// identifierPattern finds what must be copied, not paraphrased: numbers,
// flags, paths, URLs, dotted or snake_case names.
var identifierPattern = regexp.MustCompile(`(?:https?://\S+|--?[A-Za-z][\w-]*|\b[\w.-]*\d[\w.-]*\b|\b\w+[_./]\w[\w./-]*\b)`)

// Embedders are the grounding check's: Stored reads the vectors
// ingestion made of the fragments' units (nil: none), Units embeds those
// it lacks (they change only with the index, so a cache across turns
// belongs here: vectorcache.Embedder), Sentences the answer's. All are
// the store's embedding model behind its query prefix.
type Embedders struct {
	Stored           StoredUnits
	Units, Sentences knowledge.Embedder
}

// StoredUnits reads the vectors ingestion stored of the units of chunks
// (ids) and of split sections' parts (parentIDs), by their text's hash
// (knowledge.UnitHash): knowledge.Store.
type StoredUnits interface {
	UnitVectors(ctx context.Context, ids, parentIDs []string) (map[uint64][]float32, error)
}

// Scorer scores sentences against one turn's packed fragments. The
// fragments' units are embedded once, on first use.
type Scorer struct {
	embedders Embedders
	fragments []retrieval.Fragment
	units     []unit
	unitWords []map[string]bool
	vectors   [][]float32
	// embedded counts the units whose vectors were not stored, embedded
	// by the check.
	embedded  int
	packed    string // lower-cased, for invented identifiers
	threshold float64
}

// NewScorer scores against fragments; a sentence is supported from
// threshold up.
func NewScorer(embedders Embedders, fragments []retrieval.Fragment, threshold float64) *Scorer {
	units := answerUnits(fragments)
	units = units[:min(len(units), maxGroundingUnits)]
	words := make([]map[string]bool, len(units))
	for i, u := range units {
		words[i] = wordSet(u.text)
	}
	return &Scorer{embedders: embedders, fragments: fragments, units: units, unitWords: words,
		packed: strings.ToLower(packedText(fragments)), threshold: threshold}
}

// prepare reads the vectors of the fragments' units that ingestion
// stored and embeds the others, unless done.
func (s *Scorer) prepare(ctx context.Context) error {
	if s.vectors != nil || len(s.units) == 0 {
		return nil
	}
	vectors, embedded, err := unitVectors(ctx, s.embedders.Stored, s.embedders.Units, s.fragments, s.units)
	if err != nil {
		return fmt.Errorf("embed the fragments' sentences: %w", err)
	}
	s.vectors, s.embedded = vectors, embedded
	return nil
}

// UnitVectors are the fragments' unit vectors once the check embedded
// them (nil before): the extractive answer that replaces a checked one
// scores the same units with them.
func (s *Scorer) UnitVectors() [][]float32 { return s.vectors }

// score judges sentences in one embeddings call. Index is left to the
// caller.
func (s *Scorer) score(ctx context.Context, sentences []string) ([]Grounding, error) {
	out := make([]Grounding, len(sentences))
	if len(sentences) == 0 {
		return out, nil
	}
	if err := s.prepare(ctx); err != nil {
		return nil, err
	}
	var vectors [][]float32
	if len(s.units) > 0 {
		var err error
		if vectors, err = s.embedders.Sentences.Embed(ctx, sentences); err != nil {
			return nil, fmt.Errorf("embed the answer's sentences: %w", err)
		}
	}
	for i, sentence := range sentences {
		var vector [][]float32
		if len(vectors) > 0 {
			vector = vectors[i : i+1]
		}
		out[i] = s.judge(sentence, vector)
	}
	return out, nil
}

// judge scores one sentence whose embedding is vector[0] (none: no
// fragment sentence to support it).
func (s *Scorer) judge(sentence string, vector [][]float32) Grounding {
	g := Grounding{Sentence: sentence, Status: Unsupported, Invented: inventedIdentifiers(sentence, s.packed)}
	best, bestScore := -1, 0.0
	if len(vector) == 1 {
		words := retrieval.ContentWords(sentence)
		for j := range s.units {
			score := (float64(knowledge.Cosine(vector[0], s.vectors[j])) + overlap(words, s.unitWords[j])) / 2
			if best < 0 || score > bestScore {
				best, bestScore = j, score
			}
		}
	}
	g.Score = bestScore
	marker := ""
	if best >= 0 {
		marker = s.fragments[s.units[best].fragment].Marker
		if bestScore >= s.threshold && len(g.Invented) == 0 {
			g.Status, g.Marker = Supported, marker
		}
	}
	for _, m := range markerPattern.FindAllStringSubmatch(sentence, -1) {
		if g.Status != Supported || m[1] != marker {
			g.UnsupportedMarkers = append(g.UnsupportedMarkers, m[1])
		}
	}
	return g
}

// ScoreSupport judges sentences against fragments as a route's grounding
// check does with the default threshold (for calibration: `ragroute
// eval-answers --grounding-curve`).
func ScoreSupport(ctx context.Context, embedder knowledge.Embedder, sentences []string, fragments []retrieval.Fragment) ([]Grounding, error) {
	return NewScorer(Embedders{Units: embedder, Sentences: embedder}, fragments, DefaultGroundingThreshold).score(ctx, sentences)
}

func packedText(fragments []retrieval.Fragment) string {
	var b strings.Builder
	for _, f := range fragments {
		b.WriteString(f.Title + "\n" + strings.Join(f.HeadingPath, "\n") + "\n" + f.SourceURI + "\n" + strings.Join(f.ImageURLs, "\n") + "\n" + f.Text + "\n")
	}
	return b.String()
}

func wordSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, w := range retrieval.ContentWords(text) {
		set[w] = true
	}
	return set
}

// overlap is the share of words that have holds.
func overlap(words []string, have map[string]bool) float64 {
	if len(words) == 0 {
		return 0
	}
	n := 0
	for _, w := range words {
		if have[w] {
			n++
		}
	}
	return float64(n) / float64(len(words))
}

// inventedIdentifiers are the sentence's identifiers that the packed text
// (lower-cased) does not hold; markers do not count.
func inventedIdentifiers(sentence, packed string) []string {
	var out []string
	for _, id := range identifiers(sentence) {
		if !strings.Contains(packed, strings.ToLower(id)) {
			out = append(out, id)
		}
	}
	return out
}

var (
	leadingListMarker = regexp.MustCompile(`^\s*(?:[-*]|\d+[.)])\s+`)
	// wordPair is "enable/disable", "e.g": prose, not an identifier.
	wordPair = regexp.MustCompile(`^(?:[A-Za-z]+/[A-Za-z]+|[A-Za-z]\.[A-Za-z])$`)
)

// identifiers are what of a sentence must be copied, not paraphrased. A
// flag starts a word ("command-line" holds none), a list item's number is
// not one, and a pair of words joined by a slash is prose.
func identifiers(sentence string) []string {
	text := markerPattern.ReplaceAllString(leadingListMarker.ReplaceAllString(sentence, ""), "")
	var out []string
	for _, at := range identifierPattern.FindAllStringIndex(text, -1) {
		id := strings.TrimRight(text[at[0]:at[1]], ".,;:!?)")
		if id == "" || wordPair.MatchString(id) {
			continue
		}
		if id[0] == '-' && at[0] > 0 && !strings.ContainsRune(" \t\n(`\"'=", rune(text[at[0]-1])) {
			continue
		}
		out = append(out, id)
	}
	return out
}
