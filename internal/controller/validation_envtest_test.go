package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// TestAPIServerRefusesBadYAML applies YAML an admin could write and checks
// the API server refuses it with a message that names the field.
func TestAPIServerRefusesBadYAML(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)

	route := func(mutate string) string {
		return `
apiVersion: ragroute.io/v1alpha1
kind: QueryRoute
metadata: {name: support}
spec:
  knowledgeStoreRef: {name: docs}
  platformPromptRef: {name: default}
  model: {baseURL: "http://llm/v1", name: llm}
  auth: {trustedProxy: {secretRef: {name: proxy, key: secret}}}
` + mutate
	}
	window := "  window: {contextTokens: 4096, answerReserveTokens: 512}\n"
	withAuth := func(auth string) string {
		return strings.Replace(route(window), "auth: {trustedProxy: {secretRef: {name: proxy, key: secret}}}", "auth: "+auth, 1)
	}
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"missing required field", route(""), []string{"spec.window", "Required value"}},
		{"out-of-range budget", route("  window: {contextTokens: 100, answerReserveTokens: 64}\n"),
			[]string{"spec.window.contextTokens", "greater than or equal to 512"}},
		{"answer reserve not below context (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 4096}\n"),
			[]string{"window.answerReserveTokens must be less than window.contextTokens"}},
		{"crossEncoder mode without endpoint (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  rerank: {mode: crossEncoder}\n"),
			[]string{"spec.rerank", "crossEncoder must be set when mode is crossEncoder"}},
		{"two replicas on in-memory turns (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  replicas: 2\n"),
			[]string{"more than one replica needs turns.backend redis"}},
		{"judge scorer without a judge (CEL)", route(window + "  answer: {grounding: {scorer: judge}}\n"),
			[]string{"spec.answer.judge", "grounding.scorer judge needs judge"}},
		{"uncalibrated judge deciding what users see (CEL)", route(window +
			"  answer: {grounding: {scorer: judge, policy: strip}, judge: {baseURL: \"http://judge/v1\", name: big}}\n"),
			[]string{"spec.answer.judge.calibratedBy", "needs judge.calibratedBy"}},
		{"raw and relative similarity floor (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  retrieval: {similarityFloor: 0.3, similarityFloorSigmas: 3}\n"),
			[]string{"spec.retrieval", "set similarityFloor or similarityFloorSigmas, not both"}},
		{"raw and relative strict floor (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  retrieval: {strictFloor: 0.5, strictFloorSigmas: 4}\n"),
			[]string{"spec.retrieval", "set strictFloor or strictFloorSigmas, not both"}},
		{"relative similarity floor above the strict one (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  retrieval: {similarityFloorSigmas: 5, strictFloorSigmas: 3}\n"),
			[]string{"similarityFloorSigmas must not exceed strictFloorSigmas"}},
		// The rule knows the raw defaults (0.2, 0.35): a strict floor below
		// the default similarity floor is refused, as with the old defaults.
		{"strict floor below the default similarity floor (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  retrieval: {strictFloor: 0.1}\n"),
			[]string{"spec.retrieval.similarityFloor: Invalid value", "similarityFloor must not exceed strictFloor"}},
		{"similarity floor above the default strict floor (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  retrieval: {similarityFloor: 0.4}\n"),
			[]string{"spec.retrieval.similarityFloor: Invalid value", "similarityFloor must not exceed strictFloor"}},
		{"relative strict floor with a cross-encoder (CEL)", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  retrieval: {strictFloorSigmas: 4}\n  rerank: {mode: crossEncoder, crossEncoder: {baseURL: 'http://rerank/v1', model: r}}\n"),
			[]string{"spec.retrieval.strictFloorSigmas: Forbidden", "retrieval.strictFloorSigmas needs rerank.mode rrf"}},
		{"trusted proxy with neither a secret nor insecureAllowAnyCaller (CEL)", withAuth("{trustedProxy: {}}"),
			[]string{"spec.auth.trustedProxy.secretRef: Required value", "trustedProxy needs secretRef"}},
		{"trusted proxy with a secret and insecureAllowAnyCaller (CEL)",
			withAuth("{trustedProxy: {secretRef: {name: proxy, key: secret}, insecureAllowAnyCaller: true}}"),
			[]string{"spec.auth.trustedProxy.insecureAllowAnyCaller: Forbidden", "insecureAllowAnyCaller cannot be combined with secretRef"}},
		{"cache TTL above an hour (CEL)", route(window + "  cache: {ttl: 2h}\n"),
			[]string{"spec.cache.ttl", "cache.ttl must be more than 0s and at most 1h"}},
		{"trusting any caller without peers (CEL)", withAuth("{trustedProxy: {insecureAllowAnyCaller: true}}"),
			[]string{"spec.auth.trustedProxy.from: Required value", "insecureAllowAnyCaller needs from"}},
		{"trusting any caller with an empty peer list (CEL)", withAuth("{trustedProxy: {insecureAllowAnyCaller: true, from: []}}"),
			[]string{"spec.auth.trustedProxy.from: Required value", "insecureAllowAnyCaller needs from"}},
		{"proxy peer without a selector (CEL)", withAuth("{trustedProxy: {secretRef: {name: proxy, key: secret}, from: [{}]}}"),
			[]string{"a peer needs namespaceSelector, podSelector or both"}},
		{"redis without a seal key", route(window + "  redis: {address: 'redis:6379'}\n"),
			[]string{"spec.redis.sealKeySecretRef: Required value"}},
		{"redis ACL user without a password (CEL)", route(window + "  redis: {address: 'redis:6379', username: route, sealKeySecretRef: {name: redis, key: seal}}\n"),
			[]string{"spec.redis.username: Required value", "username needs passwordSecretRef"}},
		{"input prefix too long", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384, queryPrefix: "` + strings.Repeat("q", 257) + `"}
`, []string{"spec.embedding.queryPrefix", "256"}},
		{"fusion weights that search nothing (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
  search: {weights: {textDense: 0, textSparse: 0, titleDense: 0, titleSparse: 0}}
`, []string{"weights must leave at least one primitive above 0"}},
		{"principal that hides a no-break space", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
  access: {defaultPrincipals: ["group:\u00a0ops"]}
`, []string{"spec.access.defaultPrincipals[0]", "should match"}},
		{"diversity margin out of range", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  retrieval: {diversity: {margin: 2}}\n"),
			[]string{"spec.retrieval.diversity.margin", "less than or equal to 1"}},
		{"route without a model writing generative answers (CEL)", strings.Replace(route(window), "  model: {baseURL: \"http://llm/v1\", name: llm}\n", "", 1),
			[]string{"spec.model: Required value", "model is required unless answer.mode is extractive"}},
		{"agentic route without a model (CEL)", strings.Replace(route(window+"  answer: {mode: extractive}\n  mode: agentic\n"),
			"  model: {baseURL: \"http://llm/v1\", name: llm}\n", "", 1),
			[]string{"spec.model: Required value", "mode is not agentic"}},
		{"grounding threshold out of range", route(window + "  answer: {grounding: {policy: strip, supportThreshold: 1.5}}\n"),
			[]string{"spec.answer.grounding.supportThreshold", "less than or equal to 1"}},
		{"unknown grounding policy", route(window + "  answer: {grounding: {policy: hide}}\n"),
			[]string{"spec.answer.grounding.policy", `supported values: "annotate", "strip", "fallback"`}},
		{"unknown enum", route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n  mode: loop\n"),
			[]string{"spec.mode", `supported values: "singleRound", "agentic"`}},
		{"both auth kinds (CEL)", withAuth("{trustedProxy: {secretRef: {name: proxy, key: secret}}, jwt: {issuer: 'https://sso', audience: a}}"),
			[]string{"spec.auth", "exactly one of jwt or trustedProxy"}},
		{"route name that cannot name a Service (CEL)", strings.Replace(route("  window: {contextTokens: 4096, answerReserveTokens: 512}\n"),
			"metadata: {name: support}", "metadata: {name: 1st-support}", 1),
			[]string{"metadata.name must be a DNS-1035 label"}},
		{"source with two kinds (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
  ingestion:
    sources:
    - name: faq
      configMap: {name: faq}
      pvc: {claimName: docs}
`, []string{"spec.ingestion.sources[0]", "exactly one of configMap, pvc or git"}},
		{"ingestion without a bound (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
  ingestion: {timeout: 25h}
`, []string{"spec.ingestion.timeout", "ingestion.timeout must be between 1m and 24h"}},
		{"git clone timeout out of range (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
  ingestion: {sources: [{name: docs, git: {url: "https://git.acme.example/docs.git", timeout: 2h}}]}
`, []string{"spec.ingestion.sources[0].git.timeout", "git.timeout must be between 10s and 1h"}},
		{"git URL with a token (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
  ingestion: {sources: [{name: docs, git: {url: "https://alice:ghp_token@git.acme.example/docs.git"}}]}
`, []string{"spec.ingestion.sources[0].git.url: Forbidden", "git.url must not carry credentials", "git.secretRef"}},
		{"git URL with an ssh password (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
  ingestion: {sources: [{name: docs, git: {url: "ssh://git:pw@git.acme.example/docs.git"}}]}
`, []string{"spec.ingestion.sources[0].git.url: Forbidden", "git.url must not carry credentials"}},
		{"http issuer off loopback (CEL)", withAuth("{jwt: {issuer: 'http://sso.acme.example', audience: a}}"),
			[]string{"spec.auth.jwt.issuer: Forbidden", "issuer must be https:// unless its host is localhost"}},
		{"http JWKS off loopback (CEL)", withAuth("{jwt: {issuer: 'https://sso.acme.example', audience: a, jwksURL: 'http://localhost.evil.example/keys'}}"),
			[]string{"spec.auth.jwt.jwksURL: Forbidden", "jwksURL must be https://"}},
		{"chunk larger than the embedder takes (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384, maxInputTokens: 256}
  ingestion: {chunking: {maxTokens: 400}}
`, []string{"spec.embedding.maxInputTokens", "ingestion.chunking.maxTokens (200 when unset) must be less than embedding.maxInputTokens"}},
		// The title path and the document prefix are embedded with a chunk,
		// so a chunk as large as the input does not fit either.
		{"chunk as large as the embedder takes (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384, maxInputTokens: 256}
  ingestion: {chunking: {maxTokens: 256}}
`, []string{"spec.embedding.maxInputTokens", "ingestion.chunking.maxTokens (200 when unset) must be less than embedding.maxInputTokens"}},
		// Without chunking the default maxTokens (200) applies, and is
		// checked: the rule repeats v1alpha1.DefaultChunkMaxTokens.
		{"default chunk size not below the embedder's input (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384, maxInputTokens: ` + fmt.Sprint(v1alpha1.DefaultChunkMaxTokens) + `}
  ingestion: {sources: [{name: docs, configMap: {name: docs-md}}]}
`, []string{"spec.embedding.maxInputTokens", "ingestion.chunking.maxTokens (200 when unset) must be less than embedding.maxInputTokens"}},
		{"default chunk size without ingestion (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384, maxInputTokens: 64}
`, []string{"ingestion.chunking.maxTokens (200 when unset) must be less than embedding.maxInputTokens"}},
		{"prompt with text and textFrom (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: PlatformPrompt
metadata: {name: default}
spec:
  text: rules
  textFrom: {configMapKeyRef: {name: prompts, key: platform.md}}
  notFound: not found
`, []string{"exactly one of text or textFrom must be set"}},
		{"not-found wording for a language the route cannot tell (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: PlatformPrompt
metadata: {name: default}
spec:
  text: rules
  notFound: not found
  notFoundByLanguage: {de: nicht gefunden}
`, []string{"spec.notFoundByLanguage", "notFoundByLanguage keys are the languages a route tells apart: en, ru"}},
		{"blank not-found wording for a language (CEL)", `
apiVersion: ragroute.io/v1alpha1
kind: PlatformPrompt
metadata: {name: default}
spec:
  text: rules
  notFound: not found
  notFoundByLanguage: {ru: "  "}
`, []string{"spec.notFoundByLanguage", "each notFoundByLanguage wording is 1 to 2048 characters, not blank"}},
		{"secret key with a path", `
apiVersion: ragroute.io/v1alpha1
kind: KnowledgeStore
metadata: {name: docs}
spec:
  milvus: {uri: "http://milvus:19530", collection: docs, tokenSecretRef: {name: milvus, key: "../token"}}
  embedding: {baseURL: "http://e/v1", model: m, dimensions: 384}
`, []string{"spec.milvus.tokenSecretRef.key"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(tc.yaml), &obj.Object); err != nil {
				t.Fatalf("test YAML: %v", err)
			}
			obj.SetNamespace(ns)
			err := s.client.Create(context.Background(), obj)
			if err == nil {
				t.Fatalf("API server accepted %s", tc.name)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not mention %q:\n%v", want, err)
				}
			}
		})
	}
}

// An ssh user in a git URL and http issuers on loopback stay accepted.
func TestAPIServerAcceptsLoopbackIssuersAndSSHUsers(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	store := newStore(ns, "docs", "http://milvus:19530")
	store.Spec.Ingestion = &v1alpha1.IngestionSettings{Sources: []v1alpha1.IngestionSource{{Name: "docs",
		Git: &v1alpha1.GitSource{URL: "ssh://git@git.acme.example/docs.git"}}}}
	s.create(t, store)
	for i, issuer := range []string{"http://localhost:8080/realms/acme", "http://127.0.0.1:5556/dex", "http://[::1]:9000"} {
		route := newRoute(ns, fmt.Sprintf("local-%d", i), "docs", "default")
		route.Spec.Auth = v1alpha1.RouteAuth{JWT: &v1alpha1.JWTAuth{Issuer: issuer, Audience: "ragroute", JWKSURL: issuer + "/keys"}}
		s.create(t, route)
	}
}

// Chunks below the embedder's input are accepted, the defaults included:
// a maxInputTokens just above the default maxTokens, and a maxTokens
// just below the default maxInputTokens.
func TestAPIServerAcceptsChunksBelowTheEmbeddersInput(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	above := newStore(ns, "above-default-chunks", "http://milvus:19530")
	above.Spec.Ingestion = nil
	above.Spec.Embedding.MaxInputTokens = v1alpha1.DefaultChunkMaxTokens + 1
	s.create(t, above)
	below := newStore(ns, "below-default-input", "http://milvus:19530")
	below.Spec.Embedding.MaxInputTokens = 0
	below.Spec.Ingestion = &v1alpha1.IngestionSettings{Chunking: &v1alpha1.ChunkingSettings{MaxTokens: v1alpha1.DefaultMaxInputTokens - 1}}
	s.create(t, below)
}

// TestSamplesAreAccepted: the samples an admin copies from must pass the
// schema as they are.
func TestSamplesAreAccepted(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	paths, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "v1alpha1_*.yaml"))
	russian, errRU := filepath.Glob(filepath.Join("..", "..", "config", "samples", "ru", "v1alpha1_*.yaml"))
	if err != nil || errRU != nil || len(paths) < 3 || len(russian) < 3 {
		t.Fatalf("samples: %v %v %v %v", paths, russian, err, errRU)
	}
	paths = append(paths, russian...)
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		obj.SetNamespace(ns)
		if err := s.client.Create(context.Background(), obj); err != nil {
			t.Errorf("%s refused: %v", path, err)
		}
	}
}
