// Package controller reconciles ragroute's custom resources, one concern per
// reconciler: PlatformPrompt (validate, hash), KnowledgeStore (secrets,
// Milvus connection) and QueryRoute (resolve references, render the route
// config, apply ConfigMap + Deployment + Service).
//
// Every reconciler has the same shape: fetch, defer one server-side apply of
// the status it owns, run its phases in order, and derive conditions from
// what the phases found with small pure functions. Desired children come
// from pure builders checked against golden files.
package controller
