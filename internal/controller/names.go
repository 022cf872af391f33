package controller

import "strings"

// truncateName keeps the first n bytes of an object's name, so a child's
// name built from it (a suffix added) stays within the API's limits; a
// cut never leaves a trailing '-'. Object names are ASCII.
func truncateName(name string, n int) string {
	if len(name) > n {
		return strings.TrimRight(name[:n], "-")
	}
	return name
}

// managedByLabel=managedByValue is on every object the operator applies;
// the cache holds only objects so labelled (CacheOptions).
const (
	managedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "ragroute"
)
