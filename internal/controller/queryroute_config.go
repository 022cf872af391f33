package controller

import (
	"cmp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/routeconfig"
)

// routePort is where `ragroute serve` listens in route pods.
const routePort = 8080

// routeInputs is everything a route's effective configuration is made of.
type routeInputs struct {
	route      *v1alpha1.QueryRoute
	store      *v1alpha1.KnowledgeStore
	promptName string
	prompt     promptContent
	// secrets are the Secrets whose keys reach the pod; their versions are
	// part of the config hash so that rotating a key rolls the pods.
	secrets []*corev1.Secret
	// env maps each secret-carrying environment variable to its key.
	env []secretUse
}

// renderRouteConfig is the pure rendering of a route's effective config,
// every default filled in, so that the file alone says what a pod runs.
func renderRouteConfig(in routeInputs) routeconfig.Config {
	spec, store := &in.route.Spec, &in.store.Spec
	envFor := func(ref *v1alpha1.SecretKeyRef, env string) string {
		if ref == nil {
			return ""
		}
		return env
	}

	cfg := routeconfig.Config{
		Version: routeconfig.Version,
		Route:   routeconfig.Route{Name: in.route.Name, Namespace: in.route.Namespace},
		Server:  routeconfig.Server{Port: routePort},
		Prompt: routeconfig.Prompt{
			Name:     in.promptName,
			Platform: in.prompt.Platform,
			NotFound: in.prompt.NotFound,
			Styles:   in.prompt.Styles,
			Hash:     in.prompt.Hash(),
		},
		Store: routeconfig.Store{
			Name: in.store.Name,
			Milvus: routeconfig.Milvus{
				URI:        store.Milvus.URI,
				Database:   cmp.Or(store.Milvus.Database, v1alpha1.DefaultMilvusDatabase),
				Collection: store.Milvus.Collection,
				TokenEnv:   envFor(store.Milvus.TokenSecretRef, routeconfig.EnvMilvusToken),
			},
			Embedding: routeconfig.Embedding{
				BaseURL:        store.Embedding.BaseURL,
				Model:          store.Embedding.Model,
				Dimensions:     store.Embedding.Dimensions,
				MaxInputTokens: cmp.Or(store.Embedding.MaxInputTokens, v1alpha1.DefaultMaxInputTokens),
				APIKeyEnv:      envFor(store.Embedding.APIKeySecretRef, routeconfig.EnvEmbeddingAPIKey),
			},
			Search: renderSearch(store.Search),
		},
		Model: routeconfig.ChatModel{
			BaseURL:      spec.Model.BaseURL,
			Name:         spec.Model.Name,
			APIKeyEnv:    envFor(spec.Model.APIKeySecretRef, routeconfig.EnvModelAPIKey),
			Temperature:  orDefault(spec.Model.Temperature, v1alpha1.DefaultTemperature),
			MaxTokens:    spec.Model.MaxTokens,
			SearchPolicy: string(cmp.Or(spec.Model.SearchPolicy, v1alpha1.SearchPolicyModelDecides)),
		},
		Window: routeconfig.Window{
			ContextTokens:       spec.Window.ContextTokens,
			AnswerReserveTokens: spec.Window.AnswerReserveTokens,
		},
		Retrieval: renderRetrieval(spec.Retrieval),
		Rerank:    renderRerank(spec.Rerank),
		Cache:     renderCache(spec.Cache),
		Turns:     renderTurns(spec.Turns),
		Mode:      string(cmp.Or(spec.Mode, v1alpha1.ModeSingleRound)),
		Auth:      renderAuth(spec.Auth),
	}
	if tls := store.Milvus.TLS; tls != nil {
		cfg.Store.Milvus.TLSServerName, cfg.Store.Milvus.TLSInsecureSkipVerify = tls.ServerName, tls.InsecureSkipVerify
	}
	if ws := spec.WebSearch; ws != nil {
		cfg.WebSearch = &routeconfig.Endpoint{BaseURL: ws.BaseURL, APIKeyEnv: envFor(ws.APIKeySecretRef, routeconfig.EnvWebSearchAPIKey)}
	}
	if r := spec.Redis; r != nil {
		cfg.Redis = &routeconfig.Redis{Address: r.Address, DB: r.DB, PasswordEnv: envFor(r.PasswordSecretRef, routeconfig.EnvRedisPassword)}
	}
	return cfg
}

func renderSearch(s *v1alpha1.SearchSettings) routeconfig.Search {
	out := routeconfig.Search{Candidates: v1alpha1.DefaultCandidates, RRFK: v1alpha1.DefaultRRFK}
	primitives := v1alpha1.AllSearchPrimitives
	if s != nil {
		out.Candidates = cmp.Or(s.Candidates, out.Candidates)
		out.RRFK = cmp.Or(s.RRFK, out.RRFK)
		if len(s.Primitives) > 0 {
			primitives = s.Primitives
		}
	}
	for _, p := range primitives {
		out.Primitives = append(out.Primitives, string(p))
	}
	slices.Sort(out.Primitives) // a set: order must not change the hash
	return out
}

func renderRetrieval(r *v1alpha1.RetrievalSettings) routeconfig.Retrieval {
	out := routeconfig.Retrieval{
		SimilarityFloor: v1alpha1.DefaultSimilarityFloor,
		StrictFloor:     v1alpha1.DefaultStrictFloor,
		MaxFragments:    v1alpha1.DefaultMaxFragments,
	}
	if r != nil {
		out.SimilarityFloor = orDefault(r.SimilarityFloor, out.SimilarityFloor)
		out.StrictFloor = orDefault(r.StrictFloor, out.StrictFloor)
		out.MaxFragments = cmp.Or(r.MaxFragments, out.MaxFragments)
	}
	return out
}

func renderRerank(r *v1alpha1.RerankSettings) routeconfig.Rerank {
	if r == nil {
		return routeconfig.Rerank{Mode: string(v1alpha1.RerankRRF)}
	}
	out := routeconfig.Rerank{Mode: string(cmp.Or(r.Mode, v1alpha1.RerankRRF))}
	// The cross-encoder endpoint only matters when it is the mode in use.
	if ce := r.CrossEncoder; ce != nil && out.Mode == string(v1alpha1.RerankCrossEncoder) {
		out.CrossEncoder = &routeconfig.CrossEncoder{
			BaseURL: ce.BaseURL,
			Model:   ce.Model,
			TopN:    cmp.Or(ce.TopN, v1alpha1.DefaultCrossEncoderTopN),
		}
		if ce.APIKeySecretRef != nil {
			out.CrossEncoder.APIKeyEnv = routeconfig.EnvRerankAPIKey
		}
	}
	return out
}

func renderCache(c *v1alpha1.CacheSettings) routeconfig.Cache {
	out := routeconfig.Cache{
		Backend:    string(v1alpha1.BackendMemory),
		TTL:        v1alpha1.DefaultCacheTTL.String(),
		MaxEntries: v1alpha1.DefaultCacheMaxEntries,
	}
	if c != nil {
		out.Backend = string(cmp.Or(c.Backend, v1alpha1.BackendMemory))
		out.TTL = durationOr(c.TTL, v1alpha1.DefaultCacheTTL)
		out.MaxEntries = orDefault(c.MaxEntries, out.MaxEntries)
	}
	return out
}

func renderTurns(t *v1alpha1.TurnSettings) routeconfig.Turns {
	out := routeconfig.Turns{Backend: string(v1alpha1.BackendMemory), Retention: v1alpha1.DefaultTurnRetention.String()}
	if t != nil {
		out.Backend = string(cmp.Or(t.Backend, v1alpha1.BackendMemory))
		out.Retention = durationOr(t.Retention, v1alpha1.DefaultTurnRetention)
	}
	return out
}

func renderAuth(a v1alpha1.RouteAuth) routeconfig.Auth {
	var out routeconfig.Auth
	if j := a.JWT; j != nil {
		out.JWT = &routeconfig.JWT{
			Issuer:      j.Issuer,
			Audience:    j.Audience,
			JWKSURL:     cmp.Or(j.JWKSURL, strings.TrimSuffix(j.Issuer, "/")+"/.well-known/jwks.json"),
			UserClaim:   cmp.Or(j.UserClaim, v1alpha1.DefaultJWTUserClaim),
			GroupsClaim: cmp.Or(j.GroupsClaim, v1alpha1.DefaultJWTGroupsClaim),
		}
	}
	if p := a.TrustedProxy; p != nil {
		out.TrustedProxy = &routeconfig.TrustedProxy{
			UserHeader:   cmp.Or(p.UserHeader, v1alpha1.DefaultProxyUserHeader),
			GroupsHeader: cmp.Or(p.GroupsHeader, v1alpha1.DefaultProxyGroupsHeader),
		}
	}
	return out
}

func orDefault[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

func durationOr(d *metav1.Duration, def time.Duration) string {
	if d == nil {
		return def.String()
	}
	return d.Duration.String()
}

// routeConfigHash identifies what a pod runs: the rendered config and the
// versions of the Secrets it reads keys from (never their values).
func routeConfigHash(configData []byte, secrets []*corev1.Secret) string {
	var b strings.Builder
	b.Write(configData)
	sorted := slices.SortedFunc(slices.Values(secrets), func(a, b *corev1.Secret) int { return cmp.Compare(a.Name, b.Name) })
	for _, s := range sorted {
		b.WriteString("\nsecret " + s.Name + " " + string(s.UID) + " " + s.ResourceVersion)
	}
	return shortHash([]byte(b.String()))
}
