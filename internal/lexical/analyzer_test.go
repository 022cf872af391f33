package lexical

import (
	"strings"
	"testing"
)

func mustNew(t *testing.T, languages ...string) Analyzer {
	t.Helper()
	a, err := New(languages)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The forms of one word a question and a page use meet as one term.
func TestInflectedFormsShareATerm(t *testing.T) {
	a := mustNew(t, Russian, English)
	for _, forms := range [][]string{
		{"скидка", "скидки", "скидкой", "Скидку"},
		{"организация", "организации", "организацию"},
		{"probe", "probes", "Probes"},
		{"configure", "configuring", "configured"},
		{"ёлка", "елки", "Ёлкой"},
	} {
		want := a.Analyze(forms[0])
		for _, f := range forms[1:] {
			if got := a.Analyze(f); got != want {
				t.Errorf("%q analyzes to %q, %q to %q: want one term", forms[0], want, f, got)
			}
		}
	}
}

// Each word is stemmed by its script's language, stop words of both are
// dropped, and identifiers keep usable terms.
func TestAnalyzeFixedStrings(t *testing.T) {
	a := mustNew(t, Russian, English)
	for _, tc := range []struct{ in, want string }{
		{"Как настроить liveness probe?", "настро live probe"},
		{"Какие скидки положены сотрудникам?", "как скидк полож сотрудник"},
		{"The pods are restarting", "pod restart"},
		{"v1.2 kube-proxy ConfigMap", "v1 2 kube proxi configmap"},
		{"API-ключ для k8s", "api ключ k8s"},
		{"и в на the of", ""},
		{"  ", ""},
	} {
		if got := a.Analyze(tc.in); got != tc.want {
			t.Errorf("Analyze(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Only the analyzer's languages stem and drop their stop words; words of
// another script are lower-cased and kept.
func TestOnlyTheAnalyzersLanguagesAreStemmed(t *testing.T) {
	english := mustNew(t, English)
	if got, want := english.Analyze("Скидки and the probes"), "скидки probe"; got != want {
		t.Errorf("english only: %q, want %q", got, want)
	}
	russian := mustNew(t, Russian)
	if got, want := russian.Analyze("Скидки и the probes"), "скидк the probes"; got != want {
		t.Errorf("russian only: %q, want %q", got, want)
	}
}

// No languages: the text goes to Milvus as it is, as before ragroute
// analyzed it.
func TestNoLanguagesLeavesTextAsItIs(t *testing.T) {
	a := mustNew(t)
	if in := "Скидки и the probes, v1.2"; a.Analyze(in) != in {
		t.Errorf("Analyze(%q) = %q, want it unchanged", in, a.Analyze(in))
	}
	if a.ID() != "none" || (Analyzer{}).ID() != "none" {
		t.Errorf("no languages: ID %q, zero Analyzer %q; want none", a.ID(), Analyzer{}.ID())
	}
}

// The ID names the languages in one order whatever order the config
// lists them in, so a reordered list builds no new generation.
func TestIDNamesLanguagesInOneOrder(t *testing.T) {
	for _, languages := range [][]string{{Russian, English}, {English, Russian}} {
		if got := mustNew(t, languages...).ID(); got != "snowball:russian+english/v1" {
			t.Errorf("%v: ID %q", languages, got)
		}
	}
	if got := mustNew(t, English).ID(); got != "snowball:english/v1" {
		t.Errorf("english: ID %q", got)
	}
}

func TestNewRefusesUnknownAndRepeatedLanguages(t *testing.T) {
	for _, languages := range [][]string{{"german"}, {Russian, Russian}, {""}} {
		if _, err := New(languages); err == nil {
			t.Errorf("New(%q) accepted", languages)
		}
	}
	_, err := New([]string{"german"})
	if err == nil || !strings.Contains(err.Error(), "german") {
		t.Errorf("New(german): %v, want the language named", err)
	}
}

// A Russian stop word is what RussianTerm drops, in any case and with ё.
func TestIsRussianStopWordAgreesWithTheTerm(t *testing.T) {
	for _, w := range []string{"как", "Как", "ЕЩЁ", "её", "на", "согласование", "скидкой", "kubectl", "podы"} {
		if got, want := IsRussianStopWord(w), RussianTerm(w) == ""; got != want {
			t.Errorf("IsRussianStopWord(%q) = %v, RussianTerm %q", w, got, RussianTerm(w))
		}
	}
	if !IsRussianStopWord("ЕЩЁ") || IsRussianStopWord("согласование") {
		t.Error("ЕЩЁ is a stop word, согласование is not")
	}
}
