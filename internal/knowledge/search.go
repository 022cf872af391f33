package knowledge

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"golang.org/x/sync/errgroup"
)

// Primitive names one of the four searches fused by RRF.
type Primitive string

// The four primitives: dense vectors and BM25, over text and over titles.
const (
	TextDense   Primitive = "textDense"
	TextSparse  Primitive = "textSparse"
	TitleDense  Primitive = "titleDense"
	TitleSparse Primitive = "titleSparse"
)

// AllPrimitives are used when a search names none.
var AllPrimitives = []Primitive{TextDense, TextSparse, TitleDense, TitleSparse}

// SearchRequest is one hybrid search.
type SearchRequest struct {
	// Query is the self-contained query text, for the BM25 primitives.
	Query string
	// Vector is Query embedded by the store's embedder, for the dense ones.
	Vector []float32
	// Principals of the asking identity; only chunks whose ACL holds one
	// of them can match.
	Principals []string
	// Filter is an extra Milvus expression AND'ed with the ACL filter.
	Filter     string
	Primitives []Primitive
	// Weights scale each primitive's reciprocal-rank contribution
	// (weighted RRF); a primitive not named weighs 1. Zero leaves it out.
	Weights map[Primitive]float64
	// Candidates is how many fused results come back.
	Candidates int
	// RRFK is the k of reciprocal rank fusion.
	RRFK int
}

// Hit is one fused search result: the stored chunk (without vectors) and
// its RRF score.
type Hit struct {
	Row
	// Score is the fused RRF score: it ranks, but says nothing about how
	// close the hit is in meaning (the first of a poor list scores high).
	Score float32
	// Similarity is the cosine between the query vector and the hit's
	// text or title vector, whichever is closer: an absolute measure a
	// floor can use to drop what is unrelated to the question.
	Similarity float32
	// Ranks is the hit's 1-based rank in each primitive that found it:
	// whether dense and lexical search agree says how sure the fusion is.
	Ranks map[Primitive]int
}

// HybridSearch runs the primitives concurrently over the alias, each under
// the ACL pre-filter, and fuses them by weighted reciprocal rank. The
// fusion runs here rather than in Milvus because Milvus's RRF ranker has
// no per-primitive weights and hides each primitive's ranks.
func (s *Store) HybridSearch(ctx context.Context, req SearchRequest) ([]Hit, error) {
	if req.Candidates <= 0 {
		return nil, fmt.Errorf("search: candidates must be positive, got %d", req.Candidates)
	}
	primitives := req.Primitives
	if len(primitives) == 0 {
		primitives = AllPrimitives
	}
	primitives = slices.DeleteFunc(slices.Clone(primitives), func(p Primitive) bool { return weight(req.Weights, p) == 0 })
	if len(primitives) == 0 {
		return nil, fmt.Errorf("search: every primitive has weight 0")
	}
	filter, err := s.readFilter(ctx, req.Principals, req.Filter)
	if err != nil {
		return nil, fmt.Errorf("hybrid search on %s: %w", s.alias, err)
	}
	lists := make([][]Hit, len(primitives))
	group, gctx := errgroup.WithContext(ctx)
	for i, p := range primitives {
		group.Go(func() error {
			var err error
			lists[i], err = s.searchPrimitive(gctx, p, req, filter)
			return err
		})
	}
	if err := group.Wait(); err != nil {
		return nil, fmt.Errorf("hybrid search on %s: %w", s.alias, err)
	}
	rrfK := req.RRFK
	if rrfK <= 0 {
		rrfK = 60
	}
	return Fuse(primitives, lists, req.Weights, rrfK, req.Candidates), nil
}

func weight(weights map[Primitive]float64, p Primitive) float64 {
	if w, ok := weights[p]; ok {
		return w
	}
	return 1
}

// Fuse merges the primitives' ranked lists by weighted reciprocal rank,
// best first (ties by id, so the order is stable), keeping the first n.
func Fuse(primitives []Primitive, lists [][]Hit, weights map[Primitive]float64, rrfK, n int) []Hit {
	byID := map[string]*Hit{}
	var fused []*Hit
	for i, list := range lists {
		w := weight(weights, primitives[i])
		if w == 0 {
			continue
		}
		for rank, h := range list {
			f, ok := byID[h.ID]
			if !ok {
				h.Score, h.Ranks = 0, map[Primitive]int{}
				f = &h
				byID[h.ID], fused = f, append(fused, f)
			}
			f.Ranks[primitives[i]] = rank + 1
			f.Score += float32(w / float64(rrfK+rank+1))
		}
	}
	slices.SortStableFunc(fused, func(a, b *Hit) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := make([]Hit, 0, min(n, len(fused)))
	for _, f := range fused[:min(n, len(fused))] {
		out = append(out, *f)
	}
	return out
}

// searchPrimitive runs one primitive; each hit carries its cosine to the
// query vector.
func (s *Store) searchPrimitive(ctx context.Context, p Primitive, req SearchRequest, filter string) ([]Hit, error) {
	vector, err := s.queryOf(p, req)
	if err != nil {
		return nil, err
	}
	if text, ok := vector.(entity.Text); ok && strings.TrimSpace(string(text)) == "" {
		return nil, nil // a question of stop words alone: no term to match
	}
	rs, err := s.searches.do(ctx, searchShape{primitive: p, filter: filter, topK: req.Candidates}, vector)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if rs.ResultCount == 0 {
		return nil, nil
	}
	hits, err := hitsOf(rs)
	if err != nil {
		return nil, err
	}
	if p == TextDense {
		for i := range hits {
			hits[i].Similarity = hits[i].Score // COSINE: the text's cosine
		}
	}
	if err := similarities(rs, req.Vector, hits, returnedVectors(p)); err != nil {
		return nil, err
	}
	return hits, nil
}

// searchShape is what searches must share to go in one call (coalesce.go):
// all but the query.
type searchShape struct {
	primitive Primitive
	filter    string
	topK      int
}

// searchCall is one Milvus search of a shape, one result set per query.
func (s *Store) searchCall(ctx context.Context, shape searchShape, queries []entity.Vector) ([]milvusclient.ResultSet, error) {
	field, metric := annField(shape.primitive)
	results, err := s.client.Search(ctx, milvusclient.NewSearchOption(s.alias, shape.topK, queries).
		WithANNSField(field).WithFilter(shape.filter).
		WithSearchParam("metric_type", string(metric)).
		WithOutputFields(append(s.servedFields(), returnedVectors(shape.primitive)...)...))
	if err == nil && len(results) == 0 {
		results = make([]milvusclient.ResultSet, len(queries)) // nothing matched any query
	}
	return results, err
}

// returnedVectors are the vector fields a primitive's search returns. The
// vectors give each hit its cosine to the query, what the floors compare.
// A text-dense search scores by that cosine already, so it needs the
// title's vector only: vectors are a third of what a search costs Milvus
// Lite to return (docs/performance.md).
func returnedVectors(p Primitive) []string {
	if p == TextDense {
		return []string{FieldTitleDense}
	}
	return []string{FieldTextDense, FieldTitleDense}
}

// similarities sets each hit's cosine to the query, text or title
// whichever is closer, from the vectors of fields the search returned (a
// handful of candidates: cheap, and no second query). Without the text's
// vector, a hit's Similarity already holds the text's cosine.
func similarities(rs milvusclient.ResultSet, query []float32, hits []Hit, fields []string) error {
	for _, field := range fields {
		col, ok := rs.GetColumn(field).(*column.ColumnFloatVector)
		if !ok {
			return fmt.Errorf("search result has no vector field %s", field)
		}
		for i := range hits {
			v, err := col.Value(i)
			if err != nil {
				return fmt.Errorf("read %s of hit %d: %w", field, i, err)
			}
			if c := Cosine(query, v); field == FieldTextDense || c > hits[i].Similarity {
				hits[i].Similarity = c
			}
		}
	}
	return nil
}

// Cosine is the cosine similarity of two vectors; 0 for vectors of
// different lengths or a zero vector.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(dot / math.Sqrt(na*nb))
}

// queryOf is a primitive's query: the vector of the question for the
// dense ones, its text for BM25, prepared as the rows' text was
// (lexicalQuery).
func (s *Store) queryOf(p Primitive, req SearchRequest) (entity.Vector, error) {
	switch p {
	case TextDense, TitleDense:
		if len(req.Vector) != s.dim {
			return nil, fmt.Errorf("search: query vector has %d dimensions, the store %d", len(req.Vector), s.dim)
		}
		return entity.FloatVector(req.Vector), nil
	case TextSparse, TitleSparse:
		return entity.Text(s.lexicalQuery(req.Query)), nil
	}
	return nil, fmt.Errorf("search: unknown primitive %q", p)
}

// annField names a primitive's field and metric. The metric is named
// explicitly: Milvus infers it from the index, Milvus Lite requires it.
func annField(p Primitive) (string, entity.MetricType) {
	switch p {
	case TitleDense:
		return FieldTitleDense, entity.COSINE
	case TextSparse:
		return FieldTextSparse, entity.BM25
	case TitleSparse:
		return FieldTitleSparse, entity.BM25
	}
	return FieldTextDense, entity.COSINE
}

// hitsOf reads the output fields of a result set.
func hitsOf(rs milvusclient.ResultSet) ([]Hit, error) {
	hits := make([]Hit, rs.ResultCount)
	for i := range hits {
		var err error
		get := func(field string) string {
			if err != nil {
				return ""
			}
			var v string
			v, err = rs.GetColumn(field).GetAsString(i)
			return v
		}
		getInt := func(field string) int64 {
			if err != nil {
				return 0
			}
			var v int64
			v, err = rs.GetColumn(field).GetAsInt64(i)
			return v
		}
		getStrings := func(field string) []string {
			if err != nil {
				return nil
			}
			col, ok := rs.GetColumn(field).(*column.ColumnVarCharArray)
			if !ok {
				err = fmt.Errorf("field %s is not a string array", field)
				return nil
			}
			var v []string
			v, err = col.Value(i)
			return v
		}
		hits[i] = Hit{Score: rs.Scores[i], Row: Row{
			ID: get(FieldID), DocID: get(FieldDocID), Source: get(FieldSource), SourceURI: get(FieldSourceURI),
			Title: get(FieldTitle), HeadingPath: getStrings(FieldHeadingPath), ChunkType: get(FieldChunkType),
			Kind: get(FieldKind), PartIndex: getInt(FieldPartIndex), PartCount: getInt(FieldPartCount),
			ParentID: get(FieldParentID), ImageURLs: getStrings(FieldImageURLs), ACL: getStrings(FieldACL),
			ContentHash: get(FieldContentHash), Text: get(FieldText),
		}}
		if rs.GetColumn(FieldFlagged) != nil { // absent from a collection of schema 3 or older
			hits[i].Flagged = get(FieldFlagged)
		}
		if err != nil {
			return nil, fmt.Errorf("read search hit %d: %w", i, err)
		}
	}
	return hits, nil
}

// maxPartsQuery bounds the rows one parts query returns (a split section
// has a handful of parts; a route reassembles a few sections per turn).
const maxPartsQuery = 1000

// Parts returns, for each parent id, the parts of that split section that
// principals may see, in order, so a route can reassemble the sections.
// One query serves all of them, and the sections of other turns under the
// same ACL filter that wait meanwhile (coalesce.go).
func (s *Store) Parts(ctx context.Context, parentIDs []string, principals []string) (map[string][]Row, error) {
	if len(parentIDs) == 0 {
		return map[string][]Row{}, nil
	}
	if id, bad := unquotable(parentIDs); bad {
		return nil, fmt.Errorf("parts: bad parent id %q", id)
	}
	filter, err := s.readFilter(ctx, principals, "")
	if err != nil {
		return nil, fmt.Errorf("parts of %d sections: %w", len(parentIDs), err)
	}
	parts, err := s.parts.do(ctx, filter, parentIDs)
	if err != nil {
		return nil, fmt.Errorf("parts of %d sections: %w", len(parentIDs), err)
	}
	return parts, nil
}

// unquotable is the first id that cannot be an expression literal.
func unquotable(ids []string) (string, bool) {
	for _, id := range ids {
		if _, ok := quoteLiteral(id); !ok {
			return id, true
		}
	}
	return "", false
}

// quotedList is ids as the literals of an `in` list, each once. The ids
// were checked by unquotable already.
func quotedList(ids []string) string {
	literals := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			lit, _ := quoteLiteral(id)
			literals = append(literals, lit)
		}
	}
	return strings.Join(literals, ", ")
}

// partsCall is one query for the parts of every section the lookups ask
// for, under their ACL filter; each lookup gets its own sections' parts.
func (s *Store) partsCall(ctx context.Context, aclFilter string, lookups [][]string) ([]map[string][]Row, error) {
	rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(s.alias).
		WithFilter("("+aclFilter+") and ("+FieldParentID+" in ["+quotedList(slices.Concat(lookups...))+"])").
		WithOutputFields(s.servedFields()...).
		WithLimit(maxPartsQuery*len(lookups)))
	if err != nil {
		return nil, err
	}
	rs.Scores = make([]float32, rs.ResultCount)
	hits, err := hitsOf(rs)
	if err != nil {
		return nil, err
	}
	sections := map[string][]Row{}
	for _, h := range hits {
		sections[h.ParentID] = append(sections[h.ParentID], h.Row)
	}
	for _, rows := range sections {
		slices.SortFunc(rows, func(a, b Row) int { return int(a.PartIndex - b.PartIndex) })
	}
	out := make([]map[string][]Row, len(lookups))
	for i, ids := range lookups {
		out[i] = map[string][]Row{}
		for _, id := range ids {
			if rows, ok := sections[id]; ok {
				out[i][id] = rows
			}
		}
	}
	return out, nil
}
