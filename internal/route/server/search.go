package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// POST /v1/search returns the fused, ACL-filtered fragments for a query.

type searchRequest struct {
	Query string `json:"query"`
}

func (*searchRequest) format() bodyFormat { return strictBody() }

func (req *searchRequest) check(limits Limits) error {
	if q := strings.TrimSpace(req.Query); q == "" || len(q) > limits.MessageBytes {
		return &apiError{Status: http.StatusBadRequest, Code: "bad_query", Message: fmt.Sprintf("query must be 1 to %d bytes", limits.MessageBytes)}
	}
	return nil
}

// searchAnswer is the body of a search's answer.
type searchAnswer struct {
	Query      string                `json:"query"`
	Intent     retrieval.Intent      `json:"intent"`
	CacheHit   bool                  `json:"cache_hit"`
	Confidence *retrieval.Confidence `json:"confidence,omitempty"`
	Fragments  []searchFragment      `json:"fragments"`
}

// searchFragment is a fragment with its text, which a turn's retrieval
// event leaves out.
type searchFragment struct {
	retrieval.Fragment
	Text string `json:"text"`
}

// search runs under the turn's time limit: a search counts as a turn.
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	var req searchRequest
	in, err := s.admit(w, r, &req)
	if err != nil {
		return err
	}
	out, err := s.runSearch(r.Context(), in, req.Query)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// runSearch searches query as in's identity under the turn's time limit,
// and gives back in's admission slot before it returns, before the
// answer, which a client may follow with its next request. /v1/search
// and the MCP tool search_knowledge both search here.
func (s *Server) runSearch(ctx context.Context, in admitted, query string) (searchAnswer, error) {
	defer in.release()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Limits.TurnTimeout)
	defer cancel()
	res, err := s.opts.Searcher.Search(ctx, query, in.identity.Principals())
	in.release()
	if err != nil {
		return searchAnswer{}, searchFailed(ctx, err)
	}
	out := searchAnswer{Query: query, Intent: res.Intent, CacheHit: res.CacheHit, Fragments: []searchFragment{}}
	if !res.CacheHit {
		out.Confidence = &res.Confidence
	}
	for _, f := range res.Fragments {
		out.Fragments = append(out.Fragments, searchFragment{Fragment: f, Text: f.Text})
	}
	return out, nil
}

// searchFailed classifies a failed search as a turn's: past the time
// limit, timeout (504); cancelled, cancelled (503); else the knowledge
// search failed, knowledge_unavailable (502). The client reads the
// code's fixed message; the error, which names internal addresses, goes
// to the log.
func searchFailed(ctx context.Context, err error) *apiError {
	code := turn.ErrorCode(ctx, &turn.DependencyError{Dependency: turn.DependencyKnowledge, Err: err})
	failure := failed(code, turn.ErrorMessage(code))
	failure.Err = fmt.Errorf("search: %w", err)
	return failure
}
