package route

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Two queries are the same search when only case, punctuation at word
// edges, word order, repeats or common words differ; symbols and
// combining marks make them different.
func TestQueriesAreTheSameSearchOnlyWhenTheyAskTheSame(t *testing.T) {
	same := [][2]string{
		{"sync waves", "  Sync WAVES? "},
		{"install the SDK", "SDK install"},
		{"how do sync waves order resources", "resources order sync waves"},
		{"prune prune resources", "resources prune"},
		{"how is it done", "How is it done?"}, // common words only: kept whole
	}
	for _, p := range same {
		if a, b := normaliseQuery(p[0]), normaliseQuery(p[1]); a != b {
			t.Errorf("%q and %q are one search, got %q and %q", p[0], p[1], a, b)
		}
	}
	different := [][2]string{
		{"C++ SDK install", "C# SDK install"},
		{"C++ SDK install", "C SDK install"},
		{"हिंदी दस्तावेज़", "ह द द"}, // vowel signs are part of the words
		{"sync waves", "sync hooks"},
		{"how is it done", "how is it"},
	}
	for _, p := range different {
		if a, b := normaliseQuery(p[0]), normaliseQuery(p[1]); a == b {
			t.Errorf("%q and %q are different searches, both normalised to %q", p[0], p[1], a)
		}
	}
}

// The model's list of the question's parts: one query a line, markers
// aside, the question itself and repeats dropped, at most three; a list of
// one is no parts.
func TestPartsOfTheModelsList(t *testing.T) {
	question := "How are sync waves ordered, and what removes stale objects?"
	cases := []struct {
		reply string
		want  []string
	}{
		{"1. sync waves order\n2) pruning stale resources\n", []string{"sync waves order", "pruning stale resources"}},
		{"- sync waves order\n* prune\n• hooks\n- health checks\n", []string{"sync waves order", "prune", "hooks"}},
		{"sync waves order\n\nSync WAVES order?\n\"prune resources\"\n", []string{"sync waves order", "prune resources"}},
		{"2FA setup\nSSO login", []string{"2FA setup", "SSO login"}},
		{"sync waves order", nil},
		{question + "\nprune", nil},
		{"", nil},
	}
	for _, tc := range cases {
		got := partsOf(tc.reply, question)
		if len(got) != len(tc.want) {
			t.Errorf("partsOf(%q) = %q, want %q", tc.reply, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("partsOf(%q) = %q, want %q", tc.reply, got, tc.want)
			}
		}
	}
}

// A forced finalize takes each search's best first, then each one's
// second: the searches of a question's parts are not ranked on one scale,
// and a part's best must not lose its place to another part's third.
func TestForcedFinalizeTakesEachSearchsBestFirst(t *testing.T) {
	h := newHarness(agenticMaxRounds, newHarnessProtocol(""))
	h.startRound()
	fragments := func(scores ...float64) []retrieval.Fragment {
		var out []retrieval.Fragment
		for _, s := range scores {
			out = append(out, retrieval.Fragment{ID: fmt.Sprintf("row-%v", s), Score: s})
		}
		return out
	}
	all := func(f shownFragment) (shownFragment, bool) { return f, true }
	h.show("sync waves", fragments(0.9, 0.8, 0.7), all)
	h.show("prune", fragments(0.4, 0.3), all)
	h.show("hooks", fragments(0.8, 0.2), all) // its best was found before: once
	_, ids := h.forced(4)
	if want := []string{"F1", "F4", "F2", "F5"}; !slices.Equal(ids, want) {
		t.Errorf("forced %v, want %v (each search's best, then the seconds)", ids, want)
	}
}
