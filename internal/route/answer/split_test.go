package answer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// splitAll streams answer through a splitter in pieces of the given sizes.
func splitAll(answer string, sizes func() int) []segment {
	s := newAnswerSplitter()
	var out []segment
	for rest := answer; rest != ""; {
		n := min(max(sizes(), 1), len(rest))
		out = append(out, s.write(rest[:n])...)
		rest = rest[n:]
	}
	return append(out, s.flush()...)
}

func checks(segments []segment) []string {
	var out []string
	for _, s := range segments {
		if s.check != "" {
			out = append(out, s.check)
		}
	}
	return out
}

// The answer is cut into what is checked, whatever the pieces it streams
// in, and the pieces add up to the answer exactly.
func TestSplitterCutsSentencesItemsAndCodeWhateverTheDeltas(t *testing.T) {
	answer := "Sync waves order resources [S1]. Lower waves go first. [S2] Version 1.5 added it!\n\n" +
		"## Steps\n- Open the **Sync** panel.\n12. Click Synchronize.\n" +
		"```\nargocd app sync guestbook. --prune\n```\nVerify the application\n"
	want := []string{"Sync waves order resources [S1].", "Lower waves go first. [S2]", "Version 1.5 added it!",
		"- Open the **Sync** panel.", "12. Click Synchronize.", "```\nargocd app sync guestbook. --prune\n```", "Verify the application"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		sizes := func() int { return 1 + rng.IntN(12) }
		if round == 0 {
			sizes = func() int { return len(answer) }
		}
		segments := splitAll(answer, sizes)
		var joined strings.Builder
		for _, s := range segments {
			joined.WriteString(s.raw)
		}
		if joined.String() != answer {
			t.Fatalf("round %d: segments join to %q", round, joined.String())
		}
		if got := checks(segments); !slices.Equal(got, want) {
			t.Fatalf("round %d: checked %q\nwant %q", round, got, want)
		}
	}
}

// A sentence is complete only once what follows it is known: a marker
// after its full stop still belongs to it.
func TestSplitterWaitsForAMarkerAfterTheFullStop(t *testing.T) {
	s := newAnswerSplitter()
	if got := s.write("Waves go first. [S"); len(got) != 0 {
		t.Fatalf("cut before the marker ended: %+v", got)
	}
	if got := checks(s.write("1] Check health")); !slices.Equal(got, []string{"Waves go first. [S1]"}) {
		t.Fatalf("got %q", got)
	}
	if got := checks(s.flush()); !slices.Equal(got, []string{"Check health"}) {
		t.Fatalf("flush %q", got)
	}
}
