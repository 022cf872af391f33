// Package ui is the route's web page: one HTML page with its script and
// style, embedded in the binary, that asks through the route's own API
// and shows the answer streaming with its sources. It loads nothing from
// outside the route (air-gapped clusters), under a strict
// Content-Security-Policy.
package ui
