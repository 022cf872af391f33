package controller

import (
	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// secretUse is one Secret key a spec references: where (field), what (ref),
// the environment variable that carries it into route pods (env; empty
// when the value never reaches a route pod), and where its value is sent
// (to; zero for a value only compared inbound).
type secretUse struct {
	field string
	ref   v1alpha1.SecretKeyRef
	env   string
	to    destination
}

// storeSecretKeys lists the Secret keys a KnowledgeStore spec references.
func storeSecretKeys(spec *v1alpha1.KnowledgeStoreSpec) []secretUse {
	var uses []secretUse
	if ref := spec.Milvus.TokenSecretRef; ref != nil {
		uses = append(uses, secretUse{"spec.milvus.tokenSecretRef", *ref, podconfig.EnvMilvusToken,
			destination{"spec.milvus.uri", spec.Milvus.URI, knowledge.DialAddress}})
	}
	if ref := spec.Embedding.APIKeySecretRef; ref != nil {
		uses = append(uses, secretUse{"spec.embedding.apiKeySecretRef", *ref, podconfig.EnvEmbeddingAPIKey,
			destination{"spec.embedding.baseURL", spec.Embedding.BaseURL, hostPort}})
	}
	return uses
}

// storeSecretNames lists every Secret a KnowledgeStore spec references,
// whole Secrets (git credentials) included.
func storeSecretNames(spec *v1alpha1.KnowledgeStoreSpec) []string {
	var names []string
	for _, use := range storeSecretKeys(spec) {
		names = append(names, use.ref.Name)
	}
	if spec.Ingestion != nil {
		for _, source := range spec.Ingestion.Sources {
			if source.Git != nil && source.Git.SecretRef != nil {
				names = append(names, source.Git.SecretRef.Name)
			}
		}
	}
	return names
}

// routeSecretKeys lists the Secret keys a QueryRoute spec references itself
// (its store's keys come from storeSecretKeys).
func routeSecretKeys(spec *v1alpha1.QueryRouteSpec) []secretUse {
	var uses []secretUse
	if spec.Model != nil && spec.Model.APIKeySecretRef != nil {
		uses = append(uses, secretUse{"spec.model.apiKeySecretRef", *spec.Model.APIKeySecretRef, podconfig.EnvModelAPIKey,
			destination{"spec.model.baseURL", spec.Model.BaseURL, hostPort}})
	}
	if a := spec.Answer; a != nil && a.Judge != nil && a.Judge.APIKeySecretRef != nil {
		uses = append(uses, secretUse{"spec.answer.judge.apiKeySecretRef", *a.Judge.APIKeySecretRef, podconfig.EnvJudgeAPIKey,
			destination{"spec.answer.judge.baseURL", a.Judge.BaseURL, hostPort}})
	}
	if spec.WebSearch != nil && spec.WebSearch.APIKeySecretRef != nil {
		uses = append(uses, secretUse{"spec.webSearch.apiKeySecretRef", *spec.WebSearch.APIKeySecretRef, podconfig.EnvWebSearchAPIKey,
			destination{"spec.webSearch.baseURL", spec.WebSearch.BaseURL, hostPort}})
	}
	// The cross-encoder's key only matters when it is the rerank mode in use.
	if r := spec.Rerank; r != nil && r.Mode == v1alpha1.RerankCrossEncoder && r.CrossEncoder != nil && r.CrossEncoder.APIKeySecretRef != nil {
		uses = append(uses, secretUse{"spec.rerank.crossEncoder.apiKeySecretRef", *spec.Rerank.CrossEncoder.APIKeySecretRef, podconfig.EnvRerankAPIKey,
			destination{"spec.rerank.crossEncoder.baseURL", spec.Rerank.CrossEncoder.BaseURL, hostPort}})
	}
	if p := spec.Auth.TrustedProxy; p != nil && p.SecretRef != nil {
		uses = append(uses, secretUse{"spec.auth.trustedProxy.secretRef", *p.SecretRef, podconfig.EnvProxySecret, destination{}})
	}
	return append(uses, redisSecretKeys(spec.Redis)...)
}

// redisSecretKeys lists the Secret keys of a route's Redis connection:
// the password goes to its address; the seal key and the CA stay in the pod.
func redisSecretKeys(r *v1alpha1.RedisConnection) []secretUse {
	if r == nil {
		return nil
	}
	uses := []secretUse{{"spec.redis.sealKeySecretRef", r.SealKeySecretRef, podconfig.EnvRedisSealKey, destination{}}}
	if r.PasswordSecretRef != nil {
		uses = append(uses, secretUse{"spec.redis.passwordSecretRef", *r.PasswordSecretRef, podconfig.EnvRedisPassword,
			destination{"spec.redis.address", r.Address, hostPort}})
	}
	if r.TLS != nil && r.TLS.CASecretRef != nil {
		uses = append(uses, secretUse{"spec.redis.tls.caSecretRef", *r.TLS.CASecretRef, podconfig.EnvRedisCA, destination{}})
	}
	return uses
}

// envFor names the environment variable that carries a referenced Secret
// key into the pod, or nothing when no Secret is referenced.
func envFor(ref *v1alpha1.SecretKeyRef, env string) string {
	if ref == nil {
		return ""
	}
	return env
}
