package turn

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
		if a, b := searchKey(p[0]), searchKey(p[1]); a != b {
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
		if a, b := searchKey(p[0]), searchKey(p[1]); a == b {
			t.Errorf("%q and %q are different searches, both normalised to %q", p[0], p[1], a)
		}
	}
}

// The model's list of the question's parts: its JSON list, the question
// itself and repeats dropped, at most three; a list of one, or a reply
// that is not the list, is no parts.
func TestPartsOfTheModelsList(t *testing.T) {
	question := "How are sync waves ordered, and what removes stale objects?"
	cases := []struct {
		reply string
		want  []string
	}{
		{`{"questions": ["How are sync waves ordered?", "What removes stale objects?"]}`,
			[]string{"How are sync waves ordered?", "What removes stale objects?"}},
		{`{"questions": ["sync waves order", "prune", "hooks", "health checks"]}`, []string{"sync waves order", "prune", "hooks"}},
		{`{"questions": ["sync waves order", "Sync WAVES order?", "\"prune resources\""]}`, []string{"sync waves order", "prune resources"}},
		{"```json\n{\"questions\": [\"2FA setup\", \"SSO login\"]}\n```", []string{"2FA setup", "SSO login"}},
		{`{"questions": ["sync waves order"]}`, nil},
		{`{"questions": ["` + question + `", "prune"]}`, nil},
		{"1. sync waves order\n2. pruning stale resources\n", nil},
		{`{"questions": "sync waves order"}`, nil},
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
