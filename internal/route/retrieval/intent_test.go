package retrieval

import "testing"

func TestClassifyIntent(t *testing.T) {
	cases := map[string]Intent{
		"Where do I click to roll back a release in the deploy console?": IntentScreen,
		"Where is the Sync button?":                                      IntentScreen,
		"Which tab shows the sync status and the health panel?":          IntentScreen,
		"How does the approval of an expense claim work?":                IntentConcept,
		"Why are releases immutable?":                                    IntentConcept,
		"Where is the data stored?":                                      IntentConcept, // asks where, names no UI
	}
	for question, want := range cases {
		if got := ClassifyIntent(question); got != want {
			t.Errorf("%q: %s, want %s", question, got, want)
		}
	}
}
