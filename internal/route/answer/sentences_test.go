package answer

import (
	"slices"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/tokenize"
)

// A sentence ends at a full stop, exclamation or question mark before a
// space or line break, or at a line break, and keeps the markers after
// it; the pieces join back to the text, and the stream splitter cuts the
// same prose the same way.
func TestSentencesAreCutOnceForEveryUse(t *testing.T) {
	text := "Lower waves go first. [S1] Is it healthy? Then the next!\nVersion 1.5 added it... e.g. this"
	want := []string{"Lower waves go first. [S1] ", "Is it healthy? ", "Then the next!\n", "Version 1.5 added it... ", "e.g. ", "this"}
	got := Sentences(text)
	if !slices.Equal(got, want) {
		t.Fatalf("Sentences\n%q\nwant\n%q", got, want)
	}
	if strings.Join(got, "") != text {
		t.Errorf("the pieces do not join back to the text")
	}
	var streamed []string
	for _, s := range splitAll(text, func() int { return 3 }) {
		streamed = append(streamed, s.raw)
	}
	if !slices.Equal(streamed, want) {
		t.Errorf("the stream splitter cut\n%q\nwant the same\n%q", streamed, want)
	}
}

// A fragment cut to a budget keeps whole sentences and says it was cut;
// under the shortest useful cut it is nothing.
func TestCutToBudgetKeepsWholeSentences(t *testing.T) {
	tokens := tokenize.NewBERTUncased()
	text := strings.Repeat("Sync waves order the resources of an application during a sync. ", 8)
	plain := func(s string) string { return s }
	cut := CutToBudget(text, 40, tokens, plain)
	if !strings.HasSuffix(cut, ". …") || tokens.Count(strings.TrimSuffix(cut, " …")) > 40 {
		t.Errorf("cut %q (%d tokens)", cut, tokens.Count(cut))
	}
	if got := CutToBudget(text, minCutTokens-1, tokens, plain); got != "" {
		t.Errorf("under %d tokens: %q, want nothing", minCutTokens, got)
	}
}
