package knowledge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// The background sample: up to backgroundChunks chunks, chosen by a hash
// of their ids (the same collection gives the same sample, so the same
// figures), and the distinct title paths of the first backgroundQueries
// of them as the question-like texts, embedded in one call.
const (
	backgroundChunks  = 512
	backgroundQueries = 64
	// backgroundReadBatch bounds the ids (and vectors) one query reads.
	backgroundReadBatch = 128
)

// ErrNoBackground says a collection holds chunks of fewer than two
// documents: there is no unrelated pair to measure.
var ErrNoBackground = errors.New("no background similarity: the collection holds chunks of fewer than two documents")

// MeasureBackground measures the background similarity of the generation
// the alias serves. queryEmbedder must embed as a route embeds questions
// (the store's query prefix). It records nothing; an ingestion records the
// background itself (SyncOptions.QueryEmbedder).
func (s *Store) MeasureBackground(ctx context.Context, queryEmbedder Embedder) (Background, error) {
	gen, ok, err := s.Active(ctx)
	if err != nil {
		return Background{}, err
	}
	if !ok {
		return Background{}, fmt.Errorf("measure background similarity: no generation serves alias %s", s.alias)
	}
	return s.measureBackground(ctx, gen.Collection, queryEmbedder)
}

// measureBackground samples collection, embeds the sample's titles as
// questions and compares them with the stored vectors of other documents.
func (s *Store) measureBackground(ctx context.Context, collection string, queryEmbedder Embedder) (Background, error) {
	ids, err := s.sampleIDs(ctx, collection)
	if err != nil {
		return Background{}, err
	}
	sample, err := s.sampleRows(ctx, collection, ids)
	if err != nil {
		return Background{}, err
	}
	chunks := make([]BackgroundChunk, len(sample))
	var texts, docs []string
	seen := map[string]bool{}
	for i, r := range sample {
		chunks[i] = BackgroundChunk{DocID: r.DocID, Text: r.TextVector, Title: r.TitleVector}
		if title := r.TitlePath(); len(texts) < backgroundQueries && strings.TrimSpace(title) != "" && !seen[title] {
			seen[title] = true
			texts, docs = append(texts, title), append(docs, r.DocID)
		}
	}
	if len(texts) == 0 {
		return Background{}, ErrNoBackground
	}
	vectors, err := queryEmbedder.Embed(ctx, texts)
	if err != nil {
		return Background{}, fmt.Errorf("measure background similarity of %s: embed %d titles: %w", collection, len(texts), err)
	}
	if len(vectors) != len(texts) {
		return Background{}, fmt.Errorf("measure background similarity of %s: %d vectors for %d titles", collection, len(vectors), len(texts))
	}
	queries := make([]BackgroundQuery, len(texts))
	for i := range texts {
		queries[i] = BackgroundQuery{DocID: docs[i], Vector: vectors[i]}
	}
	b := BackgroundOf(queries, chunks)
	if b.Samples == 0 {
		return b, ErrNoBackground
	}
	return b, nil
}

// sampleIDs reads every chunk id of collection and keeps the first
// backgroundChunks in the order of their hashes: a sample spread over the
// documents that does not depend on the order Milvus returns rows in.
func (s *Store) sampleIDs(ctx context.Context, collection string) ([]string, error) {
	it, err := s.client.QueryIterator(ctx, milvusclient.NewQueryIteratorOption(collection).
		WithBatchSize(1000).WithOutputFields(FieldID))
	if err != nil {
		return nil, fmt.Errorf("sample chunks of %s: %w", collection, err)
	}
	type keyed struct {
		hash uint64
		id   string
	}
	// The sample is the backgroundChunks smallest keys: all is cut back
	// to them whenever it doubles, so a large collection's ids are not
	// all held at once.
	var all []keyed
	byKey := func(a, b keyed) int { return cmp.Or(cmp.Compare(a.hash, b.hash), strings.Compare(a.id, b.id)) }
	for {
		rs, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sample chunks of %s: %w", collection, err)
		}
		for i := 0; i < rs.ResultCount; i++ {
			id, err := rs.GetColumn(FieldID).GetAsString(i)
			if err != nil {
				return nil, fmt.Errorf("sample chunks of %s: %w", collection, err)
			}
			h := fnv.New64a()
			_, _ = h.Write([]byte(id))
			all = append(all, keyed{h.Sum64(), id})
			if len(all) == 2*backgroundChunks {
				slices.SortFunc(all, byKey)
				all = slices.Delete(all, backgroundChunks, len(all))
			}
		}
	}
	slices.SortFunc(all, byKey)
	ids := make([]string, 0, min(len(all), backgroundChunks))
	for _, k := range all[:min(len(all), backgroundChunks)] {
		ids = append(ids, k.id)
	}
	return ids, nil
}

// sampleRows reads the document, title path and dense vectors of the
// chunks ids names, in the order of ids.
func (s *Store) sampleRows(ctx context.Context, collection string, ids []string) ([]Row, error) {
	byID := make(map[string]Row, len(ids))
	for batch := range slices.Chunk(ids, backgroundReadBatch) {
		literals := make([]string, 0, len(batch))
		for _, id := range batch {
			if lit, ok := quoteLiteral(id); ok {
				literals = append(literals, lit)
			}
		}
		if len(literals) == 0 {
			continue
		}
		rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(collection).
			WithFilter(FieldID+" in ["+strings.Join(literals, ", ")+"]").
			WithOutputFields(FieldID, FieldDocID, FieldTitle, FieldHeadingPath, FieldTextDense, FieldTitleDense))
		if err != nil {
			return nil, fmt.Errorf("read the background sample of %s: %w", collection, err)
		}
		rows, err := sampleRowsOf(rs)
		if err != nil {
			return nil, fmt.Errorf("read the background sample of %s: %w", collection, err)
		}
		for _, r := range rows {
			byID[r.ID] = r
		}
	}
	out := make([]Row, 0, len(byID))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// sampleRowsOf reads the fields sampleRows asks for.
func sampleRowsOf(rs milvusclient.ResultSet) ([]Row, error) {
	textCol, ok := rs.GetColumn(FieldTextDense).(*column.ColumnFloatVector)
	if !ok {
		return nil, fmt.Errorf("no vector field %s", FieldTextDense)
	}
	titleCol, ok := rs.GetColumn(FieldTitleDense).(*column.ColumnFloatVector)
	if !ok {
		return nil, fmt.Errorf("no vector field %s", FieldTitleDense)
	}
	headings, ok := rs.GetColumn(FieldHeadingPath).(*column.ColumnVarCharArray)
	if !ok {
		return nil, fmt.Errorf("field %s is not a string array", FieldHeadingPath)
	}
	rows := make([]Row, rs.ResultCount)
	for i := range rows {
		r := &rows[i]
		var errs [6]error
		r.ID, errs[0] = rs.GetColumn(FieldID).GetAsString(i)
		r.DocID, errs[1] = rs.GetColumn(FieldDocID).GetAsString(i)
		r.Title, errs[2] = rs.GetColumn(FieldTitle).GetAsString(i)
		r.HeadingPath, errs[3] = headings.Value(i)
		r.TextVector, errs[4] = textCol.Value(i)
		r.TitleVector, errs[5] = titleCol.Value(i)
		if err := errors.Join(errs[:]...); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return rows, nil
}

// recordBackground writes b on collection's properties.
func (s *Store) recordBackground(ctx context.Context, collection string, b Background) error {
	value, err := marshalBackground(b)
	if err != nil {
		return err
	}
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(collection).
		WithProperty(backgroundProperty, value)); err != nil {
		return fmt.Errorf("record the background similarity of %s: %w", collection, err)
	}
	return nil
}
