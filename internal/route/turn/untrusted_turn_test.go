package turn_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// injectionTechniques maps each document of testdata/injection to the
// technique it hides (ru-: in Russian); clean.md hides none. No name
// begins another: openingLine finds a source by its URI's start.
var injectionTechniques = map[string]string{
	"override.md":        ingest.TechniqueOverride,
	"ru-override.md":     ingest.TechniqueOverride,
	"persona.md":         ingest.TechniquePersona,
	"ru-persona.md":      ingest.TechniquePersona,
	"exfiltration.md":    ingest.TechniqueExfiltration,
	"ru-exfiltration.md": ingest.TechniqueExfiltration,
	"template.md":        ingest.TechniqueChatTemplate,
	"toolcall.md":        ingest.TechniqueToolCall,
	"comment.md":         ingest.TechniqueHiddenHTML,
	"hidden.md":          ingest.TechniqueHiddenChars,
	"clean.md":           "",
}

// newInjectionWorld is a route over the injection corpus in Milvus Lite,
// with a scripted model; routetest.NewWorld's, over other documents.
func newInjectionWorld(t *testing.T) *routetest.World {
	t.Helper()
	var rows []knowledge.Row
	for name := range injectionTechniques {
		data, err := os.ReadFile(filepath.Join("testdata", "injection", name))
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := ingest.Chunks(ingest.Document{Source: name, URI: "https://docs.acme.example/" + strings.TrimSuffix(name, ".md"),
			Principals: []string{"group:staff"}, Content: string(data)}, ingest.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			rows = append(rows, ingestion.RowFromChunk(ch))
		}
	}
	cfg := routetest.Config(16384)
	cfg.Store.Search.Candidates = 20
	cfg.Retrieval.SimilarityFloor, cfg.Retrieval.StrictFloor, cfg.Retrieval.MaxFragments = -1, -1, int32(len(injectionTechniques))
	return routetest.NewWorldOver(t, rows, cfg)
}

// injectionQuery finds every document of the corpus.
const injectionQuery = "backup release quota audit proxy log certificate"

// answeringCall is what the model received when it answered: the last
// call, made without tools.
func answeringCall(t *testing.T, w *routetest.World) testenv.ChatRequest {
	t.Helper()
	seen := w.Models.Seen()
	if len(seen) < 2 || len(seen[len(seen)-1].Tools) != 0 {
		t.Fatalf("want a search round then an answering call; got %d calls", len(seen))
	}
	return seen[len(seen)-1]
}

func TestEachInjectionTechniqueIsFlaggedAndAnnouncedByDefault(t *testing.T) {
	w := newInjectionWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer(injectionQuery, "Backups run nightly [S1].")
	events := w.Run(t, []string{"group:staff"}, routetest.User("What are the backup and quota rules?"))
	if got := routetest.AnswerOf(events); got != "Backups run nightly [S1]." {
		t.Fatalf("answer %q", got)
	}
	call := answeringCall(t, w)
	tool := call.Messages[len(call.Messages)-1].Content
	for name, technique := range injectionTechniques {
		open := openingLine(tool, "https://docs.acme.example/"+strings.TrimSuffix(name, ".md"))
		switch {
		case open == "":
			t.Errorf("%s was not packed", name)
		case technique == "" && strings.Contains(open, "flagged"):
			t.Errorf("clean %s is announced as flagged: %q", name, open)
		case technique != "" && !strings.Contains(open, "flagged ("+technique+": "):
			t.Errorf("%s: opening line %q does not state %q", name, open, technique)
		}
	}
}

// openingLine is the fence line of the fragment from source in a tool
// result; "" when none.
func openingLine(tool, source string) string {
	for _, line := range strings.Split(tool, "\n") {
		if strings.HasPrefix(line, "⟦data-") && strings.Contains(line, "| "+source) {
			return line
		}
	}
	return ""
}
