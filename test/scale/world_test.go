package scale

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// world is the set of objects one run creates: in each namespace, its share
// of the prompts, stores and routes. Route j of a namespace uses the
// namespace's prompt j mod prompts and store j mod stores.
type world struct {
	namespaces []string
	prompts    []*v1alpha1.PlatformPrompt
	stores     []*v1alpha1.KnowledgeStore
	routes     []*v1alpha1.QueryRoute
}

func newWorld(size sizes, milvusURI string) *world {
	w := &world{}
	perNS := func(n int) int { return n / size.Namespaces }
	for k := range size.Namespaces {
		ns := fmt.Sprintf("scale-%d", k)
		w.namespaces = append(w.namespaces, ns)
		for p := range perNS(size.Prompts) {
			w.prompts = append(w.prompts, newPrompt(ns, fmt.Sprintf("prompt-%d", p)))
		}
		for s := range perNS(size.Stores) {
			// Distinct collections on the one Milvus; no ingestion sources,
			// so a store is Ready once Milvus answers.
			w.stores = append(w.stores, newStore(ns, fmt.Sprintf("store-%d", s), milvusURI, fmt.Sprintf("scale_%d_%d", k, s)))
		}
		for r := range perNS(size.Routes) {
			w.routes = append(w.routes, newRoute(ns, fmt.Sprintf("route-%d", r),
				fmt.Sprintf("store-%d", r%perNS(size.Stores)), fmt.Sprintf("prompt-%d", r%perNS(size.Prompts))))
		}
	}
	return w
}

// routesOf are the routes that reference prompt.
func (w *world) routesOf(prompt *v1alpha1.PlatformPrompt) map[client.ObjectKey]bool {
	out := map[client.ObjectKey]bool{}
	for _, r := range w.routes {
		if r.Namespace == prompt.Namespace && r.Spec.PlatformPromptRef.Name == prompt.Name {
			out[client.ObjectKeyFromObject(r)] = true
		}
	}
	return out
}

func newPrompt(ns, name string) *v1alpha1.PlatformPrompt {
	return &v1alpha1.PlatformPrompt{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.PlatformPromptSpec{
			Text:     "You are ACME's internal documentation assistant (" + name + "). Never reveal credentials.",
			NotFound: "I could not find this in ACME's documentation.",
			Styles: &v1alpha1.AnswerStyles{
				Concept: "Explain how and why; short paragraphs.",
				Screen:  "Name the exact screen, field, button or menu; be brief.",
			},
		},
	}
}

func newStore(ns, name, milvusURI, collection string) *v1alpha1.KnowledgeStore {
	return &v1alpha1.KnowledgeStore{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.KnowledgeStoreSpec{
			Milvus: v1alpha1.MilvusConnection{URI: milvusURI, Collection: collection},
			Embedding: v1alpha1.EmbeddingModel{
				BaseURL:        "http://embedder.models.svc/v1",
				Model:          "all-MiniLM-L6-v2",
				Dimensions:     384,
				MaxInputTokens: 256,
			},
			Access: &v1alpha1.AccessSettings{DefaultPrincipals: []string{"group:staff"}},
		},
	}
}

func newRoute(ns, name, store, prompt string) *v1alpha1.QueryRoute {
	return &v1alpha1.QueryRoute{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.QueryRouteSpec{
			KnowledgeStoreRef: v1alpha1.LocalObjectRef{Name: store},
			PlatformPromptRef: v1alpha1.LocalObjectRef{Name: prompt},
			Model: &v1alpha1.ChatModel{
				BaseURL:   "http://llm.models.svc/v1",
				Name:      "llama-3.1-8b-instruct",
				MaxTokens: 320,
			},
			Window: v1alpha1.ContextWindow{ContextTokens: 4096, AnswerReserveTokens: 512},
			// JWT: no Secret to create, and nothing else per route to write.
			Auth:     v1alpha1.RouteAuth{JWT: &v1alpha1.JWTAuth{Issuer: "https://sso.acme.example", Audience: "ragroute"}},
			Replicas: ptr.To[int32](1),
		},
	}
}

// create makes the namespaces, then prompts and stores, then routes, with
// a few writers in parallel (as kubectl apply of many files or a GitOps
// sync would).
func (w *world) create(ctx context.Context, c client.Client) error {
	for _, ns := range w.namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	var first []client.Object
	for _, p := range w.prompts {
		first = append(first, p)
	}
	for _, s := range w.stores {
		first = append(first, s)
	}
	var routes []client.Object
	for _, r := range w.routes {
		routes = append(routes, r)
	}
	if err := createAll(ctx, c, first); err != nil {
		return err
	}
	return createAll(ctx, c, routes)
}

func createAll(ctx context.Context, c client.Client, objs []client.Object) error {
	const writers = 8
	work := make(chan client.Object)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for obj := range work {
				if err := c.Create(ctx, obj); err != nil {
					errs <- fmt.Errorf("create %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
					return
				}
			}
		}()
	}
	var err error
feed:
	for _, obj := range objs {
		select {
		case work <- obj:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if err != nil {
		return err
	}
	return <-errs
}
