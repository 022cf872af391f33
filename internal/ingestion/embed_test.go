package ingestion

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/testenv"
)

// The input that fails alone is named by its place in the whole call,
// however deep the split that found it: the sync names its document by it.
func TestSplittingNamesTheInputThatFailsAlone(t *testing.T) {
	embedder := newSplitting(&fickle{hash: testenv.HashEmbedder{Dim: 4}, poison: "xyzzy"},
		BatchTimeout{Base: time.Second, PerInput: time.Millisecond})
	texts := []string{"a", "b", "c", "d", "e xyzzy", "f", "g"}
	_, err := embedder.Embed(context.Background(), texts)
	input, ok := errors.AsType[*knowledge.InputError](err)
	if !ok || input.Index != 4 || !strings.Contains(err.Error(), `an input ("e xyzzy") could not be embedded, even alone`) {
		t.Fatalf("err %v, want input 4 named", err)
	}
}
