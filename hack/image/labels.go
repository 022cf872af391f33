package main

import (
	"fmt"
	"sort"
	"strings"
)

// labelFlag collects repeated --label key=value flags.
type labelFlag map[string]string

func (l labelFlag) String() string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + l[k]
	}
	return strings.Join(keys, ",")
}

func (l labelFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("label %q: want key=value", v)
	}
	l[k] = val
	return nil
}

// defaultLabels are the OCI annotations the Dockerfile's LABEL lines also
// set, so both ways of building describe the same image; title and version
// follow the name, so a second image (kubectl) needs only --label source.
func defaultLabels(n imageName) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    n.title(),
		"org.opencontainers.image.version":  n.tag,
		"org.opencontainers.image.source":   "https://github.com/ragroute/ragroute",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
}
