package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpQuestion is searched through the route's MCP endpoint by a user
// outside the ops group and one inside it: the answer is in an ops-only
// document, so only bob's fragments hold it.
const mcpQuestion = "Where do I click to roll back a release in the deploy console?"

// mcpTools connects to the route's /mcp as an agent would (the official
// Go SDK's client), lists its tools, and calls search_knowledge as alice
// and as bob.
func (d *demo) mcpTools(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for i, who := range []question{{"alice", "staff", mcpQuestion, ""}, {"bob", "staff,ops", mcpQuestion, ""}} {
		session, err := d.connectMCP(ctx, who)
		if err != nil {
			return fmt.Errorf("%s: %w", who.user, err)
		}
		if i == 0 {
			tools, err := session.ListTools(ctx, nil)
			if err != nil {
				_ = session.Close()
				return fmt.Errorf("list the tools: %w", err)
			}
			for _, tool := range tools.Tools {
				fmt.Printf("  tool %s: %s\n", tool.Name, shorten(tool.Description, 100))
			}
		}
		fmt.Printf("\n  %s (groups: %s) calls search_knowledge: %s\n", who.user, who.groups, who.text)
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "search_knowledge", Arguments: map[string]any{"query": who.text, "max_results": 3}})
		_ = session.Close()
		if err != nil {
			return fmt.Errorf("%s's search_knowledge: %w", who.user, err)
		}
		if err := printKnowledge(os.Stdout, res); err != nil {
			return fmt.Errorf("%s's search_knowledge: %w", who.user, err)
		}
	}
	return nil
}

// connectMCP opens an MCP client session to the route as q's user, with
// the identity headers the sign-in proxy would send.
func (d *demo) connectMCP(ctx context.Context, q question) (*mcp.ClientSession, error) {
	header := http.Header{}
	header.Set(d.applied.userHeader, q.user)
	header.Set(d.applied.groupsHeader, q.groups)
	if p := d.applied.proxy; p.value != "" {
		header.Set(p.header, p.value)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "ragroute-demo", Version: "v0"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.routeURL + "/mcp",
		HTTPClient: &http.Client{Transport: withHeader{header}}, MaxRetries: -1}, nil)
}

// withHeader sends header with every request.
type withHeader struct{ header http.Header }

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for name, values := range h.header {
		r.Header[name] = values
	}
	return http.DefaultTransport.RoundTrip(r)
}

// printKnowledge prints search_knowledge's fragments, one line each, or
// the tool's error or not-found.
func printKnowledge(out io.Writer, res *mcp.CallToolResult) error {
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		return fmt.Errorf("tool error: %s", strings.Join(text, " "))
	}
	data, _ := json.Marshal(res.StructuredContent)
	var found struct {
		NotFound  bool `json:"not_found"`
		Fragments []struct {
			Citation  string  `json:"citation"`
			TitlePath string  `json:"title_path"`
			Source    string  `json:"source"`
			Text      string  `json:"text"`
			Score     float64 `json:"score"`
		} `json:"fragments"`
	}
	if err := json.Unmarshal(data, &found); err != nil {
		return fmt.Errorf("structured content %s: %w", data, err)
	}
	if found.NotFound {
		fmt.Fprintln(out, "    not found: nothing this user may read matches")
		return nil
	}
	for _, f := range found.Fragments {
		fmt.Fprintf(out, "    [%s] %.2f %s  %s\n        %s\n", f.Citation, f.Score, f.TitlePath, f.Source, shorten(f.Text, 100))
	}
	return nil
}
