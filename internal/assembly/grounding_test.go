package assembly

import (
	"context"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// The check's clients keep what they embedded: a fragment's units and an
// answer's sentences seen before cost the embedder no request (a cached
// turn whose model writes the same answer is checked without it), and a
// new sentence costs one.
func TestCheckerKeepsUnitAndSentenceVectors(t *testing.T) {
	models := testenv.StartModelServer(8)
	defer models.Close()
	cfg := podconfig.RouteConfig{Store: podconfig.Store{Embedding: podconfig.Embedding{BaseURL: models.BaseURL(), Model: "m", Dimensions: 8}}}
	check := newChecker(cfg, replicaEmbedder(cfg, Parts{}).Lane(model.Finishing), nil, nil)
	ctx := context.Background()
	units := []string{"Sync waves order the resources.", "Lower waves are applied first."}
	answer := []string{"Lower waves go first [S1].", "A wave waits for the previous one."}
	for _, e := range []struct {
		name  string
		embed func() error
	}{
		{"units", func() error { _, err := check.Units.Embed(ctx, units); return err }},
		{"sentences", func() error { _, err := check.Sentences.Embed(ctx, answer); return err }},
	} {
		if err := e.embed(); err != nil {
			t.Fatal(err)
		}
		before := models.Requests.Load()
		if err := e.embed(); err != nil {
			t.Fatal(err)
		}
		if n := models.Requests.Load() - before; n != 0 {
			t.Errorf("the same %s again cost %d embedder requests", e.name, n)
		}
	}
	before := models.Requests.Load()
	if _, err := check.Sentences.Embed(ctx, []string{answer[0], "A sentence never written before."}); err != nil {
		t.Fatal(err)
	}
	if n := models.Requests.Load() - before; n != 1 {
		t.Errorf("a new sentence cost %d requests, want 1", n)
	}
}
