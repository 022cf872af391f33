package answer

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/language"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/testenv"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// extractOnly quotes fragments for question, marked S1, S2, … as
// packing marks them, and returns the answer and the markers it cites.
func extractOnly(t *testing.T, question string, reserve int, fragments ...retrieval.Fragment) (string, []string) {
	t.Helper()
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		t.Fatal(err)
	}
	packed := make([]retrieval.Fragment, len(fragments))
	for i, f := range fragments {
		f.Marker = fmt.Sprintf("S%d", i+1)
		packed[i] = f
	}
	embedder := &testenv.HashEmbedder{Dim: 64}
	q := Quoter{Question: embedder, Units: embedder, Tokens: tokens, Budget: reserve}
	answer, err := q.Quote(context.Background(), question, retrieval.ClassifyIntent(question), packed, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cited []string
	for _, f := range Cited(answer, packed) {
		cited = append(cited, f.Marker)
	}
	return answer, cited
}

var (
	wavesFragment = retrieval.Fragment{ID: "w", Title: "Sync Waves", HeadingPath: []string{"Sync Waves"}, SourceURI: "sync-waves.md",
		Text: "Sync waves order the resources of an application during a sync. Lower waves are applied first. " +
			"A wave starts only when the previous one is healthy.\n\n- Annotate a resource with its wave number.\n- The default wave is zero."}
	panelFragment = retrieval.Fragment{ID: "p", Title: "Sync Panel", HeadingPath: []string{"Sync Panel", "Open it"}, SourceURI: "ui.md", Kind: "screen",
		ImageURLs: []string{"https://docs.acme.example/img/sync-panel.png"},
		Text:      "Click the **Sync** button in the toolbar to open the sync panel. Then click **Synchronize**.\n\n![Sync panel open](https://docs.acme.example/img/sync-panel.png)"}
)

func TestExtractiveAnswerQuotesAndCitesTheFragments(t *testing.T) {
	answer, cited := extractOnly(t, "In which order are sync waves applied?", 512, wavesFragment, panelFragment)
	if !strings.Contains(answer, "From Sync Waves [S1]:\n> ") || !strings.Contains(answer, "> Lower waves are applied first.") {
		t.Errorf("answer:\n%s", answer)
	}
	for _, line := range strings.Split(strings.TrimSpace(answer), "\n") {
		quote := strings.TrimPrefix(line, "> ")
		if line == "" || strings.HasPrefix(line, "From ") || line == quote {
			continue
		}
		if !strings.Contains(wavesFragment.Text+panelFragment.Text, quote) {
			t.Errorf("quoted %q, which no fragment says", quote)
		}
	}
	if len(cited) == 0 || cited[0] != "S1" {
		t.Errorf("citations %v", cited)
	}
}

func TestExtractiveAnswerKeepsToTheAnswerBudget(t *testing.T) {
	tokens, _ := tokenize.NewCL100K()
	for _, reserve := range []int{40, 60, 120} {
		answer, _ := extractOnly(t, "In which order are sync waves applied?", reserve, wavesFragment, panelFragment)
		if n := tokens.Count(answer); n > reserve || answer == "" {
			t.Errorf("reserve %d: answer of %d tokens:\n%s", reserve, n, answer)
		}
	}
}

func TestExtractiveScreenAnswerLeadsWithThePathAndImage(t *testing.T) {
	answer, _ := extractOnly(t, "Where do I click to open the sync panel?", 512, wavesFragment, panelFragment)
	want := "**Sync Panel › Open it** [S2]\n![Sync Panel](https://docs.acme.example/img/sync-panel.png)\n"
	if !strings.HasPrefix(answer, want) || !strings.Contains(answer, "> Click the **Sync** button in the toolbar") {
		t.Errorf("answer:\n%s", answer)
	}
	if n := strings.Count(answer, "sync-panel.png"); n != 1 {
		t.Errorf("the screenshot is shown %d times, want once:\n%s", n, answer)
	}
}

// Markdown wraps lines anywhere: a sentence over several lines, and a list
// item with a continuation line, are each one unit, never a line's piece.
func TestAnswerUnitsJoinWrappedLines(t *testing.T) {
	text := "Every expense claim goes through two approvals: first\nthe team lead's approval. A claim that is\nrejected goes back to you.\n\n" +
		"- Open **Claims › New claim** and fill in\n  the amount.\n- Submit it.\n```\nclaims submit\n```\n"
	var got []string
	for _, u := range answerUnits([]retrieval.Fragment{{Text: text}}) {
		got = append(got, u.text)
	}
	want := []string{"Every expense claim goes through two approvals: first the team lead's approval.", "A claim that is rejected goes back to you.",
		"- Open **Claims › New claim** and fill in the amount.", "- Submit it.", "```\nclaims submit\n```"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("units\n%q\nwant\n%q", got, want)
	}
}

// A Russian question's quotes are introduced in Russian.
func TestExtractiveAnswerSpeaksTheQuestionsLanguage(t *testing.T) {
	tokens, err := tokenize.NewCL100K()
	if err != nil {
		t.Fatal(err)
	}
	fragment := retrieval.Fragment{ID: "r", Marker: "S1", Title: "Расходы", HeadingPath: []string{"Как проходит согласование"}, SourceURI: "expenses.md",
		Text: "Каждая заявка на возмещение проходит два согласования. Сначала её утверждает руководитель команды."}
	embedder := &testenv.HashEmbedder{Dim: 64}
	q := Quoter{Question: embedder, Units: embedder, Tokens: tokens, Budget: 512, Language: language.Russian}
	question := "Как проходит согласование заявки?"
	answer, err := q.Quote(context.Background(), question, retrieval.ClassifyIntent(question), []retrieval.Fragment{fragment}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(answer, "Из раздела «"+fragment.Label()+"» [S1]:\n> ") {
		t.Errorf("answer:\n%s", answer)
	}
}
