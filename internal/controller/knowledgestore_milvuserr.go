package controller

import (
	"fmt"
	"net/url"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// milvusProblem is what a store's conditions say of a Milvus error: the
// store's own URI and, only when Milvus itself answered, what it said in
// kind (knowledge.ClassifyError: the credentials refused, no such
// database), never the error's text. spec.milvus.uri may point anywhere
// the operator can reach, so the text could carry what another server
// said (banners, addresses, its databases) into a status anyone who may
// read the store sees, and a class per network failure (refused, timed
// out, no such host, a TLS failure, another protocol) would tell a tenant
// what listens where: every such failure reads the same. The operator's
// log keeps the whole cause.
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
	}
	return fmt.Sprintf("Milvus at %s did not answer (no connection, no such host, a timeout, TLS or another server: the operator's log says which)", at)
}

// milvusAnswered reports whether err is Milvus' own answer, one
// milvusProblem names: the credentials refused, no such database.
func milvusAnswered(err error) bool {
	class := knowledge.ClassifyError(err)
	return class == knowledge.ErrorUnauthorized || class == knowledge.ErrorNoDatabase
}

// uriDialable reports whether the client dials anything for uri; one it
// refuses is the store's own mistake, which the status names.
func uriDialable(uri string) bool {
	_, _, err := knowledge.DialAddress(uri)
	return err == nil
}

// redactedURI is uri without a password, should it carry one.
func redactedURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "spec.milvus.uri"
	}
	return u.Redacted()
}
