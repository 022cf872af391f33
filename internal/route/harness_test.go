package route

import "testing"

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
