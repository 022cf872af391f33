package main

import (
	"context"
	"encoding/hex"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// otlpReceiver is an OTLP/gRPC trace receiver on loopback: it keeps the
// spans exported to it.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (r *otlpReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func startOTLPReceiver(t *testing.T) (*otlpReceiver, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rec := &otlpReceiver{}
	coltracepb.RegisterTraceServiceServer(srv, rec)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return rec, ln.Addr().String()
}

// TestTurnIsTraced: with OTEL_EXPORTER_OTLP_ENDPOINT set, one turn
// submitted with a caller's traceparent is one trace: the request span
// under the caller's, the turn under the request, its stages under the
// turn (the search's steps under the search), and the model's call
// carries the trace on to the model server.
func TestTurnIsTraced(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	receiver, addr := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	cfg, models := pruneRoute(ctx, t)
	base, _, stop := serveOnLoopback(ctx, t, cfg)
	waitOK(t, base+"/readyz")

	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	if body := askPruneLast(t, base, map[string]string{"Traceparent": "00-" + traceID + "-" + callerSpan + "-01"}); !strings.Contains(body, "event: turn.completed") {
		t.Fatalf("stream:\n%s", body)
	}
	stop() // flushes the spans

	byID := map[string]*tracepb.Span{}
	var turn, answer *tracepb.Span
	receiver.mu.Lock()
	for _, s := range receiver.spans {
		if hex.EncodeToString(s.TraceId) != traceID {
			continue // the stream's own request is another trace
		}
		byID[hex.EncodeToString(s.SpanId)] = s
		switch s.Name {
		case "ragroute.turn":
			turn = s
		case "ragroute.model.answer":
			answer = s
		}
	}
	receiver.mu.Unlock()
	parentName := func(s *tracepb.Span) string {
		if p := byID[hex.EncodeToString(s.ParentSpanId)]; p != nil {
			return p.Name
		}
		return hex.EncodeToString(s.ParentSpanId)
	}
	if turn == nil || answer == nil {
		t.Fatalf("no turn or answer span in trace %s: %d spans", traceID, len(byID))
	}
	if got := parentName(turn); got != "HTTP POST" || parentName(byID[hex.EncodeToString(turn.ParentSpanId)]) != callerSpan {
		t.Errorf("the turn's parent is %q, want the request span under the caller's %s", got, callerSpan)
	}
	want := map[string]string{
		"ragroute.model.decide": "ragroute.turn", "ragroute.search": "ragroute.turn", "ragroute.pack": "ragroute.turn",
		"ragroute.model.answer": "ragroute.turn", "ragroute.search.embed": "ragroute.search",
		"ragroute.search.hybrid_search": "ragroute.search", "ragroute.search.rerank": "ragroute.search",
		"ragroute.search.reassemble": "ragroute.search",
	}
	seen := map[string]bool{}
	for _, s := range byID {
		if parent, ok := want[s.Name]; ok {
			seen[s.Name] = true
			if got := parentName(s); got != parent {
				t.Errorf("%s is under %s, want %s", s.Name, got, parent)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no %s span", name)
		}
	}
	ttft := false
	for _, a := range answer.Attributes {
		ttft = ttft || a.Key == "ragroute.time_to_first_token_ms"
	}
	if !ttft {
		t.Errorf("the answer span has no time to first token: %v", answer.Attributes)
	}
	for _, r := range models.Seen() {
		if !strings.Contains(r.Traceparent, traceID) {
			t.Errorf("a model call carried traceparent %q, want trace %s", r.Traceparent, traceID)
		}
	}
}
