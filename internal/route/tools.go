package route

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The tools a turn offers: search_knowledge (retrieval.Searcher) and, when
// the route names a search endpoint, web_search (retrieval.WebSearch).
const (
	searchToolName    = "search_knowledge"
	webSearchToolName = "web_search"
)

var (
	searchTool = toolSpec(searchToolName, "Search the organisation's documentation. Call it for any question the documentation may answer. "+
		"Write a self-contained query: resolve pronouns and references to earlier messages.")
	webSearchTool = toolSpec(webSearchToolName,
		"Search the public web. Use it only for questions the organisation's documentation cannot answer, such as recent public events.")
)

// toolSpec is a tool taking one self-contained query.
func toolSpec(name, description string) model.Tool {
	return model.Tool{Name: name, Description: description, Parameters: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "the self-contained search query"},
		},
		"required": []string{"query"},
	}}
}

// tools are what the deciding call offers.
func (r *Runner) tools() []model.Tool {
	tools := []model.Tool{searchTool}
	if r.WebSearch != nil {
		tools = append(tools, webSearchTool)
	}
	return tools
}

// runTools runs the round's tool calls in parallel.
func (r *Runner) runTools(ctx context.Context, calls []model.ToolCall, principals []string, st *turnState) ([]retrieval.Retrieval, error) {
	results := make([]retrieval.Retrieval, len(calls))
	errs := make([]error, len(calls))
	done := make(chan int, len(calls))
	for i, call := range calls {
		query, err := r.toolQuery(call)
		st.emit(Event{Type: EventToolCall, Data: ToolCall{Name: call.Name, Query: query}})
		if err != nil {
			results[i], errs[i] = retrieval.Retrieval{Query: query}, nil // an unusable call finds nothing
			done <- i
			continue
		}
		go func(i int, name, query string) {
			if name == webSearchToolName {
				results[i], errs[i] = r.WebSearch.Search(ctx, query)
			} else {
				results[i], errs[i] = r.Searcher.Search(ctx, query, principals)
			}
			done <- i
		}(i, call.Name, query)
	}
	for range calls {
		<-done
	}
	for i, res := range results {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", calls[i].Name, errs[i])
		}
		st.cacheHit = st.cacheHit || res.CacheHit
		for stage, d := range res.Timings {
			st.timings[stage] += d
		}
	}
	return results, nil
}

// toolQuery reads the query of a search call; a tool the route did not
// offer finds nothing.
func (r *Runner) toolQuery(call model.ToolCall) (string, error) {
	if call.Name != searchToolName && (call.Name != webSearchToolName || r.WebSearch == nil) {
		return "", fmt.Errorf("unknown tool %q", call.Name)
	}
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil || strings.TrimSpace(args.Query) == "" {
		return "", fmt.Errorf("%s arguments %q: want {\"query\": \"…\"}", call.Name, call.Arguments)
	}
	return strings.TrimSpace(args.Query), nil
}
