package knowledge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// Row is one chunk as stored: its fields and its two dense vectors (the
// sparse ones are computed by Milvus' BM25 functions).
type Row struct {
	ID          string
	DocID       string
	Source      string
	SourceURI   string
	Title       string
	HeadingPath []string
	ChunkType   string
	Kind        string
	PartIndex   int64
	PartCount   int64
	ParentID    string
	ImageURLs   []string
	ACL         []string
	ContentHash string
	Text        string
	// Flagged says why the text reads as instructions to a model; empty
	// for ordinary documentation.
	Flagged     string
	TextVector  []float32
	TitleVector []float32
	// Units are the texts the grounding check holds answers against (the
	// ingestion run cuts them with the check's rules); with a unit
	// embedder (SyncOptions.UnitEmbedder) their vectors are stored with
	// the row, in unitVectors.
	Units       []string
	unitVectors string
}

// TitlePath is the text the title BM25 function indexes.
func (r Row) TitlePath() string {
	return strings.Join(append([]string{r.Title}, r.HeadingPath...), " › ")
}

// EmbeddedText is what the text vector embeds: the title path, then the
// text. A section's body seldom repeats what its headings name, and a
// question usually names it.
func (r Row) EmbeddedText() string { return r.TitlePath() + "\n\n" + r.Text }

// CheckFields refuses a row whose fields the schema would refuse, naming
// the row and field. Ingestion checks every row so before embedding, to
// refuse its document alone: inside an upsert the error would end the
// whole sync.
func (r Row) CheckFields() error {
	return r.problems(nil)
}

// check refuses a row the schema would refuse, vectors of dim dimensions
// included.
func (r Row) check(dim int) error {
	var problems []string
	if len(r.TextVector) != dim || len(r.TitleVector) != dim {
		problems = append(problems, fmt.Sprintf("vectors have %d and %d dimensions, want %d", len(r.TextVector), len(r.TitleVector), dim))
	}
	return r.problems(problems)
}

// problems adds what is wrong with r's fields to problems and names them
// with r, if there are any.
func (r Row) problems(problems []string) error {
	over := func(field string, got, limit int) {
		if got > limit {
			problems = append(problems, fmt.Sprintf("%s is %d long, limit %d", field, got, limit))
		}
	}
	over(FieldID, len(r.ID), maxIDLength)
	over(FieldDocID, len(r.DocID), maxIDLength)
	over(FieldParentID, len(r.ParentID), maxIDLength)
	over(FieldContentHash, len(r.ContentHash), maxIDLength)
	over(FieldSource, len(r.Source), maxPathLength)
	over(FieldSourceURI, len(r.SourceURI), maxPathLength)
	over(FieldTitle, len(r.Title), maxTitleLength)
	over(FieldHeadingPath, len(r.HeadingPath), maxHeadings)
	over(FieldTitlePath, len(r.TitlePath()), maxTitlePath)
	over(FieldText, len(r.Text), maxTextLength)
	over(FieldFlagged, len(r.Flagged), maxFlagLength)
	over(FieldImageURLs, len(r.ImageURLs), maxImageURLs)
	over(FieldACL, len(r.ACL), maxPrincipals)
	for _, h := range r.HeadingPath {
		over("a heading", len(h), maxHeadingLength)
	}
	for _, u := range r.ImageURLs {
		over("an image URL", len(u), maxPathLength)
	}
	for _, p := range r.ACL {
		over("a principal", len(p), maxPrincipalBytes)
	}
	if r.ID == "" {
		problems = append(problems, "id is empty")
	}
	problems = append(problems, r.notUTF8()...)
	if len(problems) > 0 {
		return fmt.Errorf("chunk %s (%q): %s", r.ID, r.Source, strings.Join(problems, "; "))
	}
	return nil
}

// notUTF8 names each string field of r that is not valid UTF-8 (a Latin-1
// page, a file name in another encoding): the gRPC marshal of an upsert
// fails on one, and with it the whole sync.
func (r Row) notUTF8() []string {
	var problems []string
	for _, f := range []struct {
		name   string
		values []string
	}{
		{FieldID, []string{r.ID}}, {FieldDocID, []string{r.DocID}}, {FieldParentID, []string{r.ParentID}},
		{FieldContentHash, []string{r.ContentHash}}, {FieldSource, []string{r.Source}},
		{FieldSourceURI, []string{r.SourceURI}}, {FieldTitle, []string{r.Title}}, {FieldHeadingPath, r.HeadingPath},
		{FieldChunkType, []string{r.ChunkType}}, {FieldKind, []string{r.Kind}}, {FieldImageURLs, r.ImageURLs},
		{FieldACL, r.ACL}, {FieldText, []string{r.Text}}, {FieldFlagged, []string{r.Flagged}},
	} {
		for _, v := range f.values {
			if !utf8.ValidString(v) {
				problems = append(problems, f.name+" is not UTF-8")
				break
			}
		}
	}
	return problems
}

// Upsert writes rows (insert or replace by id).
func (s *Store) Upsert(ctx context.Context, collection string, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	var errs []error
	for _, r := range rows {
		errs = append(errs, r.check(s.dim))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if _, err := s.client.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(collection, s.columns(rows)...)); err != nil {
		return fmt.Errorf("upsert %d chunks into %s: %w", len(rows), collection, err)
	}
	return nil
}

// columns are rows in Milvus' column form.
func (s *Store) columns(rows []Row) []column.Column {
	str := func(field string, get func(Row) string) column.Column {
		values := make([]string, len(rows))
		for i, r := range rows {
			values[i] = get(r)
		}
		return column.NewColumnVarChar(field, values)
	}
	strs := func(field string, get func(Row) []string) column.Column {
		values := make([][]string, len(rows))
		for i, r := range rows {
			values[i] = append([]string{}, get(r)...)
		}
		return column.NewColumnVarCharArray(field, values)
	}
	ints := func(field string, get func(Row) int64) column.Column {
		values := make([]int64, len(rows))
		for i, r := range rows {
			values[i] = get(r)
		}
		return column.NewColumnInt64(field, values)
	}
	vectors := func(field string, get func(Row) []float32) column.Column {
		values := make([][]float32, len(rows))
		for i, r := range rows {
			values[i] = get(r)
		}
		return column.NewColumnFloatVector(field, s.dim, values)
	}
	return []column.Column{
		str(FieldID, func(r Row) string { return r.ID }),
		str(FieldDocID, func(r Row) string { return r.DocID }),
		str(FieldSource, func(r Row) string { return r.Source }),
		str(FieldSourceURI, func(r Row) string { return r.SourceURI }),
		str(FieldTitle, func(r Row) string { return r.Title }),
		strs(FieldHeadingPath, func(r Row) []string { return r.HeadingPath }),
		str(FieldTitlePath, Row.TitlePath),
		str(FieldChunkType, func(r Row) string { return r.ChunkType }),
		str(FieldKind, func(r Row) string { return r.Kind }),
		ints(FieldPartIndex, func(r Row) int64 { return r.PartIndex }),
		ints(FieldPartCount, func(r Row) int64 { return r.PartCount }),
		str(FieldParentID, func(r Row) string { return r.ParentID }),
		strs(FieldImageURLs, func(r Row) []string { return r.ImageURLs }),
		strs(FieldACL, func(r Row) []string { return r.ACL }),
		ints(FieldACLSet, func(r Row) int64 { return aclSetID(r.ACL) }),
		str(FieldContentHash, func(r Row) string { return r.ContentHash }),
		str(FieldText, func(r Row) string { return r.Text }),
		str(FieldFlagged, func(r Row) string { return r.Flagged }),
		str(FieldTextLexical, func(r Row) string { return s.lexicalText(r.Text, maxTextLength) }),
		str(FieldTitleLexical, func(r Row) string { return s.lexicalText(r.TitlePath(), maxTitlePath) }),
		str(FieldUnitVectors, func(r Row) string { return r.unitVectors }),
		vectors(FieldTextDense, func(r Row) []float32 { return r.TextVector }),
		vectors(FieldTitleDense, func(r Row) []float32 { return r.TitleVector }),
	}
}

// ContentHashes maps every stored chunk id to its content hash, read in
// batches so a large collection never comes back in one response.
func (s *Store) ContentHashes(ctx context.Context, collection string) (map[string]string, error) {
	it, err := s.client.QueryIterator(ctx, milvusclient.NewQueryIteratorOption(collection).
		WithBatchSize(1000).WithOutputFields(FieldID, FieldContentHash))
	if err != nil {
		return nil, fmt.Errorf("read chunk hashes of %s: %w", collection, err)
	}
	hashes := map[string]string{}
	for {
		rs, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return hashes, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read chunk hashes of %s: %w", collection, err)
		}
		for i := 0; i < rs.ResultCount; i++ {
			id, err := rs.GetColumn(FieldID).GetAsString(i)
			if err != nil {
				return nil, err
			}
			hash, err := rs.GetColumn(FieldContentHash).GetAsString(i)
			if err != nil {
				return nil, err
			}
			hashes[id] = hash
		}
	}
}

// Delete removes chunks by id.
func (s *Store) Delete(ctx context.Context, collection string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.client.Delete(ctx, milvusclient.NewDeleteOption(collection).WithStringIDs(FieldID, ids)); err != nil {
		return fmt.Errorf("delete %d chunks from %s: %w", len(ids), collection, err)
	}
	return nil
}
