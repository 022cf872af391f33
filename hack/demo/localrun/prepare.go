package localrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Objects reads what a pod's volumes and environment refer to.
type Objects interface {
	ConfigMap(ctx context.Context, namespace, name string) (map[string]string, error)
	Secret(ctx context.Context, namespace, name string) (map[string][]byte, error)
}

// Command is a container made runnable here.
type Command struct {
	// Entrypoint is the container's command, empty for the image's own;
	// Args are its args. Both have mount paths mapped to local folders.
	Entrypoint []string
	Args       []string
	// Env holds KEY=VALUE for the container's environment, resolved.
	Env []string
	// Mounts maps each mount path to the local folder that stands for it.
	Mounts map[string]string
}

// Prepare materialises the volumes the named container of pod mounts under
// root (one folder per volume) and resolves its args and environment.
func Prepare(ctx context.Context, objects Objects, pod Pod, container, root string) (Command, error) {
	spec, namespace := pod.Spec, pod.Meta.Namespace
	var c *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == container {
			c = &spec.Containers[i]
		}
	}
	if c == nil {
		return Command{}, fmt.Errorf("pod spec has no container %q", container)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	cmd := Command{Mounts: map[string]string{}}
	var configFiles []string
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return Command{}, fmt.Errorf("container %q mounts volume %q, which the pod does not define", container, m.Name)
		}
		dir := filepath.Join(root, m.Name)
		files, err := materialise(ctx, objects, namespace, v, dir)
		if err != nil {
			return Command{}, fmt.Errorf("volume %q (mounted at %s): %w", m.Name, m.MountPath, err)
		}
		if v.ConfigMap != nil {
			configFiles = append(configFiles, files...)
		}
		cmd.Mounts[m.MountPath] = dir
	}
	mapper := newPathMapper(cmd.Mounts)
	for _, a := range c.Command {
		cmd.Entrypoint = append(cmd.Entrypoint, mapper.mapPaths(a))
	}
	for _, a := range c.Args {
		cmd.Args = append(cmd.Args, mapper.mapPaths(a))
	}
	// A config file the args name may name mounted paths too (an ingest
	// config names its sources' folders), so it is mapped like the args.
	// Other files, documents above all, stay byte for byte.
	words := append(slices.Clone(cmd.Entrypoint), cmd.Args...)
	for _, f := range configFiles {
		if !slices.ContainsFunc(words, func(a string) bool { return strings.Contains(a, f) }) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return Command{}, fmt.Errorf("read %s: %w", f, err)
		}
		if err := os.WriteFile(f, []byte(mapper.mapPaths(string(data))), 0o600); err != nil {
			return Command{}, fmt.Errorf("write %s: %w", f, err)
		}
	}
	for _, e := range c.Env {
		value, err := envValue(ctx, objects, pod, c.Name, e)
		if err != nil {
			return Command{}, fmt.Errorf("env %s: %w", e.Name, err)
		}
		cmd.Env = append(cmd.Env, e.Name+"="+mapper.mapPaths(value))
	}
	if tmp, ok := cmd.Mounts["/tmp"]; ok {
		cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	}
	return cmd, nil
}

// materialise writes a volume's files into dir and returns their paths.
func materialise(ctx context.Context, objects Objects, namespace string, v corev1.Volume, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	switch {
	case v.EmptyDir != nil:
		return nil, nil
	case v.ConfigMap != nil:
		data, err := objects.ConfigMap(ctx, namespace, v.ConfigMap.Name)
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s: %w", v.ConfigMap.Name, err)
		}
		files := map[string][]byte{}
		for k, s := range data {
			files[k] = []byte(s)
		}
		return writeFiles(dir, files, v.ConfigMap.Items)
	case v.Secret != nil:
		data, err := objects.Secret(ctx, namespace, v.Secret.SecretName)
		if err != nil {
			return nil, fmt.Errorf("Secret %s: %w", v.Secret.SecretName, err)
		}
		return writeFiles(dir, data, v.Secret.Items)
	default:
		return nil, fmt.Errorf("only configMap, secret and emptyDir volumes run locally")
	}
}

// writeFiles writes each key (or the selected items, under their paths).
func writeFiles(dir string, data map[string][]byte, items []corev1.KeyToPath) ([]string, error) {
	paths := map[string]string{}
	for k := range data {
		paths[k] = k
	}
	if len(items) > 0 {
		paths = map[string]string{}
		for _, it := range items {
			if _, ok := data[it.Key]; !ok {
				return nil, fmt.Errorf("no key %q", it.Key)
			}
			paths[it.Key] = it.Path
		}
	}
	var written []string
	for key, rel := range paths {
		if !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("path %q leaves the volume", rel)
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, data[key], 0o600); err != nil {
			return nil, err
		}
		written = append(written, p)
	}
	sort.Strings(written)
	return written, nil
}

func envValue(ctx context.Context, objects Objects, pod Pod, container string, e corev1.EnvVar) (string, error) {
	namespace := pod.Meta.Namespace
	switch {
	case e.ValueFrom == nil:
		return e.Value, nil
	case e.ValueFrom.FieldRef != nil:
		return fieldValue(pod, e.ValueFrom.FieldRef)
	case e.ValueFrom.ResourceFieldRef != nil:
		return resourceValue(pod, container, e.ValueFrom.ResourceFieldRef)
	case e.ValueFrom.SecretKeyRef != nil:
		ref := e.ValueFrom.SecretKeyRef
		data, err := objects.Secret(ctx, namespace, ref.Name)
		if err != nil {
			return "", fmt.Errorf("Secret %s: %w", ref.Name, err)
		}
		v, ok := data[ref.Key]
		if !ok {
			return "", fmt.Errorf("Secret %s has no key %q", ref.Name, ref.Key)
		}
		return string(v), nil
	case e.ValueFrom.ConfigMapKeyRef != nil:
		ref := e.ValueFrom.ConfigMapKeyRef
		data, err := objects.ConfigMap(ctx, namespace, ref.Name)
		if err != nil {
			return "", fmt.Errorf("ConfigMap %s: %w", ref.Name, err)
		}
		v, ok := data[ref.Key]
		if !ok {
			return "", fmt.Errorf("ConfigMap %s has no key %q", ref.Name, ref.Key)
		}
		return v, nil
	default:
		return "", fmt.Errorf("no source: want a value, secretKeyRef, configMapKeyRef, fieldRef or resourceFieldRef")
	}
}

// pathMapper rewrites mount paths that appear as whole path prefixes.
type pathMapper struct {
	paths []string // longest first, so /sources/handbook wins over /sources
	local map[string]string
}

func newPathMapper(mounts map[string]string) pathMapper {
	m := pathMapper{local: map[string]string{}}
	for p, dir := range mounts {
		p = strings.TrimRight(p, "/")
		if p == "" {
			continue // a volume over / cannot be told apart from other paths
		}
		m.paths = append(m.paths, p)
		m.local[p] = dir
	}
	sort.Slice(m.paths, func(i, j int) bool { return len(m.paths[i]) > len(m.paths[j]) })
	return m
}

// delimiter is a character that cannot be part of a path in args or config.
func delimiter(c byte) bool { return strings.IndexByte(" \t\n\"'=:,", c) >= 0 }

// mapPaths replaces a mount path where it starts a path (at the start or
// after a delimiter) and ends at a separator, a delimiter or the end.
func (m pathMapper) mapPaths(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i == 0 || delimiter(s[i-1]) {
			if p, ok := m.pathAt(s, i); ok {
				b.WriteString(m.local[p])
				i += len(p)
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func (m pathMapper) pathAt(s string, i int) (string, bool) {
	for _, p := range m.paths {
		if !strings.HasPrefix(s[i:], p) {
			continue
		}
		if end := i + len(p); end == len(s) || s[end] == '/' || delimiter(s[end]) {
			return p, true
		}
	}
	return "", false
}
