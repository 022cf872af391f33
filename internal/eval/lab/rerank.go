package lab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// RerankEndpoint is a /rerank endpoint for the cross-encoder rows.
type RerankEndpoint struct {
	BaseURL, Model string
	// FirstStageWeight is the route's default (rerank.crossEncoder's).
	FirstStageWeight float64
}

// rerankTimeout bounds one call of the evaluation's cross-encoder client.
const rerankTimeout = 30 * time.Second

// rerankDepths are how many of the route body's candidates the
// cross-encoder rows rescore.
var rerankDepths = []int{10, 20, 30}

// firstStageWeights are the rerank.crossEncoder.firstStageWeight values
// cross-validated at each depth, 0 (relevance alone) first.
var firstStageWeights = []float64{0, 0.5, 1, 1.5, 2}

// documentTokens are the rerank.crossEncoder.maxDocumentTokens tried at
// the samples' depth, cheapest first (0, the whole fragment, last): what
// the cross-encoder reads of each fragment after its title path.
var documentTokens = []int32{48, 64, 96, 128, 0}

// documentTokensDepth is the depth the lengths are tried at: the
// samples' topN.
const documentTokensDepth = 20

// documentTokensTolerance is the nDCG@10 a shorter read may lose to the
// whole fragment's and still be chosen.
const documentTokensTolerance = 0.005

// crossEncoderName names the row that rescores the top depth candidates.
func crossEncoderName(depth int) string { return fmt.Sprintf("route+cross-encoder@%d", depth) }

// truncatedName names the row that rescores the top depth candidates,
// reading tokens of each.
func truncatedName(depth int, tokens int32) string {
	return fmt.Sprintf("route+cross-encoder@%d, %d tokens", depth, tokens)
}

// crossEncoderConfig is the route body with the top depth candidates
// rescored by the cross-encoder, and no strict floor: the row shows what
// the reranker does to the ranking; the floor on its relevance has its
// own curve and cross-validated threshold.
func (r *run) crossEncoderConfig(name string, depth int, firstStageWeight float64, documentTokens int32) config {
	cfg := r.opts.Route
	cfg.Retrieval.MaxFragments, cfg.Retrieval.StrictFloor, cfg.Retrieval.StrictFloorSigmas = eval.TopK, 0, nil
	cfg.Store.Search.Candidates = min(cfg.Store.Search.Candidates, searchDepth)
	cfg.Rerank = podconfig.Rerank{Mode: podconfig.RerankCrossEncoder, CrossEncoder: &podconfig.CrossEncoder{
		BaseURL: r.opts.Rerank.BaseURL, Model: r.opts.Rerank.Model, TopN: int32(depth), FirstStageWeight: firstStageWeight,
		MaxDocumentTokens: documentTokens}}
	s := assembly.NewSearcher(cfg, r.parts(r.index, staticEmbedder(r.vectors), noCache{}))
	return config{name: name, search: func(ctx context.Context, q eval.Question) (eval.Outcome, error) {
		found, err := s.Search(ctx, q.Question, []string{"public"})
		o := fragmentOutcome(found)
		o.Rerank = found.Timings["rerank"]
		for _, f := range found.Fragments {
			o.Relevance = max(o.Relevance, f.Score)
		}
		return o, err
	}}
}

// crossEncoderRows are the cross-encoder rows and what was chosen on
// them: the first-stage weight and the strict floor on relevance, each
// by cross-validation, at each depth. The rows run one search at a time,
// so the reranker's time is what a user would wait; the sweeps reuse the
// scores the rows fetched.
func (r *run) crossEncoderRows(ctx context.Context, report *Report, outcomes map[string][]eval.Outcome) ([]config, error) {
	var rows []config
	for _, depth := range rerankDepths {
		rows = append(rows, r.crossEncoderConfig(crossEncoderName(depth), depth, r.opts.Rerank.FirstStageWeight, 0))
	}
	for _, tokens := range documentTokens[:len(documentTokens)-1] {
		rows = append(rows, r.crossEncoderConfig(truncatedName(documentTokensDepth, tokens), documentTokensDepth, r.opts.Rerank.FirstStageWeight, tokens))
	}
	more, err := r.searchAllAt(ctx, rows, 1)
	if err != nil {
		return nil, err
	}
	for _, depth := range rerankDepths {
		row := more[crossEncoderName(depth)]
		outcomes[crossEncoderName(depth)] = row
		var options []option
		for _, w := range firstStageWeights {
			c := r.crossEncoderConfig("sweep", depth, w, 0)
			swept, err := r.searchAll(ctx, []config{c})
			if err != nil {
				return nil, err
			}
			options = append(options, option{label: formatThreshold(w), outcomes: swept[c.name]})
		}
		weight, _ := r.crossValidateRanking(fmt.Sprintf("firstStageWeight, top %d rescored", depth), options)
		relevance := signal{name: fmt.Sprintf("the best candidate's cross-encoder relevance (strictFloor, top %d rescored)", depth),
			thresholds: relevanceFloors, value: func(i int) float64 { return row[i].Relevance }}
		report.Curves = append(report.Curves, r.sweep(relevance, r.hitAt5(row)))
		report.HeldOut = append(report.HeldOut, weight,
			r.crossValidateFloor(fmt.Sprintf("strictFloor on relevance, top %d rescored", depth), relevance, r.hitAt5(row)))
	}
	var lengths []option
	for _, tokens := range documentTokens {
		name := truncatedName(documentTokensDepth, tokens)
		if tokens == 0 {
			name = crossEncoderName(documentTokensDepth)
		}
		outcomes[name] = more[name]
		lengths = append(lengths, option{label: fmt.Sprint(tokens), outcomes: more[name]})
	}
	chosen, _ := r.crossValidateCheapest(fmt.Sprintf("maxDocumentTokens, top %d rescored (within %g nDCG@10 of the whole fragment's best)",
		documentTokensDepth, documentTokensTolerance), lengths, documentTokensTolerance)
	report.HeldOut = append(report.HeldOut, chosen)
	return rows, nil
}

// rerankTimes are the p50 and p95 of the reranker's added time per
// search, in milliseconds.
func rerankTimes(outcomes []eval.Outcome) (p50, p95 float64) {
	var times []time.Duration
	for _, o := range outcomes {
		if o.Rerank > 0 {
			times = append(times, o.Rerank)
		}
	}
	return eval.PercentileMillis(times, 0.5), eval.PercentileMillis(times, 0.95)
}

// relevanceFloors are the strict floors tried on the relevance, a
// probability: the unanswerable questions' best candidates sit near 0.
var relevanceFloors = []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5}

// responseCache answers a rerank request it has seen with the response
// it got: the sweeps ask for the scores the rows already fetched.
type responseCache struct {
	mu   sync.Mutex
	seen map[string][]byte
}

func (c *responseCache) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	key := req.URL.String() + "\x00" + string(body)
	c.mu.Lock()
	cached, ok := c.seen[key]
	c.mu.Unlock()
	if !ok {
		out := req.Clone(req.Context())
		out.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		defer resp.Body.Close()
		if cached, err = io.ReadAll(resp.Body); err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.seen[key] = cached
		c.mu.Unlock()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(cached)), Request: req}, nil
}
