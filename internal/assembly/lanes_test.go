package assembly

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// heldEmbeddings is an embeddings endpoint that answers only once let go,
// saying on entered when a call came in.
func heldEmbeddings(t *testing.T) (baseURL string, entered <-chan struct{}, letGo func()) {
	t.Helper()
	in, gate := make(chan struct{}, 16), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in <- struct{}{}
		<-gate
		vectors, _ := (&testenv.HashEmbedder{Dim: 8}).Embed(r.Context(), req.Input)
		type datum struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []datum
		for i, v := range vectors {
			data = append(data, datum{i, v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	var once sync.Once
	letGo = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(srv.Close)
	t.Cleanup(letGo) // before the server closes: it waits for its calls
	return srv.URL, in, letGo
}

// A route assembled without an embedder part embeds its questions and
// its grounding check on one client, as serve builds it: a new turn is
// let in only once the check's texts in a call are served, which a
// question embedder apart from the check's could not know.
func TestTheQuestionsAndTheCheckShareOneClient(t *testing.T) {
	baseURL, entered, letGo := heldEmbeddings(t)
	cfg := podconfig.RouteConfig{Store: podconfig.Store{Embedding: podconfig.Embedding{BaseURL: baseURL, Model: "m", Dimensions: 8}}}
	searcher := NewSearcher(cfg, Parts{})
	check, err := sharedCheck(cfg, searcher, Parts{})
	if err != nil {
		t.Fatal(err)
	}
	admitter, ok := searcher.Embedder.(model.Admitter)
	if !ok {
		t.Fatalf("the searcher's embedder %T admits no turns: it is not a shared client's Starting lane", searcher.Embedder)
	}
	checked := make(chan error, 1)
	go func() {
		_, err := check.Sentences.Embed(context.Background(), []string{"Lower waves go first."})
		checked <- err
	}()
	<-entered

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := admitter.Admit(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a turn was let in while the check's text was in a call (admit: %v): the check has a client of its own", err)
	}
	letGo()
	if err := <-checked; err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admitter.Admit(ctx); err != nil {
		t.Errorf("the check served, the turn is still not let in: %v", err)
	}
}

// The caller's own client is shared the same way: the check embeds on it
// too, not on a client built from the config.
func TestTheCheckEmbedsOnTheCallersClient(t *testing.T) {
	client := &testenv.HashEmbedder{Dim: 8}
	cfg := podconfig.RouteConfig{Store: podconfig.Store{Embedding: podconfig.Embedding{BaseURL: "http://127.0.0.1:9/v1", Model: "m", Dimensions: 8}}}
	parts := Parts{Embedder: client}
	check, err := sharedCheck(cfg, NewSearcher(cfg, parts), parts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := check.Sentences.Embed(context.Background(), []string{"Lower waves go first."}); err != nil || client.Texts != 1 {
		t.Errorf("the check embedded %d texts on the caller's client (err %v), want 1", client.Texts, err)
	}
}
