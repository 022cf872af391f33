package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// Field indexes over referenced names, so a change to a referenced object
// reaches exactly the objects that use it.
const (
	indexRouteByStore           = "spec.knowledgeStoreRef.name"
	indexRouteByPrompt          = "spec.platformPromptRef.name"
	indexRouteBySecret          = ".secretRefs"
	indexStoreBySecret          = ".secretRefs"
	indexPromptByConfigMap      = "spec.textFrom.configMapKeyRef.name"
	indexStoreBySourceConfigMap = "spec.ingestion.sources.configMap.name"
	indexEvaluationByRoute      = "spec.routeRef.name"
	indexEvaluationByConfigMap  = "spec.questions.name"
	indexEvaluationBySecret     = ".identitySecret"
)

// SetupIndexes registers the field indexes all reconcilers rely on.
func SetupIndexes(ctx context.Context, mgr manager.Manager) error {
	indexer := mgr.GetFieldIndexer()
	indexes := []struct {
		obj     client.Object
		field   string
		extract client.IndexerFunc
	}{
		{&v1alpha1.QueryRoute{}, indexRouteByStore, func(o client.Object) []string {
			return []string{o.(*v1alpha1.QueryRoute).Spec.KnowledgeStoreRef.Name}
		}},
		{&v1alpha1.QueryRoute{}, indexRouteByPrompt, func(o client.Object) []string {
			return []string{o.(*v1alpha1.QueryRoute).Spec.PlatformPromptRef.Name}
		}},
		{&v1alpha1.QueryRoute{}, indexRouteBySecret, func(o client.Object) []string {
			var names []string
			for _, use := range routeSecretKeys(&o.(*v1alpha1.QueryRoute).Spec) {
				names = append(names, use.ref.Name)
			}
			return names
		}},
		{&v1alpha1.KnowledgeStore{}, indexStoreBySecret, func(o client.Object) []string {
			return storeSecretNames(&o.(*v1alpha1.KnowledgeStore).Spec)
		}},
		{&v1alpha1.KnowledgeStore{}, indexStoreBySourceConfigMap, func(o client.Object) []string {
			var names []string
			if ing := o.(*v1alpha1.KnowledgeStore).Spec.Ingestion; ing != nil {
				for _, src := range ing.Sources {
					if src.ConfigMap != nil {
						names = append(names, src.ConfigMap.Name)
					}
				}
			}
			return names
		}},
		{&v1alpha1.RouteEvaluation{}, indexEvaluationByRoute, func(o client.Object) []string {
			return []string{o.(*v1alpha1.RouteEvaluation).Spec.RouteRef.Name}
		}},
		{&v1alpha1.RouteEvaluation{}, indexEvaluationByConfigMap, func(o client.Object) []string {
			return []string{o.(*v1alpha1.RouteEvaluation).Spec.Questions.Name}
		}},
		{&v1alpha1.RouteEvaluation{}, indexEvaluationBySecret, func(o client.Object) []string {
			if _, ref := identitySecretRef(o.(*v1alpha1.RouteEvaluation).Spec.Identity); ref.Name != "" {
				return []string{ref.Name}
			}
			return nil
		}},
		{&v1alpha1.PlatformPrompt{}, indexPromptByConfigMap, func(o client.Object) []string {
			if from := o.(*v1alpha1.PlatformPrompt).Spec.TextFrom; from != nil {
				return []string{from.ConfigMapKeyRef.Name}
			}
			return nil
		}},
	}
	for _, index := range indexes {
		if err := indexer.IndexField(ctx, index.obj, index.field, index.extract); err != nil {
			return fmt.Errorf("index %T by %s: %w", index.obj, index.field, err)
		}
	}
	return nil
}
