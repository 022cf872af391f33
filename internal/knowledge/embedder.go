package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
)

// embedderInfoProperty on a generation's collection names, as JSON, the
// embedder that built its vectors: model, dimensions and input prefixes.
// The fingerprint (embedderProperty, the endpoint included) decides when
// an ingestion builds a new generation but names nothing; this is what a
// route compares with its own embedder, and what its refusal and the
// store's status show a person. A plain collection property, on Milvus
// and Milvus Lite alike.
const embedderInfoProperty = "ragroute.embedder.info"

// EmbedderInfo is what a generation records of the embedder that built it:
// the model, its dimensions and its input prefixes. Two embedders alike in
// these give vectors that compare, whatever endpoint serves them.
type EmbedderInfo struct {
	Model          string `json:"model"`
	Dimensions     int    `json:"dimensions"`
	QueryPrefix    string `json:"queryPrefix,omitempty"`
	DocumentPrefix string `json:"documentPrefix,omitempty"`
}

// String names the embedder for a person: "e5-small" (384 dimensions,
// query prefix "query: ", document prefix "passage: ").
func (e EmbedderInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d dimensions", strconv.Quote(e.Model), e.Dimensions)
	switch {
	case e.QueryPrefix == "" && e.DocumentPrefix == "":
		b.WriteString(", no input prefixes")
	default:
		fmt.Fprintf(&b, ", query prefix %s, document prefix %s", strconv.Quote(e.QueryPrefix), strconv.Quote(e.DocumentPrefix))
	}
	b.WriteString(")")
	return b.String()
}

// recordEmbedderInfo writes info on collection.
func (s *Store) recordEmbedderInfo(ctx context.Context, collection string, info EmbedderInfo) error {
	data, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("marshal the embedder of %s: %w", collection, err)
	}
	if err := s.client.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(collection).
		WithProperty(embedderInfoProperty, string(data))); err != nil {
		return fmt.Errorf("record the embedder of %s: %w", collection, err)
	}
	return nil
}

// parseEmbedderInfo reads the property; nil when none is recorded (a
// generation built before embedders were named) or it is unreadable.
func parseEmbedderInfo(value string) *EmbedderInfo {
	if value == "" {
		return nil
	}
	var info EmbedderInfo
	if err := json.Unmarshal([]byte(value), &info); err != nil || info.Model == "" {
		return nil
	}
	return &info
}
