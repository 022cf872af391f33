package answer

import (
	"slices"
	"testing"
)

// Prose is not an identifier: a hyphenated word, a list item's number, a
// pair of words joined by a slash; flags, numbers, paths and URLs are.
func TestInventedIdentifiersAreOnlyWhatMustBeCopied(t *testing.T) {
	for sentence, want := range map[string][]string{
		"4. Use the command-line tool to enable/disable sync, e.g. nightly.": nil,
		"Run argocd app sync --prune --timeout 42 on /var/run/argocd.":       {"--prune", "--timeout", "42", "var/run/argocd"},
		"See https://evil.example/x [S1].":                                   {"https://evil.example/x"},
	} {
		if got := inventedIdentifiers(sentence, "argocd app sync"); !slices.Equal(got, want) {
			t.Errorf("%q: invented %q, want %q", sentence, got, want)
		}
	}
}
