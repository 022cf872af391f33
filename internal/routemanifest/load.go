package routemanifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/controller"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// maxManifestBytes bounds one manifest file: a route's YAML is a few KiB.
const maxManifestBytes = 1 << 20

// defaultNamespace is where an object with no namespace lives, as kubectl
// would create it.
const defaultNamespace = "default"

// manifests are the ragroute objects read from the files, by name.
type manifests struct {
	routes  []*v1alpha1.QueryRoute
	stores  map[string]*v1alpha1.KnowledgeStore
	prompts map[string]*v1alpha1.PlatformPrompt
}

// Load reads the YAML files (each may hold several documents; kinds other
// than ragroute's are skipped) and renders the config of the one
// QueryRoute among them over the KnowledgeStore and PlatformPrompt it
// references, which must be among them too.
func Load(paths ...string) (podconfig.RouteConfig, error) {
	m := manifests{stores: map[string]*v1alpha1.KnowledgeStore{}, prompts: map[string]*v1alpha1.PlatformPrompt{}}
	for _, path := range paths {
		if err := m.read(path); err != nil {
			return podconfig.RouteConfig{}, err
		}
	}
	if len(m.routes) != 1 {
		return podconfig.RouteConfig{}, fmt.Errorf("route manifests %v: want one QueryRoute, found %d", paths, len(m.routes))
	}
	route := m.routes[0]
	store, ok := m.stores[route.Spec.KnowledgeStoreRef.Name]
	if !ok {
		return podconfig.RouteConfig{}, fmt.Errorf("route manifests %v: QueryRoute %s names KnowledgeStore %q, which they do not hold",
			paths, route.Name, route.Spec.KnowledgeStoreRef.Name)
	}
	prompt, ok := m.prompts[route.Spec.PlatformPromptRef.Name]
	if !ok {
		return podconfig.RouteConfig{}, fmt.Errorf("route manifests %v: QueryRoute %s names PlatformPrompt %q, which they do not hold",
			paths, route.Name, route.Spec.PlatformPromptRef.Name)
	}
	return controller.RenderRoute(route, store, prompt)
}

// read adds the ragroute objects of one file.
func (m *manifests) read(path string) error {
	data, err := readFile(path)
	if err != nil {
		return err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if err := m.add(doc); err != nil {
			return fmt.Errorf("%s: document %d: %w", path, i, err)
		}
	}
}

// add decodes one document, strictly: a misspelled field is an error, as the
// API server's schema would refuse it.
func (m *manifests) add(doc []byte) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	if meta.APIVersion != v1alpha1.GroupVersion.String() {
		return nil
	}
	switch meta.Kind {
	case "QueryRoute":
		route := &v1alpha1.QueryRoute{}
		if err := decode(doc, route, &route.ObjectMeta); err != nil {
			return err
		}
		m.routes = append(m.routes, route)
	case "KnowledgeStore":
		store := &v1alpha1.KnowledgeStore{}
		if err := decode(doc, store, &store.ObjectMeta); err != nil {
			return err
		}
		m.stores[store.Name] = store
	case "PlatformPrompt":
		prompt := &v1alpha1.PlatformPrompt{}
		if err := decode(doc, prompt, &prompt.ObjectMeta); err != nil {
			return err
		}
		m.prompts[prompt.Name] = prompt
	}
	return nil
}

func decode(doc []byte, into any, meta *metav1.ObjectMeta) error {
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		return err
	}
	if meta.Namespace == "" {
		meta.Namespace = defaultNamespace
	}
	return nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("route manifest: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("route manifest %s: %w", path, err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("route manifest %s: over %d bytes", path, maxManifestBytes)
	}
	return data, nil
}
