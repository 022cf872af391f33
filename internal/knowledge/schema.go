package knowledge

import (
	"fmt"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
)

// Field names of the chunk collection (docs/ingestion.md lists them). The
// four search primitives are dense and BM25 search over text and over
// titles; title_path is title and heading path as one text. The BM25
// functions read text_lexical and title_lexical: text and title path as
// the store's analyzer prepared them (lexical.go); text and title_path
// keep the originals for display.
const (
	FieldID           = "id"
	FieldDocID        = "doc_id"
	FieldSource       = "source"
	FieldSourceURI    = "source_uri"
	FieldTitle        = "title"
	FieldHeadingPath  = "heading_path"
	FieldTitlePath    = "title_path"
	FieldChunkType    = "chunk_type"
	FieldKind         = "kind"
	FieldPartIndex    = "part_index"
	FieldPartCount    = "part_count"
	FieldParentID     = "parent_id"
	FieldImageURLs    = "image_urls"
	FieldACL          = "acl"
	FieldACLSet       = "acl_set"
	FieldContentHash  = "content_hash"
	FieldText         = "text"
	FieldFlagged      = "flagged"
	FieldTextLexical  = "text_lexical"
	FieldTitleLexical = "title_lexical"
	FieldTextDense    = "text_dense"
	FieldTextSparse   = "text_sparse"
	FieldTitleDense   = "title_dense"
	FieldTitleSparse  = "title_sparse"
	FieldUnitVectors  = "unit_vectors"
)

// Limits of the schema; chunks beyond them are refused with a clear error
// before they reach Milvus.
const (
	maxIDLength       = 64
	maxPathLength     = 2048
	maxTitleLength    = 1024
	maxHeadingLength  = 512
	maxHeadings       = 16
	maxTitlePath      = 8192
	maxTextLength     = 65535
	maxFlagLength     = 512
	maxImageURLs      = 64
	maxPrincipals     = 64
	maxPrincipalBytes = 256
)

// Schema is the chunk collection for vectors of dim dimensions.
func Schema(name string, dim int) *entity.Schema {
	varchar := func(field string, maxLen int64) *entity.Field {
		return entity.NewField().WithName(field).WithDataType(entity.FieldTypeVarChar).WithMaxLength(maxLen)
	}
	array := func(field string, capacity, maxLen int64) *entity.Field {
		return entity.NewField().WithName(field).WithDataType(entity.FieldTypeArray).
			WithElementType(entity.FieldTypeVarChar).WithMaxCapacity(capacity).WithMaxLength(maxLen)
	}
	dense := func(field string) *entity.Field {
		return entity.NewField().WithName(field).WithDataType(entity.FieldTypeFloatVector).WithDim(int64(dim))
	}
	sparse := func(field string) *entity.Field {
		return entity.NewField().WithName(field).WithDataType(entity.FieldTypeSparseVector)
	}
	int64Field := func(field string) *entity.Field {
		return entity.NewField().WithName(field).WithDataType(entity.FieldTypeInt64)
	}
	bm25 := func(input, output string) *entity.Function {
		return entity.NewFunction().WithName(input + "_bm25").WithType(entity.FunctionTypeBM25).
			WithInputFields(input).WithOutputFields(output)
	}
	return entity.NewSchema().WithName(name).
		WithDescription("ragroute chunks").
		WithField(varchar(FieldID, maxIDLength).WithIsPrimaryKey(true)).
		WithField(varchar(FieldDocID, maxIDLength)).
		WithField(varchar(FieldSource, maxPathLength)).
		WithField(varchar(FieldSourceURI, maxPathLength)).
		WithField(varchar(FieldTitle, maxTitleLength)).
		WithField(array(FieldHeadingPath, maxHeadings, maxHeadingLength)).
		WithField(varchar(FieldTitlePath, maxTitlePath)).
		WithField(varchar(FieldChunkType, 16)).
		WithField(varchar(FieldKind, 16)).
		WithField(int64Field(FieldPartIndex)).
		WithField(int64Field(FieldPartCount)).
		WithField(varchar(FieldParentID, maxIDLength)).
		WithField(array(FieldImageURLs, maxImageURLs, maxPathLength)).
		WithField(array(FieldACL, maxPrincipals, maxPrincipalBytes)).
		WithField(int64Field(FieldACLSet)).
		WithField(varchar(FieldContentHash, maxIDLength)).
		WithField(varchar(FieldText, maxTextLength)).
		WithField(varchar(FieldFlagged, maxFlagLength)).
		WithField(varchar(FieldTextLexical, maxTextLength).WithEnableAnalyzer(true)).
		WithField(varchar(FieldTitleLexical, maxTitlePath).WithEnableAnalyzer(true)).
		WithField(varchar(FieldUnitVectors, maxTextLength)).
		WithField(dense(FieldTextDense)).
		WithField(sparse(FieldTextSparse)).
		WithField(dense(FieldTitleDense)).
		WithField(sparse(FieldTitleSparse)).
		WithFunction(bm25(FieldTextLexical, FieldTextSparse)).
		WithFunction(bm25(FieldTitleLexical, FieldTitleSparse))
}

// indexes are created with the collection: cosine for dense vectors, BM25
// for the sparse ones.
func indexes() map[string]index.Index {
	return map[string]index.Index{
		FieldTextDense:   index.NewAutoIndex(entity.COSINE),
		FieldTitleDense:  index.NewAutoIndex(entity.COSINE),
		FieldTextSparse:  index.NewSparseInvertedIndex(entity.BM25, 0),
		FieldTitleSparse: index.NewSparseInvertedIndex(entity.BM25, 0),
	}
}

// outputFields are returned with search hits: everything but vectors
// (and flagged, which a collection of schema 4 on adds: servedFields).
var outputFields = []string{FieldID, FieldDocID, FieldSource, FieldSourceURI, FieldTitle, FieldHeadingPath,
	FieldChunkType, FieldKind, FieldPartIndex, FieldPartCount, FieldParentID, FieldImageURLs, FieldACL,
	FieldContentHash, FieldText}

// schemaVersion is recorded on each generation (schemaProperty): an
// ingestion into a generation of an older schema builds a new one.
// 1 had no acl_set; 2 adds it; 3 embeds each chunk's title path with its
// text (a different text vector, so a rebuild); 4 adds flagged (chunks
// that read as instructions to a model), so every chunk is judged again;
// 5 adds text_lexical and title_lexical, the analyzed input of the BM25
// functions (stemmed words, no stop words); 6 adds unit_vectors, the
// grounding check's vectors of each chunk's units (units.go).
const schemaVersion = 6

// optionalFields may be missing from a collection of an older schema that
// still serves: without acl_set a route filters on the ACL array, slower
// but right; without flagged no fragment is flagged until the rebuild;
// without the lexical fields BM25 reads the raw text, and queries go to it
// unanalyzed (lexicalQuery); without unit_vectors the grounding check
// embeds fragments' units at query time.
var optionalFields = map[string]bool{FieldACLSet: true, FieldFlagged: true, FieldTextLexical: true, FieldTitleLexical: true,
	FieldUnitVectors: true}

// generationName is the collection of one index generation behind alias.
func generationName(alias string, generation int64) string {
	return fmt.Sprintf("%s_g%d", alias, generation)
}
