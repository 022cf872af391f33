package knowledge

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// recordingEmbedder returns, for each text, a vector holding its index in
// the call, and records the texts; fail names an input to refuse.
type recordingEmbedder struct {
	texts []string
	fail  string
}

func (e *recordingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.texts = append(e.texts, texts...)
	out := make([][]float32, len(texts))
	for i, text := range texts {
		if text == e.fail {
			return nil, &InputError{Index: i, Err: errors.New("input refused")}
		}
		out[i] = []float32{float32(i)}
	}
	return out, nil
}

// The parts of a split section share a title path: it is embedded once,
// and every part gets its vector.
func TestEachTitlePathIsEmbeddedOnce(t *testing.T) {
	rows := []Row{
		{Source: "a.md", Title: "Расходы", HeadingPath: []string{"Чеки"}, Text: "part one"},
		{Source: "a.md", Title: "Расходы", HeadingPath: []string{"Чеки"}, Text: "part two"},
		{Source: "a.md", Title: "Расходы", HeadingPath: []string{"Согласование"}, Text: "approval"},
	}
	embedder := &recordingEmbedder{}
	if err := (&Store{}).embedInto(context.Background(), rows, embedder); err != nil {
		t.Fatal(err)
	}
	want := []string{rows[0].EmbeddedText(), "Расходы › Чеки", rows[1].EmbeddedText(), rows[2].EmbeddedText(), "Расходы › Согласование"}
	if !slices.Equal(embedder.texts, want) {
		t.Fatalf("embedded %q, want %q", embedder.texts, want)
	}
	for i, w := range []struct{ text, title float32 }{{0, 1}, {2, 1}, {3, 4}} {
		if rows[i].TextVector[0] != w.text || rows[i].TitleVector[0] != w.title {
			t.Errorf("row %d: text vector %v, title vector %v; want inputs %v and %v", i, rows[i].TextVector, rows[i].TitleVector, w.text, w.title)
		}
	}
}

// An input the embedder refuses names the document it came from, when
// titles are shared too.
func TestARefusedInputNamesItsDocument(t *testing.T) {
	rows := []Row{
		{Source: "a.md", Title: "A", Text: "one"},
		{Source: "a.md", Title: "A", Text: "two"},
		{Source: "b.md", Title: "B", Text: "three"},
	}
	err := (&Store{}).embedInto(context.Background(), rows, &recordingEmbedder{fail: rows[2].EmbeddedText()})
	if err == nil || !strings.Contains(err.Error(), "document b.md") {
		t.Errorf("error %v, want it to name b.md", err)
	}
}
