package knowledge

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"

	"github.com/ragroute/ragroute/internal/lexical"
)

// Properties of a generation's collection: the embedder fingerprint its
// vectors came from, and the schema version it was created with.
const (
	embedderProperty = "ragroute.embedder"
	schemaProperty   = "ragroute.schema"
)

// Store is one KnowledgeStore's chunks: generations of collections named
// <alias>_g<N>, and the alias that routes query.
type Store struct {
	client *milvusclient.Client
	alias  string
	dim    int
	acl    *aclCache
	// searches, parts and current coalesce concurrent reads of one
	// shape (coalesce.go).
	searches *coalescer[searchShape, entity.Vector, milvusclient.ResultSet]
	parts    *coalescer[string, []string, map[string][]Row]
	current  *coalescer[string, rowsAsked, []RowVersion]
	// owner is the KnowledgeStore (namespace/name) this store acts for;
	// empty in a local run (WithOwner).
	owner string
	// analyzer prepares keyword-search text, rows and queries alike
	// (WithAnalyzer).
	analyzer lexical.Analyzer
}

// NewStore wraps a connected client for the collection alias with vectors
// of dim dimensions.
func NewStore(client *milvusclient.Client, alias string, dim int) *Store {
	s := &Store{client: client, alias: alias, dim: dim, acl: &aclCache{}}
	s.searches, s.parts, s.current = newCoalescer(s.searchCall), newCoalescer(s.partsCall), newCoalescer(s.currentCall)
	return s
}

// Generation is one collection behind the alias.
type Generation struct {
	Number     int64
	Collection string
	// Embedder is the fingerprint of the embedder that built it: an
	// ingestion with another builds a new generation.
	Embedder string
	// EmbedderInfo names that embedder (model, dimensions, prefixes), what
	// routes compare with theirs; nil for a generation built before
	// ingestions recorded it.
	EmbedderInfo *EmbedderInfo
	// Schema is the schema version it was created with (1 when unrecorded).
	Schema int
	// Analyzer is the ID of the analyzer that prepared its keyword-search
	// text (lexical.Analyzer.ID): an ingestion with another builds a new
	// generation, a route with another refuses it. Empty for a generation
	// built before ragroute analyzed text (schema 4 and older).
	Analyzer string
	// Background is the embedder's background similarity on it, as the
	// last ingestion recorded it; nil when none is recorded (yet).
	Background *Background
	// Flagged is how many of its chunks read as instructions to a model,
	// as the last ingestion counted them; nil when none is recorded.
	Flagged *int64
	// Truncated is how many of its chunks had an embedded input cut to
	// the embedder's limit, as the last ingestion counted them; nil when
	// none is recorded.
	Truncated *int64
	// Refused is how many documents of the sources the last ingestion
	// refused; nil when none is recorded.
	Refused *int64
	// Owner is the KnowledgeStore (namespace/name) recorded as its owner;
	// empty for a collection made before owners were recorded.
	Owner string
	// Units names the splitter whose units' vectors its rows hold for the
	// grounding check (UnitsVersion), as the ingestion that wrote them
	// recorded it; empty when its rows hold none (built before ingestion
	// stored them, or by a run without a unit embedder): a route's check
	// then embeds each new fragment's units at query time.
	Units string
}

// Active returns the generation the alias points at; ok is false when the
// alias does not exist yet.
func (s *Store) Active(ctx context.Context) (Generation, bool, error) {
	alias, err := s.client.DescribeAlias(ctx, milvusclient.NewDescribeAliasOption(s.alias))
	if err != nil {
		if isNotFound(err) {
			return Generation{}, false, nil
		}
		return Generation{}, false, fmt.Errorf("describe alias %s: %w", s.alias, err)
	}
	return s.describe(ctx, alias.CollectionName)
}

func (s *Store) describe(ctx context.Context, collection string) (Generation, bool, error) {
	coll, err := s.client.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(collection))
	if err != nil {
		return Generation{}, false, fmt.Errorf("describe collection %s: %w", collection, err)
	}
	number, _ := strconv.ParseInt(collection[strings.LastIndex(collection, "_g")+2:], 10, 64)
	schema, err := strconv.Atoi(coll.Properties[schemaProperty])
	if err != nil {
		schema = 1
	}
	return Generation{Number: number, Collection: collection, Embedder: coll.Properties[embedderProperty], Schema: schema,
		Analyzer:     coll.Properties[analyzerProperty],
		EmbedderInfo: parseEmbedderInfo(coll.Properties[embedderInfoProperty]),
		Background:   parseBackground(coll.Properties[backgroundProperty]),
		Flagged:      parseCount(coll.Properties[flaggedProperty]), Truncated: parseCount(coll.Properties[truncatedProperty]),
		Refused: parseCount(coll.Properties[refusedProperty]),
		Owner:   coll.Properties[ownerProperty], Units: coll.Properties[unitsProperty]}, true, nil
}

// verify checks that collection is a chunk collection for this store's
// vectors.
func (s *Store) verify(ctx context.Context, collection string) error {
	coll, err := s.client.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(collection))
	if err != nil {
		return fmt.Errorf("describe collection %s: %w", collection, err)
	}
	return s.checkSchema(coll)
}

// checkSchema refuses a collection this code did not create, or created
// for other vectors, with a message that names the difference.
func (s *Store) checkSchema(coll *entity.Collection) error {
	want := Schema(coll.Name, s.dim)
	have := map[string]*entity.Field{}
	for _, f := range coll.Schema.Fields {
		have[f.Name] = f
	}
	var problems []string
	for _, f := range want.Fields {
		got, ok := have[f.Name]
		switch {
		case !ok && optionalFields[f.Name]:
		case !ok:
			problems = append(problems, "no field "+f.Name)
		case got.DataType != f.DataType:
			problems = append(problems, fmt.Sprintf("field %s is %s, want %s", f.Name, got.DataType, f.DataType))
		case f.DataType == entity.FieldTypeFloatVector && got.TypeParams[entity.TypeParamDim] != strconv.Itoa(s.dim):
			problems = append(problems, fmt.Sprintf("field %s has %s dimensions, want %d", f.Name, got.TypeParams[entity.TypeParamDim], s.dim))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("collection %s is not a ragroute chunk collection for %d-dimensional vectors: %s",
			coll.Name, s.dim, strings.Join(problems, "; "))
	}
	return nil
}

// CreateGeneration creates (or, after an interrupted run, reuses) the
// collection of generation number, indexed and loaded, recording the
// embedder's fingerprint and the store's analyzer.
func (s *Store) CreateGeneration(ctx context.Context, number int64, embedder string) (Generation, error) {
	name := generationName(s.alias, number)
	exists, err := s.client.HasCollection(ctx, milvusclient.NewHasCollectionOption(name))
	if err != nil {
		return Generation{}, fmt.Errorf("check collection %s: %w", name, err)
	}
	if !exists {
		opt := milvusclient.NewCreateCollectionOption(name, Schema(name, s.dim)).
			WithProperty(embedderProperty, embedder).
			WithProperty(schemaProperty, schemaVersion).
			WithProperty(analyzerProperty, s.analyzer.ID()).
			WithConsistencyLevel(entity.ClStrong)
		if s.owner != "" {
			opt = opt.WithProperty(ownerProperty, s.owner)
		}
		for field, idx := range indexes() {
			opt = opt.WithIndexOptions(milvusclient.NewCreateIndexOption(name, field, idx))
		}
		if err := s.client.CreateCollection(ctx, opt); err != nil {
			return Generation{}, fmt.Errorf("create collection %s: %w", name, err)
		}
	}
	gen, _, err := s.describe(ctx, name)
	if err != nil {
		return Generation{}, err
	}
	if err := s.adopt(ctx, gen); err != nil {
		return Generation{}, err
	}
	if err := s.verify(ctx, name); err != nil {
		return Generation{}, err
	}
	if gen.Embedder != embedder || gen.Schema != schemaVersion || gen.Analyzer != s.analyzer.ID() {
		// Left half-built by a run with yet another embedder, schema or
		// analyzer: start over.
		if err := s.client.DropCollection(ctx, milvusclient.NewDropCollectionOption(name)); err != nil {
			return Generation{}, fmt.Errorf("drop stale generation %s: %w", name, err)
		}
		return s.CreateGeneration(ctx, number, embedder)
	}
	task, err := s.client.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(name))
	if err != nil {
		return Generation{}, fmt.Errorf("load collection %s: %w", name, err)
	}
	if err := task.Await(ctx); err != nil {
		return Generation{}, fmt.Errorf("load collection %s: %w", name, err)
	}
	return gen, nil
}

// Activate points the alias at gen in one step (routes never see a half
// state) and then drops the generation it replaced.
func (s *Store) Activate(ctx context.Context, gen Generation) error {
	previous, had, err := s.Active(ctx)
	if err != nil {
		return err
	}
	if had && previous.Collection == gen.Collection {
		return nil
	}
	if had {
		err = s.client.AlterAlias(ctx, milvusclient.NewAlterAliasOption(s.alias, gen.Collection))
	} else {
		err = s.client.CreateAlias(ctx, milvusclient.NewCreateAliasOption(gen.Collection, s.alias))
	}
	if err != nil {
		return fmt.Errorf("point alias %s at %s: %w", s.alias, gen.Collection, err)
	}
	if had {
		if err := s.client.DropCollection(ctx, milvusclient.NewDropCollectionOption(previous.Collection)); err != nil {
			return fmt.Errorf("drop replaced collection %s: %w", previous.Collection, err)
		}
	}
	return nil
}

// Count returns the rows of a collection.
func (s *Store) Count(ctx context.Context, collection string) (int64, error) {
	rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(collection).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", collection, err)
	}
	return rs.GetColumn("count(*)").GetAsInt64(0)
}

func isNotFound(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist") || strings.Contains(msg, "not exist")
}
