package adversarial

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	chunking "github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/ingestion"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/testenv"
)

// hostilePage is a page one of the hardening passes found could stop a
// store's ingestion or read what it should not, and the words its
// refusal must hold (empty: it is ingested).
type hostilePage struct {
	name, refusal string
	write         func(t *testing.T, path, marker string)
}

// writePage writes content at path, with its folders.
func writePage(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pageBody is a page every query finds, holding marker.
func pageBody(title, marker string) string {
	return "# " + title + "\n\n" + marker + " " + vocabulary + "\n"
}

// hostilePages are the hostile pages of every hardening pass, put in the
// public wiki source beside its good pages.
var hostilePages = []hostilePage{
	{"latin1.md", "not UTF-8", func(t *testing.T, path, m string) {
		writePage(t, path, pageBody("Caf\xe9", m)+"Le caf\xe9 est ouvert.\n") // ISO-8859-1: pass 4, finding 2
	}},
	{"caf\xe9.md", "not UTF-8", func(t *testing.T, path, m string) { // a Latin-1 file name
		writePage(t, path, pageBody("Menu", m))
	}},
	{"shortcodes.md", "", func(t *testing.T, path, m string) {
		// Unclosed comment shortcodes and openers without a closer, 250 KB:
		// 125 s of reading before pass 4 (finding 3).
		var b strings.Builder
		b.WriteString(pageBody("Shortcodes", m))
		for b.Len() < 250_000 {
			b.WriteString("{{< comment >}} never closed\n")
		}
		writePage(t, path, b.String()+"{{< note ")
	}},
	{"wide.md", "repeat more than", func(t *testing.T, path, m string) {
		// A 25 KB table header over rows of one cell: each part repeats
		// the header (pass 4, the per-document bound).
		writePage(t, path, pageBody("Wide", m)+"\n| "+strings.Repeat("h", 25<<10)+" |\n|---|\n"+strings.Repeat("| a |\n", 2000))
	}},
	{"unbroken.md", "took longer than", func(t *testing.T, path, m string) {
		// 2 MB of Japanese without a space, a blank line or a sentence's
		// end: minutes to chunk (pass 4, the per-document bound).
		writePage(t, path, pageBody("Unbroken", m)+strings.Repeat("日本語の文書", 2<<20/len("日本語の文書")))
	}},
	{"huge.md", "is over 8388608 bytes", func(t *testing.T, path, m string) {
		writePage(t, path, pageBody("Huge", m)+strings.Repeat("x", chunking.MaxDocumentBytes))
	}},
	{"many.md", "chunks", func(t *testing.T, path, m string) {
		writePage(t, path, pageBody("Many", m)+strings.Repeat("## h\n\nx\n\n", chunking.MaxChunksPerDocument+1))
	}},
	{"frontmatter.md", "front matter", func(t *testing.T, path, m string) {
		writePage(t, path, "---\nacl: 5\n---\n"+pageBody("Front matter", m))
	}},
	{"dangling.md", "leads nowhere", func(t *testing.T, path, _ string) {
		if err := os.Symlink("gone.md", path); err != nil {
			t.Fatal(err)
		}
	}},
	{"escape.md", "outside the source", func(t *testing.T, path, _ string) { // to the ops runbook
		if err := os.Symlink("../ops/runbook.md", path); err != nil {
			t.Fatal(err)
		}
	}},
	{"fifo.md", "not a regular file", func(t *testing.T, path, _ string) {
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}},
}

// hostileStore is the mounts of an ingestion run: the ops runbook and the
// public wiki's good pages, with the hostile pages beside them.
type hostileStore struct {
	mounts string
	cfg    podconfig.IngestConfig
	target ingestion.Target
	// good is each good page's marker; hostile each hostile page's.
	good, hostile map[string]string
}

func newHostileStore(t *testing.T, models *testenv.ModelServer) *hostileStore {
	t.Helper()
	ctx := context.Background()
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: routetest.Milvus.Get(t).URI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	collection := fmt.Sprintf("hostile%d", time.Now().UnixNano()%1e12)
	s := &hostileStore{mounts: t.TempDir(), good: map[string]string{}, hostile: map[string]string{}}
	s.cfg = podconfig.IngestConfig{
		Version: podconfig.IngestVersion, Store: "hostile",
		Milvus:    podconfig.Milvus{URI: routetest.Milvus.Get(t).URI, Collection: collection},
		Embedding: podconfig.Embedding{BaseURL: models.BaseURL(), Model: "hash", Dimensions: dim},
		Chunking:  podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 60},
		Sources: []podconfig.Source{
			{Name: "ops", Root: filepath.Join(s.mounts, "ops"), Path: filepath.Join(s.mounts, "ops"), Principals: []string{"group:ops", "user:alice"}},
			{Name: "wiki", Root: filepath.Join(s.mounts, "wiki"), Path: filepath.Join(s.mounts, "wiki"), Principals: []string{"public"}},
		},
	}
	s.target = ingestion.Target{
		Store:    knowledge.NewStore(client, collection, dim),
		Embedder: model.NewEmbeddings(model.EmbeddingsConfig{BaseURL: models.BaseURL(), Model: "hash", Dimensions: dim}),
		// Shorter than the Job's 30 s, so the run is short; the pages
		// that pass it take milliseconds.
		DocumentTimeout: 3 * time.Second,
	}
	n := 1
	next := func() string { n++; return markerOf(n - 1) }
	for _, name := range []string{"ops/runbook.md", "wiki/handbook.md", "wiki/retired.md"} {
		s.good[name] = next()
		writePage(t, filepath.Join(s.mounts, name), pageBody(strings.Repeat("Überlange Überschrift ", 28), s.good[name]))
	}
	for _, p := range hostilePages {
		s.hostile[p.name] = next()
		p.write(t, filepath.Join(s.mounts, "wiki", p.name), s.hostile[p.name])
	}
	return s
}

// ingest runs an ingestion of the mounts as the Job does, and checks that
// it succeeded with every hostile page refused and named, or ingested
// where a pass made it readable.
func (s *hostileStore) ingest(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	summary, err := ingestion.Run(ctx, s.cfg, s.target, quietProgress{})
	if err != nil {
		t.Fatalf("the ingestion run failed with the hostile pages in its sources: %v", err)
	}
	refused := strings.Join(summary.Rejected, "\n")
	for _, p := range hostilePages {
		quoted := strconv.Quote(p.name)
		named := slices.ContainsFunc(summary.Rejected, func(r string) bool {
			return strings.Contains(r, p.name) || strings.Contains(r, quoted[1:len(quoted)-1])
		})
		if p.refusal != "" && !named {
			t.Errorf("hostile page %q not named among the refused:\n%s", p.name, refused)
		}
		if p.refusal != "" && named && !strings.Contains(refused, p.refusal) {
			t.Errorf("hostile page %q refused without saying %q:\n%s", p.name, p.refusal, refused)
		}
	}
	for name := range s.good {
		source, file := filepath.Split(name)
		if slices.ContainsFunc(summary.Rejected, func(r string) bool {
			return strings.HasPrefix(r, name) || strings.HasPrefix(r, "source "+strings.TrimSuffix(source, "/")+": "+file)
		}) {
			t.Errorf("good page %s refused:\n%s", name, refused)
		}
	}
	t.Logf("ingested %d files, %d chunks; refused:\n%s", summary.Files, summary.Chunks, refused)
}

// acl is what each marker's readers are, for the harness: the good pages'
// and the pages a pass made readable; a refused page's marker is none
// of them, so any caller who sees it counts as a leak.
func (s *hostileStore) acl(narrowed bool) map[string][]string {
	acl := map[string][]string{
		s.good["ops/runbook.md"]:   {"group:ops", "user:alice"},
		s.good["wiki/handbook.md"]: {"public"},
		s.good["wiki/retired.md"]:  {"public"},
		s.hostile["shortcodes.md"]: {"public"},
	}
	if narrowed {
		acl[s.good["ops/runbook.md"]] = []string{"user:alice"}
		acl[s.good["wiki/retired.md"]] = []string{}
	}
	return acl
}

// narrow narrows the runbook to alice in its front matter and deletes the
// retired page, as an edit of the sources does.
func (s *hostileStore) narrow(t *testing.T) {
	t.Helper()
	runbook := filepath.Join(s.mounts, "ops/runbook.md")
	writePage(t, runbook, "---\nacl: [user:alice]\n---\n"+pageBody("Runbook", s.good["ops/runbook.md"]))
	if err := os.Remove(filepath.Join(s.mounts, "wiki/retired.md")); err != nil {
		t.Fatal(err)
	}
}

type quietProgress struct{}

func (quietProgress) Read(int, int)                 {}
func (quietProgress) Synced(knowledge.SyncProgress) {}

// The hostile pages of every hardening pass, in a source beside good
// pages, ingested by the ingestion run as the Job runs it: the run
// succeeds, each hostile page is refused and named (or, where a pass
// made it readable, ingested), the good pages are served to their
// readers on both cache backends, and a narrowed ACL and a deleted page
// take effect in the next run with the hostile pages still there.
func TestHostileCorpusAdversarial(t *testing.T) {
	testenv.Integration(t, "Milvus Lite and redis-server")
	models := testenv.StartModelServer(dim)
	t.Cleanup(models.Close)
	models.Chat = echo
	requests := max(*requests/5, 100)
	var all []*tally
	for _, b := range cacheBackends(t, "hostile") {
		s := newHostileStore(t, models)
		s.ingest(t)
		srv := serve(t, s.target.Store, models, b.cache)
		tl := newTally(b.name)
		start := time.Now()
		run(t, srv, tl, s.acl(false), 0, requests/2)
		for name, m := range s.good {
			if !tl.distinct[m] {
				t.Errorf("%s: good page %s (%s) never served", b.name, name, m)
			}
		}
		s.narrow(t)
		s.ingest(t)
		run(t, srv, tl, s.acl(true), requests/2, requests)
		tl.wall = time.Since(start)
		tl.hits, tl.misses = cacheLookups(t, srv)
		all = append(all, tl)
	}
	report(t, all, len(hostilePages)+3)
}
