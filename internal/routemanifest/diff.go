package routemanifest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// Deviations are the settings in which used differs from shipped, one line
// each ("retrieval.maxFragments: 3 → 10"), in field order: what an
// evaluation or benchmark must say it changed from the route as shipped.
func Deviations(shipped, used podconfig.RouteConfig) []string {
	before, after := flatten(shipped), flatten(used)
	keys := slices.Sorted(maps.Keys(before))
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		b, inBefore := before[k]
		a, inAfter := after[k]
		switch {
		case !inAfter:
			out = append(out, fmt.Sprintf("%s: %s → unset", k, b))
		case !inBefore:
			out = append(out, fmt.Sprintf("%s: unset → %s", k, a))
		case a != b:
			out = append(out, fmt.Sprintf("%s: %s → %s", k, b, a))
		}
	}
	return out
}

// flatten is cfg as the pod reads it, one dotted JSON path per leaf.
func flatten(cfg podconfig.RouteConfig) map[string]string {
	data, _ := json.Marshal(cfg) // a config of plain values always marshals
	var tree any
	_ = json.Unmarshal(data, &tree)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				walk(join(prefix, k), child)
			}
		default:
			leaf, _ := json.Marshal(v)
			out[prefix] = string(leaf)
		}
	}
	walk("", tree)
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
