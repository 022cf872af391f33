package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/testenv"
)

// peerWithAFailure is a peer file as hack/compare writes it when one
// configuration's ingestion failed: that configuration has no results.
const peerWithAFailure = `{"embedder": "hash/64", "configs": {
 "llamaindex-markdown-hybrid": {"chunks": 9, "largest_chunk_bytes": 145809, "ingest_seconds": 3.5,
  "failure": "MilvusException: the length (145809) of 'text' exceeds max length (65535)", "questions": {}},
 "llamaindex-markdown-sentence-hybrid": {"chunks": 12, "largest_chunk_bytes": 4100, "ingest_seconds": 4.25,
  "questions": {"q1": {"ms": 12, "results": [{"source": "docs/a.md", "text": "x", "heading_path": ["A"]}]}}}}}`

// A peer configuration whose ingestion failed is a row with its reason,
// not the end of the comparison; the others are scored.
func TestAFailedPeerConfigurationIsARow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peer.json")
	if err := os.WriteFile(path, []byte(peerWithAFailure), 0o644); err != nil {
		t.Fatal(err)
	}
	file := "a.md"
	peers, err := loadPeer(path, []eval.Question{{ID: "q1", Question: "?", GoldFile: &file, GoldHeading: []string{"A"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 2 || !peers[0].failed() || peers[0].outcomes != nil || peers[1].failed() || len(peers[1].outcomes) != 1 {
		t.Fatalf("peers %+v: want the markdown one failed without outcomes, the other with its one", peers)
	}
	if got := peers[0].ingestion; got.Chunks != 9 || got.LargestChunkBytes != 145809 || !strings.Contains(got.Failure, "exceeds max length (65535)") {
		t.Errorf("failed row %+v", got)
	}
	// Without questions every configuration is an ingestion row.
	peers, err = loadPeer(path, nil)
	if err != nil || len(peers) != 2 || peers[1].ingestion.Seconds != 4.25 {
		t.Fatalf("without questions: %+v, %v", peers, err)
	}
	table := Table(Report{Route: "default/support", Ingestion: []IngestionRow{{Config: RouteDefault, Chunks: 30, LargestChunkBytes: 900, Seconds: 2},
		peers[0].ingestion, peers[1].ingestion}})
	for _, want := range []string{
		"| route | 30 | 900 bytes | 2.0 s | none |",
		"| llamaindex-markdown-hybrid | 9 | 145809 bytes | 3.5 s | MilvusException: the length (145809) of 'text' exceeds max length (65535) |",
		"No questions: ingestion only",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// On a corpus without questions (the OpenTelemetry pages in the ingest
// fixtures) the evaluation ingests the heading-tree chunks and reports
// them beside the peer's rows, failed one included.
func TestWithoutQuestionsOnlyIngestionIsMeasured(t *testing.T) {
	testenv.Integration(t, "Milvus Lite")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	milvus, err := testenv.StartMilvusLite(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(milvus.Stop)
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: milvus.URI})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(ctx)
	path := filepath.Join(t.TempDir(), "peer.json")
	if err := os.WriteFile(path, []byte(peerWithAFailure), 0o644); err != nil {
		t.Fatal(err)
	}
	report, err := Run(ctx, Options{
		Corpus: filepath.Join("..", "..", "ingest", "testdata", "docs"), Peer: path,
		Client:   func(alias string) *knowledge.Store { return knowledge.NewStore(client, alias, 64) },
		Embedder: &testenv.HashEmbedder{Dim: 64}, Fingerprint: "hash-64",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", Table(report))
	if report.Questions != 0 || len(report.Configs) != 0 || len(report.Ingestion) != 3 {
		t.Fatalf("report %+v: want ingestion rows only", report)
	}
	route := report.Ingestion[0]
	if route.Config != RouteDefault || route.Chunks < 10 || route.Failure != "" || route.LargestChunkBytes <= 0 || route.LargestChunkBytes > 64<<10 {
		t.Errorf("route row %+v", route)
	}
	if report.Ingestion[1].Failure == "" || report.Ingestion[2].Failure != "" {
		t.Errorf("peer rows %+v", report.Ingestion[1:])
	}
}
