// Package routemanifest reads a route's manifests as an admin writes them
// (a QueryRoute, the KnowledgeStore and the PlatformPrompt it names, in
// YAML) and renders the config the operator ships for them, through the
// controller's own pure renderer. The evaluations and benchmarks load
// their route here, so that changing a sample or a default changes what
// they measure.
package routemanifest
