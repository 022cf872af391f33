package answer

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// storedUnits serves the vectors ingestion stored for some units.
type storedUnits struct {
	vectors      map[uint64][]float32
	ids, parents []string
}

func (s *storedUnits) UnitVectors(_ context.Context, ids, parentIDs []string) (map[uint64][]float32, error) {
	s.ids, s.parents = ids, parentIDs
	return s.vectors, nil
}

// recordingEmbedder records the texts it embeds.
type recordingEmbedder struct {
	*testenv.HashEmbedder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.HashEmbedder.Embed(ctx, texts)
}

// The grounding check and the extractive answer read the units' vectors
// ingestion stored, asking for the chunks by id and the split sections
// by parent, and embed only the units without one (a unit stored under
// other text, a cut fragment's last sentence): the verdicts are those of
// a check that embedded them all.
func TestStoredUnitsAreReadNotEmbedded(t *testing.T) {
	ctx := context.Background()
	hash := testenv.HashEmbedder{Dim: 64}
	section := panelFragment
	section.Reassembled = true
	fragments := []retrieval.Fragment{wavesFragment, section}
	for i := range fragments {
		fragments[i].Marker = []string{"S1", "S2"}[i]
	}
	units := FragmentUnits(wavesFragment.Text)
	stored := &storedUnits{vectors: map[uint64][]float32{}}
	for _, u := range units[1:] { // the first was not stored
		v, _ := hash.Embed(ctx, []string{u})
		stored.vectors[knowledge.UnitHash(u)] = v[0]
	}
	want := append([]string{units[0]}, FragmentUnits(section.Text)...)
	sentences := []string{"Lower waves are applied first [S1].", "Click Synchronize in the sync panel [S2]."}

	reference, err := NewScorer(Embedders{Units: &hash, Sentences: &hash}, fragments, DefaultGroundingThreshold).score(ctx, sentences)
	if err != nil {
		t.Fatal(err)
	}
	recorder := &recordingEmbedder{HashEmbedder: &testenv.HashEmbedder{Dim: 64}}
	scorer := NewScorer(Embedders{Stored: stored, Units: recorder, Sentences: &hash}, fragments, DefaultGroundingThreshold)
	got, err := scorer.score(ctx, sentences)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored.ids, []string{"w"}) || !slices.Equal(stored.parents, []string{"p"}) {
		t.Errorf("asked for chunks %q and sections %q, want [w] and [p]", stored.ids, stored.parents)
	}
	if !slices.Equal(recorder.texts, want) || scorer.embedded != len(want) {
		t.Errorf("the check embedded %q (%d counted), want only the units not stored: %q", recorder.texts, scorer.embedded, want)
	}
	for i := range got {
		if got[i].Status != reference[i].Status || got[i].Marker != reference[i].Marker || got[i].Score != reference[i].Score {
			t.Errorf("sentence %d: %+v, want %+v as when every unit is embedded", i, got[i], reference[i])
		}
	}

	recorder.texts = nil
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		t.Fatal(err)
	}
	q := Quoter{Question: &hash, Units: recorder, Stored: stored, Tokens: tokens, Budget: 512}
	if _, err := q.Quote(ctx, "In which order are sync waves applied?", retrieval.IntentConcept, fragments, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recorder.texts, want) {
		t.Errorf("the extractive answer embedded %q, want only the units not stored: %q", recorder.texts, want)
	}
}
