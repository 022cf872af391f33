package turn_test

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// memIndex is an in-memory retrieval.Index: it scores rows by the cosine
// between the query vector and the row's text or title vector (hashed bags
// of words, so shared words score), whichever is closer, and sees only rows
// whose ACL holds one of the asker's principals, as Milvus' filter does.
type memIndex struct {
	rows []knowledge.Row

	mu      sync.Mutex
	queries []string
}

func newMemIndex(t testing.TB, embedder knowledge.Embedder) *memIndex {
	t.Helper()
	x := &memIndex{}
	x.add(t, embedder, routetest.Docs...)
	return x
}

// add indexes docs besides those already in x.
func (x *memIndex) add(t testing.TB, embedder knowledge.Embedder, docs ...ingest.Document) {
	t.Helper()
	rows := routetest.RowsOf(t, docs...)
	for i := range rows {
		vectors, err := embedder.Embed(context.Background(), []string{rows[i].Text, rows[i].TitlePath()})
		if err != nil {
			t.Fatal(err)
		}
		rows[i].TextVector, rows[i].TitleVector = vectors[0], vectors[1]
	}
	x.rows = append(x.rows, rows...)
}

func visible(acl, principals []string) bool {
	for _, p := range principals {
		if slices.Contains(acl, p) {
			return true
		}
	}
	return false
}

func cosine(a, b []float32) float32 {
	var dot float32
	for i := range min(len(a), len(b)) {
		dot += a[i] * b[i]
	}
	return dot
}

func (x *memIndex) HybridSearch(_ context.Context, req knowledge.SearchRequest) ([]knowledge.Hit, error) {
	x.mu.Lock()
	x.queries = append(x.queries, req.Query)
	x.mu.Unlock()
	var hits []knowledge.Hit
	for _, row := range x.rows {
		if !visible(row.ACL, req.Principals) {
			continue
		}
		sim := max(cosine(req.Vector, row.TextVector), cosine(req.Vector, row.TitleVector))
		if sim > 0 {
			hits = append(hits, knowledge.Hit{Row: row, Similarity: sim})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Similarity > hits[j].Similarity })
	if len(hits) > req.Candidates {
		hits = hits[:req.Candidates]
	}
	for i := range hits {
		hits[i].Score = 1 / float32(req.RRFK+i+1)
	}
	return hits, nil
}

func (x *memIndex) Parts(_ context.Context, parentIDs []string, principals []string) (map[string][]knowledge.Row, error) {
	parts := map[string][]knowledge.Row{}
	for _, row := range x.rows {
		if slices.Contains(parentIDs, row.ParentID) && visible(row.ACL, principals) {
			parts[row.ParentID] = append(parts[row.ParentID], row)
		}
	}
	for _, rows := range parts {
		sort.Slice(rows, func(i, j int) bool { return rows[i].PartIndex < rows[j].PartIndex })
	}
	return parts, nil
}

func (x *memIndex) Current(_ context.Context, ids, parentIDs []string, principals []string) ([]knowledge.RowVersion, error) {
	var out []knowledge.RowVersion
	for _, row := range x.rows {
		if visible(row.ACL, principals) && (slices.Contains(ids, row.ID) || (row.ParentID != "" && slices.Contains(parentIDs, row.ParentID))) {
			out = append(out, knowledge.RowVersion{ID: row.ID, ParentID: row.ParentID, PartIndex: row.PartIndex, ContentHash: row.ContentHash})
		}
	}
	return out, nil
}

// Searches are the queries the index was asked, in order.
func (x *memIndex) searches() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string{}, x.queries...)
}

// chatCall is what the scripted chat model saw.
type chatCall struct {
	Messages []model.Message
	Tools    []model.Tool
	// JSONSchema is the schema the reply was asked to match, if any.
	JSONSchema *model.JSONSchema
	// Gen is the call's generation settings.
	Gen model.Generation
}

// scriptedChat is an in-process turn.ChatModel: script decides each
// reply, whose text streams word by word.
type scriptedChat struct {
	script func(chatCall) model.Reply

	mu    sync.Mutex
	calls []chatCall
}

func (c *scriptedChat) Stream(_ context.Context, messages []model.Message, tools []model.Tool, gen model.Generation, onDelta func(string) error) (model.Reply, error) {
	call := chatCall{Messages: append([]model.Message{}, messages...), Tools: append([]model.Tool{}, tools...), JSONSchema: gen.JSONSchema, Gen: gen}
	c.mu.Lock()
	c.calls = append(c.calls, call)
	c.mu.Unlock()
	reply := c.script(call)
	for i, tc := range reply.ToolCalls {
		if tc.ID == "" {
			reply.ToolCalls[i].ID = "call_" + strconv.Itoa(i)
		}
	}
	if onDelta != nil {
		for _, word := range strings.SplitAfter(reply.Content, " ") {
			if word == "" {
				continue
			}
			if err := onDelta(word); err != nil {
				return reply, err
			}
		}
	}
	reply.Usage = model.Usage{PromptTokens: 100, CompletionTokens: len(strings.Fields(reply.Content))}
	return reply, nil
}

func (c *scriptedChat) seen() []chatCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]chatCall{}, c.calls...)
}

// searchCall is a model reply calling search_knowledge with query.
func searchCall(query string) model.Reply {
	return model.Reply{ToolCalls: []model.ToolCall{{Name: "search_knowledge", Arguments: `{"query":"` + query + `"}`}}}
}

// searchesThenAnswers scripts a model that searches with query when tools
// are offered, and answers with answer when they are not.
func searchesThenAnswers(query, answer string) func(chatCall) model.Reply {
	return func(c chatCall) model.Reply {
		if len(c.Tools) > 0 {
			return searchCall(query)
		}
		return model.Reply{Content: answer}
	}
}

// fastWorld is a turn without Milvus or HTTP: an in-memory index and an
// in-process scripted chat model.
type fastWorld struct {
	index  *memIndex
	chat   *scriptedChat
	runner *turn.Engine
}

func newFastWorld(t testing.TB, script func(chatCall) model.Reply) *fastWorld {
	t.Helper()
	embedder := &testenv.HashEmbedder{Dim: 256}
	index := newMemIndex(t, embedder)
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		t.Fatal(err)
	}
	chat := &scriptedChat{script: script}
	searcher := &retrieval.Searcher{
		Index: index, Embedder: embedder, Reranker: retrieval.KeepOrder{},
		Cache:      retrieval.NewMemoryCache(100, time.Minute, time.Now),
		Settings:   retrieval.SearchSettings{Candidates: 10, RRFK: 60, SimilarityFloor: 0.05, StrictFloor: 0.05, MaxFragments: 4},
		Generation: func() int64 { return 1 },
	}
	runner := &turn.Engine{
		Chat: chat, Searcher: searcher, Prompt: routetest.Prompt(),
		Search: turn.SearchSettings{Policy: podconfig.SearchModelDecides},
		Window: turn.Window{ContextTokens: 8192, AnswerReserve: 1024, Tokens: tokens},
	}
	return &fastWorld{index: index, chat: chat, runner: runner}
}

func (w *fastWorld) run(principals []string, messages ...model.Message) []turn.Event {
	return routetest.Play(w.runner, principals, messages...)
}
