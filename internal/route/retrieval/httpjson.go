package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/model"
)

// jsonEndpoint is a tool-side HTTP service the route calls: a reranker or
// a web search.
type jsonEndpoint struct {
	BaseURL string
	APIKey  string
	HTTP    *http.Client
}

// post sends in as JSON to BaseURL+path within timeout and decodes a 200
// reply of at most maxBytes into out. Errors name the endpoint.
func (e jsonEndpoint) post(ctx context.Context, path string, timeout time.Duration, maxBytes int64, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(e.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", e.BaseURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The upstream's reason, cut short: a reranker may echo the
		// fragments it was sent, a search gateway the query.
		return fmt.Errorf("%s: %s: %s", e.BaseURL, resp.Status, model.ErrorBodyPrefix(resp.Body))
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, maxBytes)).Decode(out); err != nil {
		return fmt.Errorf("%s: %w", e.BaseURL, err)
	}
	return nil
}
