package turn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// internalAddress is what upstream errors carry and clients must not see.
const internalAddress = "10.96.7.3:19530"

// downIndex fails every search as an unreachable Milvus does.
type downIndex struct{}

func (downIndex) HybridSearch(context.Context, knowledge.SearchRequest) ([]knowledge.Hit, error) {
	return nil, fmt.Errorf("hybrid search: rpc error: code = Unavailable desc = connection error: dial tcp %s: connect: connection refused", internalAddress)
}

func (downIndex) Parts(context.Context, []string, []string) (map[string][]knowledge.Row, error) {
	return nil, errors.New("unreachable")
}

func (downIndex) Current(context.Context, []string, []string, []string) ([]knowledge.RowVersion, error) {
	return nil, errors.New("unreachable")
}

// failedTurn plays a turn that must fail and returns its error event and
// what the runner logged.
func failedTurn(t *testing.T, w *fastWorld) (turn.Failed, string) {
	t.Helper()
	var log bytes.Buffer
	w.runner.Logger = slog.New(slog.NewTextHandler(&log, nil))
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	last := events[len(events)-1]
	if last.Type != turn.EventError {
		t.Fatalf("the turn ended with %s, want error: %+v", last.Type, events)
	}
	return last.Data.(turn.Failed), log.String()
}

// noInternals fails when a client-facing message quotes the failure.
func noInternals(t *testing.T, message string) {
	t.Helper()
	for _, leak := range []string{"http://", "https://", "127.0.0.1", internalAddress, "rpc error", "dial tcp", "vllm"} {
		if strings.Contains(message, leak) {
			t.Errorf("message %q leaks %q", message, leak)
		}
	}
}

func TestUnitMilvusDownIsKnowledgeUnavailableWithoutAddresses(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves", "never"))
	w.runner.Searcher.Index = downIndex{}
	got, log := failedTurn(t, w)
	if got.Code != turn.CodeKnowledgeUnavailable {
		t.Errorf("code %q, want %q", got.Code, turn.CodeKnowledgeUnavailable)
	}
	noInternals(t, got.Message)
	if !strings.Contains(got.Message, "t1") {
		t.Errorf("message %q lacks the turn id to quote", got.Message)
	}
	if !strings.Contains(log, "turn=t1") || !strings.Contains(log, internalAddress) {
		t.Errorf("the log lacks the turn id or the full error:\n%s", log)
	}
}

// A turn whose search meets an index of another embedder (swapped in
// after the turn was admitted) ends with embedder_mismatch, not a
// knowledge outage a retry could cure, and nothing is searched.
func TestUnitEmbedderMismatchMidTurnHasItsCode(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves", "never"))
	w.runner.Searcher.Index = downIndex{} // a search that reached it would fail otherwise
	w.runner.Searcher.IndexMismatch = func() error {
		return &retrieval.EmbedderMismatchError{Generation: 4, Index: knowledge.EmbedderInfo{Model: "all-MiniLM-L6-v2", Dimensions: 256},
			Route: knowledge.EmbedderInfo{Model: "e5-small", Dimensions: 256}}
	}
	got, log := failedTurn(t, w)
	if got.Code != turn.CodeEmbedderMismatch || !strings.HasPrefix(got.Message, turn.ErrorMessage(turn.CodeEmbedderMismatch)) {
		t.Errorf("error %+v, want %s with its fixed message", got, turn.CodeEmbedderMismatch)
	}
	if strings.Contains(log, internalAddress) || !strings.Contains(log, "all-MiniLM-L6-v2") {
		t.Errorf("the log shows a search made, or lacks the mismatch:\n%s", log)
	}
}

// failingChat fails every call with err, as model.Chat does.
type failingChat struct{ err error }

func (c failingChat) Stream(context.Context, []model.Message, []model.Tool, model.Generation, func(string) error) (model.Reply, error) {
	return model.Reply{}, c.err
}

func TestUnitModelFailuresHaveTheirCodes(t *testing.T) {
	upstream := errors.New(`chat with http://vllm.models.svc.cluster.local:8000/v1 (model qwen): Post "http://10.96.7.3:8000/v1/chat/completions": boom`)
	cases := []struct {
		kind model.ErrorKind
		want string
	}{
		{model.ErrUnavailable, turn.CodeModelUnavailable},
		{model.ErrTimeout, turn.CodeModelTimeout},
		{model.ErrRateLimited, turn.CodeRateLimited},
		{model.ErrRefused, turn.CodeModelError},
		{model.ErrInvalidReply, turn.CodeModelError},
	}
	for _, tc := range cases {
		w := newFastWorld(t, nil)
		w.runner.Chat = failingChat{err: &model.Error{Kind: tc.kind, Err: upstream}}
		got, log := failedTurn(t, w)
		if got.Code != tc.want {
			t.Errorf("%s: code %q, want %q", tc.kind, got.Code, tc.want)
		}
		noInternals(t, got.Message)
		if !strings.Contains(log, "vllm.models.svc.cluster.local") {
			t.Errorf("%s: the log lacks the full error:\n%s", tc.kind, log)
		}
	}
}

// The whole turn's deadline stays "timeout", whatever failed after it.
func TestUnitTurnDeadlineIsTimeout(t *testing.T) {
	w := newFastWorld(t, nil)
	w.runner.Chat = failingChat{err: &model.Error{Kind: model.ErrUnavailable, Err: context.DeadlineExceeded}}
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	var last turn.Event
	w.runner.Run(ctx, turn.Input{ID: "t1", Messages: []model.Message{routetest.User("hi")}, Principals: staff}, func(e turn.Event) { last = e })
	if got, ok := last.Data.(turn.Failed); !ok || got.Code != turn.CodeTimeout {
		t.Errorf("last event %+v, want error timeout", last)
	}
}

// panickingChat fails the way a bug does.
type panickingChat struct{}

func (panickingChat) Stream(context.Context, []model.Message, []model.Tool, model.Generation, func(string) error) (model.Reply, error) {
	panic("a bug in the turn")
}

// A panic in a turn ends that turn with an internal error, not the
// replica: the next turn is served.
func TestAPanickingTurnEndsWithAnInternalError(t *testing.T) {
	w := newFastWorld(t, searchesThenAnswers("sync waves", "Lower waves are applied first [S1]."))
	chat := w.runner.Chat
	w.runner.Chat = panickingChat{}
	events := w.run(staff, routetest.User("How are sync waves ordered?"))
	last := events[len(events)-1]
	if last.Type != turn.EventError || last.Data.(turn.Failed).Code != turn.CodeInternal {
		t.Fatalf("the panicking turn ended with %+v", last)
	}
	if strings.Contains(last.Data.(turn.Failed).Message, "bug") {
		t.Errorf("the client reads the panic: %q", last.Data.(turn.Failed).Message)
	}
	w.runner.Chat = chat
	if done := completed(t, w.run(staff, routetest.User("How are sync waves ordered?"))); done.NotFound {
		t.Errorf("the next turn %+v", done)
	}
}
