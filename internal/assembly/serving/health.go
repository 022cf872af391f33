package serving

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/server"
)

// indexServes is the route's readiness: an index serves the collection
// alias in Milvus ("milvus"), built by the route's embedder ("embedder")
// and keyword analyzer ("analyzer").
// Each check reads the serving generation into the watch, so the route
// follows a swapped-in generation within a probe period.
func indexServes(ctx context.Context, watch *retrieval.GenerationWatch) error {
	ok, err := watch.Read(ctx)
	var mismatch *retrieval.EmbedderMismatchError
	var analyzerMismatch *retrieval.AnalyzerMismatchError
	switch {
	case errors.As(err, &mismatch):
		return &server.NotReadyError{Dependency: "embedder", Err: err}
	case errors.As(err, &analyzerMismatch):
		return &server.NotReadyError{Dependency: "analyzer", Err: err}
	case err != nil || !ok:
		return &server.NotReadyError{Dependency: "milvus", Err: fmt.Errorf("no index serves the collection alias (err=%v)", err)}
	}
	return nil
}

// modelAnswers says whether the chat model's server answers.
func modelAnswers(ctx context.Context, modelURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(modelURL, "/")+"/models", nil)
	if err != nil {
		return fmt.Errorf("chat model at %s: %w", modelURL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("chat model at %s: %w", modelURL, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("chat model at %s: %s", modelURL, resp.Status)
	}
	return nil
}
