package language

import "testing"

func TestOfTellsRussianQuestionsFromEnglishOnes(t *testing.T) {
	cases := []struct {
		text string
		want Tag
	}{
		{"Какое поле на этой форме отвечает за цену?", Russian},
		{"как настроить liveness probe", Russian},
		// More English terms than Russian words: still Russian.
		{"Как настроить ServiceAccount для Pod в namespace kube-system?", Russian},
		{"Что делает kubectl rollout undo deployment/nginx?", Russian},
		{"How do I configure a liveness probe?", English},
		// One quoted Russian word in an English question.
		{"What does the word «скидка» mean in the expense policy?", English},
		{"Ёлка", Russian},
		{"", English},
		{"42 ?!", English},
		{"Wie konfiguriere ich eine Probe?", English}, // Latin script reads as English
	}
	for _, c := range cases {
		if got := Of(c.text); got != c.want {
			t.Errorf("Of(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

func TestIsSupported(t *testing.T) {
	for _, tag := range []string{"en", "ru"} {
		if !IsSupported(tag) {
			t.Errorf("IsSupported(%q) = false", tag)
		}
	}
	for _, tag := range []string{"", "de", "RU", "ru-RU", "russian"} {
		if IsSupported(tag) {
			t.Errorf("IsSupported(%q) = true", tag)
		}
	}
}
