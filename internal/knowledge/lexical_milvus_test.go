package knowledge

import (
	"context"
	"slices"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/ingest"
	"github.com/ragroute/ragroute/internal/lexical"
	"github.com/ragroute/ragroute/internal/testenv"
)

// inflectedRows are a Russian page that says «скидка» and an English one
// that says "configuring", neither in the form a question asks for.
func inflectedRows(t *testing.T) []Row {
	return rowsOf(t, []ingest.Document{
		{Source: "discounts.md", Principals: []string{"public"},
			Content: "# Скидка сотрудникам\n\nСотрудникам положена скидка на обучение и конференции."},
		{Source: "probes.md", Principals: []string{"public"},
			Content: "# Probes\n\nConfiguring a liveness probe restarts a pod that hangs."},
		{Source: "other.md", Principals: []string{"public"},
			Content: "# Отпуск\n\nОтпуск согласуют с руководителем за две недели."},
	})
}

func russianAndEnglish(t *testing.T) lexical.Analyzer {
	t.Helper()
	a, err := lexical.New([]string{lexical.Russian, lexical.English})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// keywordSearch runs one BM25 primitive alone, so only the words match.
func keywordSearch(t *testing.T, store *Store, p Primitive, query string) []Hit {
	t.Helper()
	hits, err := store.HybridSearch(context.Background(), SearchRequest{
		Query: query, Vector: make([]float32, testDim), Principals: []string{"public"},
		Primitives: []Primitive{p}, Candidates: 10, RRFK: 60,
	})
	if err != nil {
		t.Fatalf("%s search %q: %v", p, query, err)
	}
	return hits
}

// A question's word in another inflection than the page's finds the page
// by BM25 over Milvus Lite, in its text and in its title, because the
// store stems both sides with one analyzer before Milvus sees them; the
// hit shows the page's own text, not its terms.
func TestKeywordSearchFindsAnotherInflection(t *testing.T) {
	store := testStore(t, testDim).WithAnalyzer(russianAndEnglish(t))
	rows := inflectedRows(t)
	if _, err := store.Ingest(context.Background(), RowsOf(rows), &testenv.HashEmbedder{Dim: testDim}, "hash-64", SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		primitive Primitive
		query     string
		want      string
	}{
		{TextSparse, "скидкой", "discounts.md"},
		{TextSparse, "какие скидки положены?", "discounts.md"},
		{TitleSparse, "скидки", "discounts.md"},
		{TextSparse, "how to configure liveness probes", "probes.md"},
	} {
		hits := keywordSearch(t, store, tc.primitive, tc.query)
		if len(hits) == 0 || hits[0].Source != tc.want {
			t.Errorf("%s %q found %v, want %s first", tc.primitive, tc.query, sourcesOf(hits), tc.want)
			continue
		}
		if i := slices.IndexFunc(rows, func(r Row) bool { return r.ID == hits[0].ID }); i < 0 || hits[0].Text != rows[i].Text {
			t.Errorf("the hit's text is %q, want the page's own words", hits[0].Text)
		}
	}
	if hits := keywordSearch(t, store, TextSparse, "что это и как"); len(hits) != 0 {
		t.Errorf("a question of stop words alone found %v", sourcesOf(hits))
	}
}

// The generation records the analyzer that built it; an ingestion with
// another analyzer builds a new generation, one with the same does not.
func TestAnotherAnalyzerBuildsANewGeneration(t *testing.T) {
	ctx := context.Background()
	embedder := &testenv.HashEmbedder{Dim: testDim}
	store := testStore(t, testDim).WithAnalyzer(russianAndEnglish(t))
	first, err := store.Ingest(ctx, RowsOf(inflectedRows(t)), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Generation.Analyzer != "snowball:russian+english/v1" {
		t.Fatalf("generation %d records the analyzer %q", first.Generation.Number, first.Generation.Analyzer)
	}
	again, err := store.Ingest(ctx, RowsOf(inflectedRows(t)), embedder, "hash-64", SyncOptions{})
	if err != nil || again.NewGeneration || again.Written != 0 {
		t.Fatalf("the same analyzer again: %+v, %v; want the generation kept as it is", again, err)
	}

	plain := NewStore(store.client, store.alias, testDim)
	second, err := plain.Ingest(ctx, RowsOf(inflectedRows(t)), embedder, "hash-64", SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gen, _, err := plain.Active(ctx)
	if err != nil || !second.NewGeneration || gen.Number != first.Generation.Number+1 || gen.Analyzer != "none" {
		t.Fatalf("no analyzer after stemming: serving %+v (%v), want generation %d of analyzer none", gen, err, first.Generation.Number+1)
	}
	if hits := keywordSearch(t, plain, TextSparse, "скидкой"); len(hits) != 0 {
		t.Errorf("without stemming «скидкой» found %v", sourcesOf(hits))
	}
}

// A generation of schema 4 (BM25 over the raw text, no analyzer recorded)
// still serves until the next ingestion rebuilds it: its keyword search
// gets the query as it is, so exact words still match.
func TestACollectionWithoutLexicalFieldsGetsRawQueries(t *testing.T) {
	ctx := context.Background()
	store := testStore(t, testDim).WithAnalyzer(russianAndEnglish(t))
	rows := inflectedRows(t)
	if err := store.embedInto(ctx, rows, &testenv.HashEmbedder{Dim: testDim}); err != nil {
		t.Fatal(err)
	}
	legacy := generationName(store.alias, 1)
	lexicalField := func(name string) bool { return name == FieldTextLexical || name == FieldTitleLexical }
	schema := Schema(legacy, testDim)
	schema.Fields = slices.DeleteFunc(schema.Fields, func(f *entity.Field) bool { return lexicalField(f.Name) })
	for _, f := range schema.Fields {
		if f.Name == FieldText || f.Name == FieldTitlePath {
			f.WithEnableAnalyzer(true)
		}
	}
	schema.Functions = nil
	for input, output := range map[string]string{FieldText: FieldTextSparse, FieldTitlePath: FieldTitleSparse} {
		schema.WithFunction(entity.NewFunction().WithName(input + "_bm25").WithType(entity.FunctionTypeBM25).
			WithInputFields(input).WithOutputFields(output))
	}
	opt := milvusclient.NewCreateCollectionOption(legacy, schema).WithProperty(embedderProperty, "hash-64").
		WithProperty(schemaProperty, 4).WithConsistencyLevel(entity.ClStrong)
	for field, idx := range indexes() {
		opt = opt.WithIndexOptions(milvusclient.NewCreateIndexOption(legacy, field, idx))
	}
	if err := store.client.CreateCollection(ctx, opt); err != nil {
		t.Fatal(err)
	}
	sets, err := store.aclSetsOf(ctx, legacy)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.recordACLSets(ctx, legacy, sets, rows); err != nil {
		t.Fatal(err)
	}
	columns := slices.DeleteFunc(store.columns(rows), func(c column.Column) bool { return lexicalField(c.Name()) })
	if _, err := store.client.Insert(ctx, milvusclient.NewColumnBasedInsertOption(legacy, columns...)); err != nil {
		t.Fatal(err)
	}
	if err := store.flush(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if err := store.client.CreateAlias(ctx, milvusclient.NewCreateAliasOption(legacy, store.alias)); err != nil {
		t.Fatal(err)
	}
	if state, err := store.State(ctx); err != nil || state.SchemaErr != nil || state.Generation.Analyzer != "" {
		t.Fatalf("schema-4 state %+v, %v: want it served as it is, no analyzer recorded", state, err)
	}
	if hits := keywordSearch(t, store, TextSparse, "liveness probe"); len(hits) == 0 || hits[0].Source != "probes.md" {
		t.Errorf("schema 4: «liveness probe» found %v, want probes.md first", sourcesOf(hits))
	}
}
