package controller

import (
	"fmt"
	"net/url"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// milvusProblem is what a store's conditions say of a Milvus error: its
// class (knowledge.ClassifyError) and the store's own URI, never the
// error's text. spec.milvus.uri may point anywhere, so the text could
// carry what another server said (banners, addresses, its databases) into
// a status anyone who may read the store sees; the operator's log keeps
// the whole cause.
func milvusProblem(err error, uri, database string) string {
	at := redactedURI(uri)
	if _, _, err := knowledge.DialAddress(uri); err != nil {
		// The store's own URI is at fault, and nothing was dialed.
		return fmt.Sprintf("spec.milvus.uri %s: %v", at, err)
	}
	switch knowledge.ClassifyError(err) {
	case knowledge.ErrorUnauthorized:
		return fmt.Sprintf("Milvus at %s refused the credentials (spec.milvus.tokenSecretRef)", at)
	case knowledge.ErrorNoDatabase:
		return fmt.Sprintf("Milvus at %s has no database %q", at, database)
	case knowledge.ErrorUnreachable:
		return fmt.Sprintf("Milvus unreachable at %s", at)
	}
	return fmt.Sprintf("Milvus error at %s (the operator's log has the cause)", at)
}

// redactedURI is uri without a password, should it carry one.
func redactedURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "spec.milvus.uri"
	}
	return u.Redacted()
}
