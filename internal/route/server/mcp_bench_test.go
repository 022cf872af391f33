package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragroute/ragroute/internal/route/routetest"
)

// BenchmarkSearchMCPBesideHTTP: the same questions searched through POST
// /v1/search and through MCP's search_knowledge (one Go SDK client
// session, as an agent keeps one), one after the other, without the exact
// cache, so both embed and search Milvus Lite every time. Reports each
// path's p50 and the MCP path's extra cost (the difference of the p50s).
func BenchmarkSearchMCPBesideHTTP(b *testing.B) {
	cfg := routetest.Config(8192)
	cfg.Cache.MaxEntries = 0
	w := routetest.NewWorldOver(b, routetest.Rows(b), cfg)
	srv := serveWith(b, w, func(o *Options) { o.Limits = benchLimits(); o.MCP = &MCPOptions{} })
	client := &http.Client{Transport: alice, Timeout: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	session, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer session.Close()

	viaHTTP, viaMCP := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		query := fmt.Sprintf("How are sync waves ordered %d?", i%50)
		body, _ := json.Marshal(map[string]string{"query": query})
		start := time.Now()
		resp, err := send(client, http.MethodPost, srv.URL+"/v1/search", string(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		viaHTTP = append(viaHTTP, time.Since(start))

		start = time.Now()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: toolSearchKnowledge, Arguments: map[string]any{"query": query}})
		if err != nil || res.IsError {
			b.Fatalf("search_knowledge: %v %+v", err, res)
		}
		viaMCP = append(viaMCP, time.Since(start))
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	httpP50, mcpP50 := p50(viaHTTP), p50(viaMCP)
	b.ReportMetric(httpP50, "http_p50_ms")
	b.ReportMetric(mcpP50, "mcp_p50_ms")
	b.ReportMetric(mcpP50-httpP50, "mcp_extra_p50_ms")
}
