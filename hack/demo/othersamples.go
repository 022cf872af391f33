package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// The samples config/samples holds beside its kustomization (the agentic
// and the extractive route): the README names them, so the demo creates
// them too, runs their Deployments here and waits for them Ready, and asks
// the extractive one, which needs no model, the first question. Then every
// sample's Ready condition is printed, as `kubectl get ragroute` shows it,
// and one that is not Ready fails the demo.

// runOtherSamples creates each sample file kustomization.yaml does not
// list, with its endpoints pointed here, and runs its routes.
func (d *demo) runOtherSamples(ctx context.Context) error {
	files, err := otherSampleFiles(filepath.Join(d.cfg.root, "config", "samples"))
	if err != nil {
		return err
	}
	var routes []*unstructured.Unstructured
	for _, file := range files {
		objs, err := decodeFile(file)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			obj.SetNamespace(namespace)
			if obj.GetKind() == "QueryRoute" {
				if err := d.localiseRoute(obj); err != nil {
					return err
				}
				routes = append(routes, obj)
			}
			if err := d.admin.Create(ctx, obj); err != nil {
				return fmt.Errorf("create %s %s (%s): %w", obj.GetKind(), obj.GetName(), filepath.Base(file), err)
			}
			fmt.Printf("    created %s/%s from %s\n", obj.GetKind(), obj.GetName(), filepath.Base(file))
		}
	}
	for _, route := range routes {
		url, _, err := d.runDeployment(ctx, route.GetName())
		if err != nil {
			return err
		}
		if mode, _, _ := unstructured.NestedString(route.Object, "spec", "answer", "mode"); mode != "extractive" {
			continue
		}
		q := questions[0]
		fmt.Printf("\n  %s (groups: %s) asks route %s: %s\n", q.user, q.groups, route.GetName(), q.text)
		if _, _, err := d.askAt(ctx, url, q); err != nil {
			return fmt.Errorf("route %s: %s's question: %w", route.GetName(), q.user, err)
		}
	}
	return d.everySampleReady(ctx)
}

// everySampleReady prints each ragroute object's Ready condition and
// fails on one that is not Ready.
func (d *demo) everySampleReady(ctx context.Context) error {
	lists := []struct {
		kind string
		list client.ObjectList
	}{{"PlatformPrompt", &v1alpha1.PlatformPromptList{}}, {"KnowledgeStore", &v1alpha1.KnowledgeStoreList{}},
		{"QueryRoute", &v1alpha1.QueryRouteList{}}, {"RouteEvaluation", &v1alpha1.RouteEvaluationList{}}}
	var notReady []string
	fmt.Println("\n  every sample, as kubectl get ragroute shows it:")
	for _, l := range lists {
		if err := d.admin.List(ctx, l.list, client.InNamespace(namespace)); err != nil {
			return err
		}
		kind := l.kind
		err := meta.EachListItem(l.list, func(o runtime.Object) error {
			obj := o.(client.Object)
			ready := meta.FindStatusCondition(conditionsOf(obj), v1alpha1.ConditionReady)
			if ready == nil {
				ready = &metav1.Condition{Status: metav1.ConditionUnknown, Reason: "NoCondition"}
			}
			fmt.Printf("    %s/%s Ready=%s %s\n", kind, obj.GetName(), ready.Status, ready.Reason)
			if ready.Status != metav1.ConditionTrue {
				notReady = append(notReady, fmt.Sprintf("%s/%s (%s: %s)", kind, obj.GetName(), ready.Reason, ready.Message))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if len(notReady) > 0 {
		return fmt.Errorf("not Ready: %s", strings.Join(notReady, ", "))
	}
	return nil
}

// conditionsOf is a ragroute object's status conditions.
func conditionsOf(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *v1alpha1.PlatformPrompt:
		return o.Status.Conditions
	case *v1alpha1.KnowledgeStore:
		return o.Status.Conditions
	case *v1alpha1.QueryRoute:
		return o.Status.Conditions
	case *v1alpha1.RouteEvaluation:
		return o.Status.Conditions
	}
	return nil
}

// otherSampleFiles are the YAML files in dir that its kustomization.yaml
// neither is nor lists as a resource.
func otherSampleFiles(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var kustomization struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &kustomization); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	all, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range all {
		name := filepath.Base(f)
		if name != "kustomization.yaml" && !slices.Contains(kustomization.Resources, name) {
			files = append(files, f)
		}
	}
	return files, nil
}

// decodeFile reads every object of a YAML file.
func decodeFile(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return decodeObjects(data, file)
}

// decodeObjects reads every object of YAML or JSON documents; what names
// them in errors.
func decodeObjects(data []byte, what string) ([]*unstructured.Unstructured, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode %s: %w", what, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}
