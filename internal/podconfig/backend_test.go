package podconfig

import "testing"

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
