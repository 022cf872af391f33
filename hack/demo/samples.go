package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// samples are the names of what applySamples created.
type samples struct {
	store, route string
	// evaluation is the sample RouteEvaluation, "" when there is none;
	// evalSource its spec.source.
	evaluation   string
	evalSource   string
	userHeader   string
	groupsHeader string
	// proxy is the shared secret the demo sends as the route's proxy.
	proxy proxySecret
}

// proxySecret is the Secret a trusted-proxy route reads its shared secret
// from, and the header that carries it.
type proxySecret struct {
	name, key, header, value string
}

// applySamples renders config/samples with kubectl's kustomize and creates
// every object in the demo namespace; only the endpoints that name
// in-cluster services are replaced by the local ones, and each replacement
// is printed.
func (d *demo) applySamples(ctx context.Context) error {
	objs, err := d.kustomize(ctx, filepath.Join("config", "samples"))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		obj.SetNamespace(namespace)
		if err := d.localise(obj); err != nil {
			return err
		}
		if obj.GetKind() == "QueryRoute" {
			if err := d.createProxySecret(ctx); err != nil {
				return err
			}
			if err := d.createRedisSecret(ctx); err != nil {
				return err
			}
		}
		if err := d.admin.Create(ctx, obj); err != nil {
			return fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		fmt.Printf("    created %s/%s\n", obj.GetKind(), obj.GetName())
	}
	if d.applied.store == "" || d.applied.route == "" {
		return errors.New("config/samples holds no KnowledgeStore or no QueryRoute")
	}
	return nil
}

// kustomize renders the kustomization in dir (relative to the
// repository) with kubectl's kustomize, as `kubectl apply -k` would.
func (d *demo) kustomize(ctx context.Context, dir string) ([]*unstructured.Unstructured, error) {
	kubectl := filepath.Join(d.cfg.assets, "kubectl")
	if _, err := exec.LookPath(kubectl); err != nil {
		if kubectl, err = exec.LookPath("kubectl"); err != nil {
			return nil, errors.New("kubectl is in neither the test bed nor PATH")
		}
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kubectl, "kustomize", filepath.Join(d.cfg.root, dir))
	cmd.Stderr = &stderr
	rendered, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w: %s", dir, err, stderr.String())
	}
	return decodeObjects(rendered, dir)
}

// localise points a sample's service endpoints at this machine.
func (d *demo) localise(obj *unstructured.Unstructured) error {
	switch obj.GetKind() {
	case "KnowledgeStore":
		d.applied.store = obj.GetName()
		if err := replace(obj, d.milvusURI, "spec", "milvus", "uri"); err != nil {
			return err
		}
		return replace(obj, d.embedURL, "spec", "embedding", "baseURL")
	case "RouteEvaluation":
		d.applied.evaluation = obj.GetName()
		d.applied.evalSource, _, _ = unstructured.NestedString(obj.Object, "spec", "source")
		if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "thresholds", "minNotFound"); found && d.cfg.scripted {
			// Hashed bags of words find the handbook's common words in the
			// sample's unanswerable question: telling it apart is a real
			// embedder's and cross-encoder's task, which make demo checks.
			unstructured.RemoveNestedField(obj.Object, "spec", "thresholds", "minNotFound")
			fmt.Printf("    %s/%s spec.thresholds.minNotFound: removed (DEMO_MODELS=scripted: word-hashing models cannot tell an unanswerable question)\n",
				obj.GetKind(), obj.GetName())
		}
	case "QueryRoute":
		d.applied.route = obj.GetName()
		d.applied.userHeader, _, _ = unstructured.NestedString(obj.Object, "spec", "auth", "trustedProxy", "userHeader")
		d.applied.groupsHeader, _, _ = unstructured.NestedString(obj.Object, "spec", "auth", "trustedProxy", "groupsHeader")
		if d.applied.userHeader == "" {
			return errors.New("the sample QueryRoute must use spec.auth.trustedProxy for the demo to ask as two users")
		}
		proxy := proxySecret{header: v1alpha1.DefaultProxySecretHeader}
		proxy.name, _, _ = unstructured.NestedString(obj.Object, "spec", "auth", "trustedProxy", "secretRef", "name")
		proxy.key, _, _ = unstructured.NestedString(obj.Object, "spec", "auth", "trustedProxy", "secretRef", "key")
		if h, _, _ := unstructured.NestedString(obj.Object, "spec", "auth", "trustedProxy", "secretHeader"); h != "" {
			proxy.header = h
		}
		if proxy.name != "" {
			value := make([]byte, 32)
			if _, err := rand.Read(value); err != nil {
				return fmt.Errorf("proxy secret: %w", err)
			}
			proxy.value = hex.EncodeToString(value)
		}
		d.applied.proxy = proxy
		if err := d.localiseRoute(obj); err != nil {
			return err
		}
		overrides := []struct {
			value string
			field []string
		}{{d.cfg.mode, []string{"spec", "mode"}}, {d.cfg.answerMode, []string{"spec", "answer", "mode"}},
			{d.cfg.grounding, []string{"spec", "answer", "grounding", "policy"}}}
		for _, o := range overrides {
			if o.value == "" {
				continue
			}
			if err := replace(obj, o.value, o.field...); err != nil {
				return err
			}
		}
		return d.useRedis(obj)
	}
	return nil
}

// localiseRoute points a QueryRoute's model (when it names one) and
// cross-encoder (likewise) at this machine's.
func (d *demo) localiseRoute(obj *unstructured.Unstructured) error {
	if _, found, _ := unstructured.NestedMap(obj.Object, "spec", "model"); found {
		if err := replace(obj, cmp.Or(d.cfg.chatModel, d.cfg.chat.model), "spec", "model", "name"); err != nil {
			return err
		}
		if err := replace(obj, d.chatURL, "spec", "model", "baseURL"); err != nil {
			return err
		}
	}
	if _, found, _ := unstructured.NestedString(obj.Object, "spec", "rerank", "crossEncoder", "baseURL"); found {
		return replace(obj, d.rerankURL, "spec", "rerank", "crossEncoder", "baseURL")
	}
	return nil
}

// createProxySecret creates the Secret the sample route's proxy secret
// comes from (an admin creates it with kubectl), with a random value the
// demo then sends as the proxy would.
func (d *demo) createProxySecret(ctx context.Context) error {
	p := d.applied.proxy
	if p.name == "" {
		return nil
	}
	// The operator reads only Secrets labelled for it.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: p.name,
		Labels: map[string]string{"ragroute.io/use": "true"}},
		StringData: map[string]string{p.key: p.value}}
	if err := d.admin.Create(ctx, secret); err != nil {
		return fmt.Errorf("create Secret %s (the route's proxy secret): %w", p.name, err)
	}
	fmt.Printf("    created Secret/%s (the shared secret the demo sends in %s, as the proxy)\n", p.name, p.header)
	return nil
}

func replace(obj *unstructured.Unstructured, value string, fields ...string) error {
	old, _, _ := unstructured.NestedString(obj.Object, fields...)
	if err := unstructured.SetNestedField(obj.Object, value, fields...); err != nil {
		return fmt.Errorf("%s %s: set %v: %w", obj.GetKind(), obj.GetName(), fields, err)
	}
	fmt.Printf("    %s/%s %s: %s → %s\n", obj.GetKind(), obj.GetName(), strings.Join(fields, "."), old, value)
	return nil
}
