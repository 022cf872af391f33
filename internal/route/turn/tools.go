package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sync/errgroup"

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
func (s SearchSettings) tools() []model.Tool {
	tools := []model.Tool{searchTool}
	if s.WebSearch != nil {
		tools = append(tools, webSearchTool)
	}
	return tools
}

// DefaultMaxToolCallsPerRound is the cap on the tool calls run from one
// model round when the route sets none: more than a question needs from
// one round, few enough that a runaway reply costs only a few searches.
const DefaultMaxToolCallsPerRound = 4

// ToolCallParallelism is how many of a round's tool calls run at once: the
// common one to three calls run together, and a raised cap adds latency,
// not load on the index.
const ToolCallParallelism = 3

// maxToolCalls is the cap in force.
func (s SearchSettings) maxToolCalls() int {
	if s.MaxToolCallsPerRound <= 0 {
		return DefaultMaxToolCallsPerRound
	}
	return s.MaxToolCallsPerRound
}

// notRunResult is the tool result of a call past the cap of limit.
func notRunResult(limit int) string {
	return fmt.Sprintf("Not run: at most %d tool calls run per round. Answer from the results of the calls that ran.", limit)
}

// runTools runs the first calls of the round, up to the cap, at most
// ToolCallParallelism at once, and returns their results in order; the
// calls past the cap are not run.
func (t *turn) runTools(ctx context.Context, calls []model.ToolCall) ([]retrieval.Retrieval, error) {
	calls = calls[:min(len(calls), t.engine.Search.maxToolCalls())]
	results := make([]retrieval.Retrieval, len(calls))
	usable := make([]bool, len(calls))
	// Every call run is announced at once, before any waits for its turn.
	for i, call := range calls {
		query, err := t.engine.Search.toolQuery(call)
		t.emit(ToolCall{Name: call.Name, Query: query})
		results[i], usable[i] = retrieval.Retrieval{Query: query}, err == nil // an unusable call finds nothing
	}
	group, ctx := errgroup.WithContext(ctx)
	group.SetLimit(ToolCallParallelism)
	for i, call := range calls {
		if !usable[i] {
			continue
		}
		query := results[i].Query
		group.Go(func() error {
			var err error
			results[i], err = t.search(ctx, call.Name, query)
			return err
		})
	}
	if err := group.Wait(); err != nil {
		return nil, err
	}
	return results, nil
}

// search runs one search of the turn, the one way every step searches:
// the web search for web_search, else the knowledge search; under its
// span (tool names it there and in a failure), its cache hit and stage
// times booked on the turn.
func (t *turn) search(ctx context.Context, tool, query string) (retrieval.Retrieval, error) {
	ctx, span := startSpan(ctx, "ragroute.search", attribute.String("ragroute.tool", tool))
	var res retrieval.Retrieval
	var err error
	if tool == webSearchToolName {
		res, err = t.engine.Search.WebSearch.Search(ctx, query)
	} else {
		res, err = t.engine.Searcher.Search(ctx, query, t.in.Principals)
	}
	endSpan(span, err)
	if err != nil {
		failed := DependencyKnowledge
		if tool == webSearchToolName {
			failed = DependencyWebSearch
		}
		return retrieval.Retrieval{}, &DependencyError{Dependency: failed, Err: err}
	}
	t.state.booked(res)
	return res, nil
}

// toolQuery reads the query of a search call; a tool the route did not
// offer finds nothing.
func (s SearchSettings) toolQuery(call model.ToolCall) (string, error) {
	if call.Name != searchToolName && (call.Name != webSearchToolName || s.WebSearch == nil) {
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
