package models_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/sources"
	"github.com/ragroute/ragroute/internal/testenv"
)

// The local cross-encoder, as `make eval` and `make demo` run it, ranks a
// question's section above two unrelated ones from the same corpus. It
// needs the model fetched (`hack/models.sh fetch rerank`, 35 MB); the test
// does not fetch it.
func TestLocalCrossEncoderRanksTheAnsweringSectionFirst(t *testing.T) {
	root, _ := filepath.Abs("../..")
	for _, f := range []string{"ms-marco-minilm-l12-v2/model.onnx.sha256", "ms-marco-minilm-l12-v2/tokenizer.json.sha256", "rerank-venv/.stamp"} {
		if _, err := os.Stat(filepath.Join(root, "bin/models", f)); err != nil {
			t.Skipf("the local cross-encoder is not installed (bin/models/%s): run `hack/models.sh fetch rerank` to test it", f)
		}
	}
	read, err := sources.ReadMarkdown(filepath.Join(root, "test/eval/corpus/argocd"), "", []string{"public"})
	if err != nil || len(read.Refused) > 0 {
		t.Fatal(err, read.Refused)
	}
	docs := read.Documents
	section := func(source string, path ...string) retrieval.Fragment {
		t.Helper()
		for _, d := range docs {
			if d.Source != source {
				continue
			}
			chunks, err := ingest.Chunks(d, ingest.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range chunks {
				if slices.Equal(c.HeadingPath, path) {
					return retrieval.Fragment{ID: c.ID, Title: c.Title, HeadingPath: c.HeadingPath, Text: c.Text}
				}
			}
		}
		t.Fatalf("no section %s %v in the corpus", source, path)
		return retrieval.Fragment{}
	}
	redis := section("faq.md", "FAQ", "How do I provide my own Redis credentials?", "Using file-based Redis credentials via `REDIS_CREDS_DIR_PATH`")
	triggers := section("operator-manual/notifications/catalog.md", "Triggers and Templates Catalog", "Triggers")
	webhooks := section("user-guide/diff-strategies.md", "Diff Strategies", "Server-Side Diff", "Mutation Webhooks")

	port, err := testenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	server, err := testenv.StartProcess(testenv.ProcessSpec{Command: filepath.Join(root, "hack/models.sh"),
		Args: []string{"run", "rerank", strconv.Itoa(port)}, Env: []string{"MODEL_THREADS=2"}, LogPath: filepath.Join(t.TempDir(), "rerank.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Stop()
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			break
		}
		if server.Exited() || ctx.Err() != nil {
			log, _ := os.ReadFile(server.LogPath)
			t.Fatalf("the reranker did not start: %v\n%s", err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ce := &retrieval.CrossEncoder{BaseURL: base, Model: "ms-marco-MiniLM-L-12-v2", TopN: 3, HTTP: &http.Client{Timeout: time.Minute}}
	for _, tc := range []struct {
		question string
		answer   retrieval.Fragment
		others   []retrieval.Fragment
	}{
		{"Instead of passing the Redis password through env variables, can the Argo CD pods read it from a mounted secret volume?", redis, []retrieval.Fragment{triggers, webhooks}},
		{"Which ready-made notification trigger fires only once per commit when an application ends up synced and healthy?", triggers, []retrieval.Fragment{webhooks, redis}},
		{"With server-side diff enabled, changes made by our mutating admission webhook don't show up in the diff. Can I include them?", webhooks, []retrieval.Fragment{redis, triggers}},
	} {
		// The answering section comes last, so the cross-encoder alone
		// must lift it.
		out, err := ce.Rerank(ctx, tc.question, append(slices.Clone(tc.others), tc.answer))
		if err != nil {
			t.Fatal(err)
		}
		if out[0].ID != tc.answer.ID {
			t.Errorf("%q: ranked %s (%.3f) first, want %s", tc.question, out[0].Label(), out[0].Score, tc.answer.Label())
		}
		if out[0].Score <= out[1].Score {
			t.Errorf("%q: the answer's relevance %g does not exceed the next %g", tc.question, out[0].Score, out[1].Score)
		}
	}
}
