package knowledge

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// A chunk's units are what the grounding check holds an answer's
// sentences against: its sentences, list items and code blocks, as the
// ingestion run cuts them with the check's own rules. Their vectors are
// embedded once, at ingestion, with the query embedder the check uses,
// and stored in the chunk's row (FieldUnitVectors), so that a route
// embeds only the answer's sentences, never a fragment's. A route finds a
// unit by the hash of its text: a fragment cut differently at query time
// (a split section put back together, a budget's cut) loses only the
// units whose text changed, which it embeds as before.
//
// A row stores its units' vectors in one VarChar field, base64 of, per
// unit, the text's hash (8 bytes), the vector's scale (a float32) and its
// components as int8 (scale × component/127): 396 bytes a unit at 384
// dimensions (528 as base64), a quarter of float32's, and a cosine within
// about 0.001 of the exact one (TestUnitVectorsRoundTrip). A field, not a
// side collection: the vectors live and die with their row (a sync that
// rewrites or deletes a chunk rewrites or deletes them), a generation
// brings its own, and a turn reads its fragments' in one query by id
// with no second collection to index, load and keep in step.

// unitsProperty records, on a generation whose rows hold their units'
// vectors, the splitter version that cut them (UnitsVersion).
const unitsProperty = "ragroute.units"

// UnitsVersion names the splitter whose units an ingestion stores: a
// route reads them by their text's hash, so a unit the route's splitter
// cuts differently is embedded at query time, never misread.
const UnitsVersion = "v1"

// UnitHash is the key of a unit's vector: the FNV-64a hash of its text.
func UnitHash(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64()
}

// unitBytes is one stored unit's size in bytes at dim dimensions.
func unitBytes(dim int) int { return 8 + 4 + dim }

// encodeUnits packs units' vectors for FieldUnitVectors, as many as fit
// the field (the rest are embedded at query time), each text once.
func encodeUnits(texts []string, vectors [][]float32, dim int) string {
	maxUnits := base64.StdEncoding.DecodedLen(maxTextLength) / unitBytes(dim)
	buf := make([]byte, 0, min(len(texts), maxUnits)*unitBytes(dim))
	var seen []uint64
	for i, text := range texts {
		hash := UnitHash(text)
		if len(seen) == maxUnits || slices.Contains(seen, hash) || len(vectors[i]) != dim {
			continue
		}
		seen = append(seen, hash)
		buf = binary.LittleEndian.AppendUint64(buf, hash)
		scale := float32(0)
		for _, x := range vectors[i] {
			scale = max(scale, float32(math.Abs(float64(x))))
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(scale))
		for _, x := range vectors[i] {
			q := 0.0
			if scale > 0 {
				q = math.Round(float64(x / scale * 127))
			}
			buf = append(buf, byte(int8(q)))
		}
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// decodeUnits adds the vectors a row's FieldUnitVectors holds to into,
// by their text's hash.
func decodeUnits(field string, dim int, into map[uint64][]float32) error {
	buf, err := base64.StdEncoding.DecodeString(field)
	if err != nil {
		return fmt.Errorf("unit vectors: %w", err)
	}
	size := unitBytes(dim)
	if len(buf)%size != 0 {
		return fmt.Errorf("unit vectors: %d bytes is no whole number of %d-dimensional units", len(buf), dim)
	}
	for ; len(buf) > 0; buf = buf[size:] {
		hash := binary.LittleEndian.Uint64(buf)
		scale := math.Float32frombits(binary.LittleEndian.Uint32(buf[8:]))
		vector := make([]float32, dim)
		for j, b := range buf[12:size] {
			vector[j] = float32(int8(b)) / 127 * scale
		}
		into[hash] = vector
	}
	return nil
}

// maxUnitRows bounds the rows one UnitVectors call reads: a turn packs a
// handful of fragments, a split section a few parts each.
const maxUnitRows = 256

// UnitVectors returns the stored vectors of the units of the chunks ids
// and of the parts of the split sections parentIDs, by their text's hash;
// empty when the generation the alias serves stores none (built before
// ingestion stored them). The vectors say nothing of the text but to
// whom already holds it (a unit is found by its text's hash), so the
// read needs no ACL filter: the caller holds the fragments.
func (s *Store) UnitVectors(ctx context.Context, ids, parentIDs []string) (map[uint64][]float32, error) {
	out := map[uint64][]float32{}
	if len(ids)+len(parentIDs) == 0 {
		return out, nil
	}
	if id, bad := unquotable(append(slices.Clone(ids), parentIDs...)); bad {
		return nil, fmt.Errorf("unit vectors: bad id %q", id)
	}
	if _, _, err := s.aclTable(ctx); err != nil { // keeps what is known of the served collection fresh
		return nil, fmt.Errorf("unit vectors: %w", err)
	}
	if !s.servesUnits() {
		return out, nil
	}
	var filters []string
	if len(ids) > 0 {
		filters = append(filters, FieldID+" in ["+quotedList(ids)+"]")
	}
	if len(parentIDs) > 0 {
		filters = append(filters, FieldParentID+" in ["+quotedList(parentIDs)+"]")
	}
	filter := filters[0]
	if len(filters) == 2 {
		filter = "(" + filters[0] + ") or (" + filters[1] + ")"
	}
	rs, err := s.client.Query(ctx, milvusclient.NewQueryOption(s.alias).
		WithFilter(filter).WithOutputFields(FieldUnitVectors).WithLimit(maxUnitRows))
	if err != nil {
		return nil, fmt.Errorf("unit vectors of %d chunks and %d sections: %w", len(ids), len(parentIDs), err)
	}
	col := rs.GetColumn(FieldUnitVectors)
	if col == nil {
		return out, nil
	}
	for i := 0; i < rs.ResultCount; i++ {
		field, err := col.GetAsString(i)
		if err != nil {
			return nil, fmt.Errorf("unit vectors: %w", err)
		}
		if err := decodeUnits(field, s.dim, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recordUnits marks collection as holding its units' vectors.
func (s *Store) recordUnits(ctx context.Context, collection string) error {
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(collection).
		WithProperty(unitsProperty, UnitsVersion)); err != nil {
		return fmt.Errorf("record %s of %s: %w", unitsProperty, collection, err)
	}
	return nil
}

// embedUnits embeds the rows' units (each text once per batch) with
// embedder, as the grounding check would, and packs each row's vectors.
func (s *Store) embedUnits(ctx context.Context, rows []Row, embedder Embedder) error {
	var texts []string
	at := map[string]int{}
	for _, r := range rows {
		for _, u := range r.Units {
			if _, ok := at[u]; !ok {
				at[u] = len(texts)
				texts = append(texts, u)
			}
		}
	}
	if len(texts) == 0 {
		return nil
	}
	vectors, err := embedder.Embed(ctx, texts)
	if err != nil {
		if input, ok := errors.AsType[*InputError](err); ok && input.Index >= 0 && input.Index < len(texts) {
			err = fmt.Errorf("the unit %.60q: %w", texts[input.Index], err)
		}
		return fmt.Errorf("embed the units of %d chunks: %w", len(rows), err)
	}
	if len(vectors) != len(texts) {
		return fmt.Errorf("embedder returned %d vectors for %d units", len(vectors), len(texts))
	}
	for i, r := range rows {
		own := make([][]float32, len(r.Units))
		for j, u := range r.Units {
			own[j] = vectors[at[u]]
		}
		rows[i].unitVectors = encodeUnits(r.Units, own, s.dim)
	}
	return nil
}
