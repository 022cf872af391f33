package localrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type objects struct {
	configMaps map[string]map[string]string
	secrets    map[string]map[string][]byte
}

func (o objects) ConfigMap(_ context.Context, ns, name string) (map[string]string, error) {
	if d, ok := o.configMaps[ns+"/"+name]; ok {
		return d, nil
	}
	return nil, errors.New("not found")
}

func (o objects) Secret(_ context.Context, ns, name string) (map[string][]byte, error) {
	if d, ok := o.secrets[ns+"/"+name]; ok {
		return d, nil
	}
	return nil, errors.New("not found")
}

// ingestPod is shaped like the operator's ingestion Job: config and a
// source from ConfigMaps, a Secret in the environment, a scratch /tmp.
func ingestPod() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "ingest",
			Args: []string{"ingest", "--config=/etc/ragroute/ingest.json"},
			Env: []corev1.EnvVar{
				{Name: "PLAIN", Value: "x"},
				{Name: "RAGROUTE_EMBEDDING_API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "embedder"}, Key: "apiKey"}}},
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "config", MountPath: "/etc/ragroute"},
				{Name: "tmp", MountPath: "/tmp"},
				{Name: "src-handbook", MountPath: "/sources/handbook"},
			},
		}},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "docs-ingest"}}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "src-handbook", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "handbook-md"}}}},
		},
	}
}

func TestPrepareRunsTheContainerAsWrittenWithLocalFolders(t *testing.T) {
	objs := objects{
		configMaps: map[string]map[string]string{
			"acme/docs-ingest": {"ingest.json": `{"sources":[{"name":"handbook","path":"/sources/handbook"},{"name":"other","path":"/sources/handbooks"}]}`},
			"acme/handbook-md": {"vpn.md": "# VPN\n\nLogs go to /tmp and /sources/handbook.\n", "expenses.md": "# Expenses\n"},
		},
		secrets: map[string]map[string][]byte{"acme/embedder": {"apiKey": []byte("s3cret")}},
	}
	root := t.TempDir()
	cmd, err := Prepare(context.Background(), objs, Pod{Meta: metav1.ObjectMeta{Namespace: "acme"}, Spec: ingestPod()}, "ingest", root)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(root, "config")
	if want := []string{"ingest", "--config=" + config + "/ingest.json"}; !slices.Equal(cmd.Args, want) {
		t.Errorf("args %q, want %q", cmd.Args, want)
	}
	data, err := os.ReadFile(filepath.Join(config, "ingest.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The mount path is mapped where it is a whole path, not inside another name.
	want := `{"sources":[{"name":"handbook","path":"` + filepath.Join(root, "src-handbook") + `"},{"name":"other","path":"/sources/handbooks"}]}`
	if string(data) != want {
		t.Errorf("config file:\n%s\nwant\n%s", data, want)
	}
	for name, content := range objs.configMaps["acme/handbook-md"] {
		// Documents are data: never rewritten, even where they name a mount path.
		if got, err := os.ReadFile(filepath.Join(root, "src-handbook", name)); err != nil || string(got) != content {
			t.Errorf("source file %s: %q, %v; want it as in the ConfigMap", name, got, err)
		}
	}
	for _, env := range []string{"PLAIN=x", "RAGROUTE_EMBEDDING_API_KEY=s3cret", "TMPDIR=" + filepath.Join(root, "tmp")} {
		if !slices.Contains(cmd.Env, env) {
			t.Errorf("env %q missing from %q", env, cmd.Env)
		}
	}
}

func TestPrepareNamesWhatCannotRunLocally(t *testing.T) {
	objs := objects{configMaps: map[string]map[string]string{"acme/docs-ingest": {"ingest.json": "{}"}}}
	cases := map[string]struct {
		edit func(*corev1.PodSpec)
		want string
	}{
		"missing ConfigMap": {func(*corev1.PodSpec) {}, `volume "src-handbook" (mounted at /sources/handbook): ConfigMap handbook-md: not found`},
		"PVC volume": {func(s *corev1.PodSpec) {
			s.Volumes[2].VolumeSource = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "docs"}}
		}, "only configMap, secret and emptyDir volumes run locally"},
		"missing secret key": {func(s *corev1.PodSpec) {
			s.Containers[0].VolumeMounts = s.Containers[0].VolumeMounts[:2]
		}, "env RAGROUTE_EMBEDDING_API_KEY: Secret embedder: not found"},
		"no such container": {func(s *corev1.PodSpec) { s.Containers[0].Name = "other" }, `pod spec has no container "ingest"`},
		"a field the downward API does not give": {func(s *corev1.PodSpec) {
			s.Containers[0].VolumeMounts = s.Containers[0].VolumeMounts[:2]
			s.Containers[0].Env = []corev1.EnvVar{{Name: "PHASE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.phase"}}}}
		}, `env PHASE: fieldRef "status.phase": not a field the downward API gives`},
		"a resource with no limit on a node that states none": {func(s *corev1.PodSpec) {
			s.Containers[0].VolumeMounts = s.Containers[0].VolumeMounts[:2]
			s.Containers[0].Env = []corev1.EnvVar{{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}}}
		}, `env MEM: resourceFieldRef "limits.memory": the container sets no limit and this node states no allocatable memory`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := ingestPod()
			tc.edit(&spec)
			_, err := Prepare(context.Background(), objs, Pod{Meta: metav1.ObjectMeta{Namespace: "acme"}, Spec: spec}, "ingest", t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestMapPathsOnlyRewritesWholeMountPaths(t *testing.T) {
	m := newPathMapper(map[string]string{"/sources": "/l/src", "/sources/handbook": "/l/hb", "/tmp": "/l/tmp"})
	cases := map[string]string{
		"/sources/handbook/a.md":      "/l/hb/a.md",
		"/sources/faq":                "/l/src/faq",
		"--dir=/tmp /tmp/x":           "--dir=/l/tmp /l/tmp/x",
		"/tmpfoo /var/tmp x/tmp":      "/tmpfoo /var/tmp x/tmp",
		`{"a":"/sources","b":"/tmp"}`: `{"a":"/l/src","b":"/l/tmp"}`,
	}
	for in, want := range cases {
		if got := m.mapPaths(in); got != want {
			t.Errorf("mapPaths(%q) = %q, want %q", in, got, want)
		}
	}
}

// The route Deployment names its config from the pod's own annotation;
// a container may read its limits and the pod's place the same way.
func TestPrepareResolvesTheDownwardAPI(t *testing.T) {
	spec := ingestPod()
	spec.ServiceAccountName = "ingest"
	spec.Containers[0].Resources = corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
	}
	field := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	res := func(name, resourceName, divisor string) corev1.EnvVar {
		ref := &corev1.ResourceFieldSelector{Resource: resourceName}
		if divisor != "" {
			ref.Divisor = resource.MustParse(divisor)
		}
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: ref}}
	}
	spec.Containers[0].Env = []corev1.EnvVar{
		field("HASH", "metadata.annotations['ragroute.io/config-hash']"),
		field("APP", "metadata.labels['app']"),
		field("NAME", "metadata.name"), field("NS", "metadata.namespace"), field("UID", "metadata.uid"),
		field("NODE", "spec.nodeName"), field("SA", "spec.serviceAccountName"), field("IP", "status.podIP"),
		res("CPU_LIMIT", "limits.cpu", ""), res("CPU_REQUEST_M", "requests.cpu", "1m"),
		res("MEM_MI", "limits.memory", "1Mi"), res("MEM_REQUEST", "requests.memory", ""),
		res("DISK", "limits.ephemeral-storage", "1Gi"),
	}
	pod := Pod{
		Meta: metav1.ObjectMeta{Namespace: "acme", Name: "docs-ingest-local", UID: "u-1",
			Labels: map[string]string{"app": "ingest"}, Annotations: map[string]string{"ragroute.io/config-hash": "abc123"}},
		Spec: spec, NodeName: "local", IP: "127.0.0.1",
		Allocatable: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("10Gi")},
	}
	objs := objects{configMaps: map[string]map[string]string{"acme/docs-ingest": {"ingest.json": "{}"}, "acme/handbook-md": {}}}
	cmd, err := Prepare(context.Background(), objs, pod, "ingest", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"HASH=abc123", "APP=ingest", "NAME=docs-ingest-local", "NS=acme", "UID=u-1", "NODE=local",
		"SA=ingest", "IP=127.0.0.1", "CPU_LIMIT=2", "CPU_REQUEST_M=250", "MEM_MI=256", "MEM_REQUEST=268435456", "DISK=10"} {
		if !slices.Contains(cmd.Env, env) {
			t.Errorf("env %q missing from %q", env, cmd.Env)
		}
	}
}
