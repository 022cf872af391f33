package knowledge

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
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
}

// HybridSearch runs the primitives as one Milvus hybrid search over the
// alias, fused by RRF, under the ACL pre-filter.
func (s *Store) HybridSearch(ctx context.Context, req SearchRequest) ([]Hit, error) {
	if req.Candidates <= 0 {
		return nil, fmt.Errorf("search: candidates must be positive, got %d", req.Candidates)
	}
	primitives := req.Primitives
	if len(primitives) == 0 {
		primitives = AllPrimitives
	}
	filter, err := s.readFilter(ctx, req.Principals, req.Filter)
	if err != nil {
		return nil, fmt.Errorf("hybrid search on %s: %w", s.alias, err)
	}
	var requests []*milvusclient.AnnRequest
	for _, p := range primitives {
		r, err := s.annRequest(p, req)
		if err != nil {
			return nil, err
		}
		requests = append(requests, r.WithFilter(filter))
	}
	rrfK := req.RRFK
	if rrfK <= 0 {
		rrfK = 60
	}
	results, err := s.client.HybridSearch(ctx, milvusclient.NewHybridSearchOption(s.alias, req.Candidates, requests...).
		WithReranker(milvusclient.NewRRFReranker().WithK(float64(rrfK))).
		WithOutputFields(append(outputFields, FieldTextDense, FieldTitleDense)...))
	if err != nil {
		return nil, fmt.Errorf("hybrid search on %s: %w", s.alias, err)
	}
	if len(results) == 0 {
		return nil, nil
	}
	hits, err := hitsOf(results[0])
	if err != nil {
		return nil, err
	}
	if err := similarities(results[0], req.Vector, hits); err != nil {
		return nil, err
	}
	return hits, nil
}

// similarities sets each hit's cosine to the query from the vectors the
// search returned (a handful of candidates: cheap, and no second query).
func similarities(rs milvusclient.ResultSet, query []float32, hits []Hit) error {
	for _, field := range []string{FieldTextDense, FieldTitleDense} {
		col, ok := rs.GetColumn(field).(*column.ColumnFloatVector)
		if !ok {
			return fmt.Errorf("search result has no vector field %s", field)
		}
		for i := range hits {
			v, err := col.Value(i)
			if err != nil {
				return fmt.Errorf("read %s of hit %d: %w", field, i, err)
			}
			if c := cosine(query, v); field == FieldTextDense || c > hits[i].Similarity {
				hits[i].Similarity = c
			}
		}
	}
	return nil
}

func cosine(a, b []float32) float32 {
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

// annRequest builds one primitive's request. The metric is named
// explicitly: Milvus infers it from the index, Milvus Lite requires it.
func (s *Store) annRequest(p Primitive, req SearchRequest) (*milvusclient.AnnRequest, error) {
	limit := req.Candidates
	switch p {
	case TextDense, TitleDense:
		if len(req.Vector) != s.dim {
			return nil, fmt.Errorf("search: query vector has %d dimensions, the store %d", len(req.Vector), s.dim)
		}
		field := FieldTextDense
		if p == TitleDense {
			field = FieldTitleDense
		}
		return milvusclient.NewAnnRequest(field, limit, entity.FloatVector(req.Vector)).
			WithSearchParam("metric_type", string(entity.COSINE)), nil
	case TextSparse, TitleSparse:
		field := FieldTextSparse
		if p == TitleSparse {
			field = FieldTitleSparse
		}
		return milvusclient.NewAnnRequest(field, limit, entity.Text(req.Query)).
			WithSearchParam("metric_type", string(entity.BM25)), nil
	}
	return nil, fmt.Errorf("search: unknown primitive %q", p)
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
// One query serves all of them.
func (s *Store) Parts(ctx context.Context, parentIDs []string, principals []string) (map[string][]Row, error) {
	if len(parentIDs) == 0 {
		return map[string][]Row{}, nil
	}
	literals := make([]string, len(parentIDs))
	for i, id := range parentIDs {
		lit, ok := quoteLiteral(id)
		if !ok {
			return nil, fmt.Errorf("parts: bad parent id %q", id)
		}
		literals[i] = lit
	}
	filter, err := s.readFilter(ctx, principals, FieldParentID+" in ["+strings.Join(literals, ", ")+"]")
	if err != nil {
		return nil, fmt.Errorf("parts of %d sections: %w", len(parentIDs), err)
	}
	rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(s.alias).
		WithFilter(filter).
		WithOutputFields(outputFields...).
		WithLimit(maxPartsQuery))
	if err != nil {
		return nil, fmt.Errorf("parts of %d sections: %w", len(parentIDs), err)
	}
	rs.Scores = make([]float32, rs.ResultCount)
	hits, err := hitsOf(rs)
	if err != nil {
		return nil, err
	}
	parts := map[string][]Row{}
	for _, h := range hits {
		parts[h.ParentID] = append(parts[h.ParentID], h.Row)
	}
	for _, rows := range parts {
		slices.SortFunc(rows, func(a, b Row) int { return int(a.PartIndex - b.PartIndex) })
	}
	return parts, nil
}
