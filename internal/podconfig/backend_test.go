package podconfig

import (
	"strings"
	"testing"
)

func TestFingerprintWithoutPrefixesIsUnchanged(t *testing.T) {
	e := Embedding{BaseURL: "http://embedder.models.svc/v1", Model: "all-MiniLM-L6-v2", Dimensions: 384, MaxInputTokens: 256}
	// The fingerprint of this embedder before input prefixes existed: a
	// store built then must not re-embed after an upgrade.
	const before = "0e499e4f9bf216ee"
	if got := e.Fingerprint(); got != before {
		t.Fatalf("fingerprint without prefixes = %s, want the one stores were built with: %s", got, before)
	}
	e.APIKeyEnv, e.MaxInputTokens = EnvEmbeddingAPIKey, 512
	if got := e.Fingerprint(); got != before {
		t.Errorf("the API key variable or the input limit changed the fingerprint (%s): they do not change vectors", got)
	}
}

func TestFingerprintFollowsPrefixes(t *testing.T) {
	base := Embedding{BaseURL: "http://e/v1", Model: "multilingual-e5-small", Dimensions: 384}
	seen := map[string]string{base.Fingerprint(): "no prefixes"}
	for name, e := range map[string]Embedding{
		"query prefix":         {BaseURL: base.BaseURL, Model: base.Model, Dimensions: 384, QueryPrefix: "query: "},
		"document prefix":      {BaseURL: base.BaseURL, Model: base.Model, Dimensions: 384, DocumentPrefix: "passage: "},
		"both":                 {BaseURL: base.BaseURL, Model: base.Model, Dimensions: 384, QueryPrefix: "query: ", DocumentPrefix: "passage: "},
		"both, other spacing":  {BaseURL: base.BaseURL, Model: base.Model, Dimensions: 384, QueryPrefix: "query:", DocumentPrefix: "passage: "},
		"split moved":          {BaseURL: base.BaseURL, Model: base.Model, Dimensions: 384, QueryPrefix: "query: passage: "},
		"split moved, swapped": {BaseURL: base.BaseURL, Model: base.Model, Dimensions: 384, DocumentPrefix: "query: passage: "},
	} {
		fp := e.Fingerprint()
		if other, dup := seen[fp]; dup {
			t.Errorf("%s and %s share fingerprint %s", name, other, fp)
		}
		seen[fp] = name
		if again := e.Fingerprint(); again != fp {
			t.Errorf("%s: fingerprint not stable: %s then %s", name, fp, again)
		}
	}
}

// A change of tokenizer cuts every chunk anew: a new generation. The
// default, named or not, keeps the fingerprint stores were built with.
func TestFingerprintFollowsTheTokenizer(t *testing.T) {
	e := Embedding{BaseURL: "http://embedder.models.svc/v1", Model: "all-MiniLM-L6-v2", Dimensions: 384}
	const before = "0e499e4f9bf216ee"
	e.Tokenizer = TokenizerBERTUncased
	if got := e.Fingerprint(); got != before {
		t.Errorf("the default tokenizer named: fingerprint %s, want %s", got, before)
	}
	e.Tokenizer = TokenizerXLMRoberta
	if got := e.Fingerprint(); got == before {
		t.Errorf("xlmRoberta kept the fingerprint %s: the chunks it cuts would be mixed with BERT's", got)
	}
}

func TestIngestConfigRefusesAnUnknownTokenizer(t *testing.T) {
	c := IngestConfig{Version: IngestVersion, Milvus: Milvus{URI: "http://m:19530", Collection: "c"},
		Embedding: Embedding{BaseURL: "http://e/v1", Model: "m", Dimensions: 384, Tokenizer: "sentencepiece"},
		Sources:   []Source{{Name: "docs", Path: "/sources/docs"}}}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), `embedding.tokenizer "sentencepiece": want bertUncased or xlmRoberta`) {
		t.Errorf("Validate() = %v, want the tokenizer named with the values it takes", err)
	}
	c.Embedding.Tokenizer = TokenizerXLMRoberta
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
}
