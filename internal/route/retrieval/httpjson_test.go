package retrieval

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/model"
)

// A reranker or a search gateway that refuses a call may echo what it was
// sent (the fragments, the query): its error keeps the status and the
// reason, and at most a short prefix of the body.
func TestToolErrorBodiesAreCutToAPrefix(t *testing.T) {
	echoed := `{"error":"documents too long: ` + strings.Repeat("fragment text ", 80<<10) + `SECRET-TAIL"}`
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(echoed))
	}))
	defer server.Close()

	ce := &CrossEncoder{BaseURL: server.URL, Model: "m", TopN: 2, HTTP: server.Client(), Retry: model.RetryPolicy{MaxRetries: -1}}
	_, rerankErr := ce.Rerank(context.Background(), "q", []Fragment{{ID: "a", Text: "one"}, {ID: "b", Text: "two"}})
	ws := &WebSearch{BaseURL: server.URL, MaxResults: 3, HTTP: server.Client()}
	_, searchErr := ws.Search(context.Background(), "q")
	for what, err := range map[string]error{"rerank": rerankErr, "web search": searchErr} {
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		msg := err.Error()
		if len(msg) > model.MaxErrorBodyBytes+256 || strings.Contains(msg, "SECRET-TAIL") || !strings.Contains(msg, "400 Bad Request") ||
			!strings.Contains(msg, "documents too long") || !strings.Contains(msg, "(truncated)") {
			t.Errorf("%s: the error (%d bytes) is not the status and the body's prefix marked truncated: %.600s", what, len(msg), msg)
		}
	}
}
