package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/eval/live"
)

const evalQuestions = `{"id":"a1","question":"How do I prune?","gold":[{"file":"a.md","heading_path":["A"]}]}
`

// evaluationWorld creates a serving route (routeWorld: JWT auth), a
// question set, the token Secret (labelled or not) and an evaluation.
func (s *suite) evaluationWorld(t *testing.T, ns string, labelled bool) *v1alpha1.RouteEvaluation {
	t.Helper()
	s.routeWorld(t, ns)
	token := newSecret(ns, "eval-jwt", "token", "eyJ.fake.jwt")
	if !labelled {
		token.Labels = nil
	}
	evaluation := &v1alpha1.RouteEvaluation{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "support-eval"},
		Spec: v1alpha1.RouteEvaluationSpec{
			RouteRef:    v1alpha1.LocalObjectRef{Name: "support"},
			Questions:   v1alpha1.ConfigMapKeyRef{Name: "questions", Key: "questions.jsonl"},
			Source:      "handbook",
			Identity:    v1alpha1.EvaluationIdentity{TokenSecretRef: &v1alpha1.SecretKeyRef{Name: "eval-jwt", Key: "token"}},
			Scope:       v1alpha1.EvaluationScopeBoth,
			OnChange:    true,
			Thresholds:  &v1alpha1.EvaluationThresholds{MinRecallAt5: ptr.To(0.8)},
			Calibration: &v1alpha1.EvaluationCalibration{Alpha: ptr.To(0.1)},
		},
	}
	s.create(t, token,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "questions"}, Data: map[string]string{"questions.jsonl": evalQuestions}},
		evaluation)
	return evaluation
}

func (s *suite) getEvaluation(t *testing.T, ns, name string) *v1alpha1.RouteEvaluation {
	t.Helper()
	e := &v1alpha1.RouteEvaluation{}
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, e); err != nil {
		t.Fatalf("get evaluation %s: %v", name, err)
	}
	return e
}

// waitEvaluation waits until check passes on the evaluation.
func (s *suite) waitEvaluation(t *testing.T, ns, name, what string, check func(*v1alpha1.RouteEvaluation) error) *v1alpha1.RouteEvaluation {
	t.Helper()
	var e *v1alpha1.RouteEvaluation
	eventually(t, waitFor, what, func() error {
		e = s.getEvaluation(t, ns, name)
		return check(e)
	})
	return e
}

// activeRun waits for a run other than skip and returns its Job.
func (s *suite) activeRun(t *testing.T, ns, name, skip string) (*v1alpha1.EvaluationRun, *batchv1.Job) {
	t.Helper()
	e := s.waitEvaluation(t, ns, name, "a run other than "+skip, func(e *v1alpha1.RouteEvaluation) error {
		if e.Status.Active == nil || e.Status.Active.Job == skip {
			return fmt.Errorf("active %+v", e.Status.Active)
		}
		return nil
	})
	job := &batchv1.Job{}
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: e.Status.Active.Job}, job); err != nil {
		t.Fatalf("the active run's Job: %v", err)
	}
	return e.Status.Active, job
}

// finishPod plays the Job controller and the kubelet: a pod of job (its
// controlling owner) whose eval container ended with exitCode and the
// termination message.
func (s *suite) finishPod(t *testing.T, job *batchv1.Job, exitCode int32, message string) {
	t.Helper()
	s.endPod(t, job, job.Name+"-pod", metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job")), exitCode, message)
}

// endPod creates a pod named name with job's template (labels included)
// and controller (nil: none) whose eval container ended with exitCode and
// the termination message.
func (s *suite) endPod(t *testing.T, job *batchv1.Job, name string, controller *metav1.OwnerReference, exitCode int32, message string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: name, Labels: job.Spec.Template.Labels},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
	if controller != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*controller}
	}
	s.create(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "eval", Image: job.Spec.Template.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Message: message,
			FinishedAt: metav1.NewTime(time.Now().Truncate(time.Second))}}}}}
	if err := s.client.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("finish pod: %v", err)
	}
}

func report(recall5, ndcg float64) string {
	return fmt.Sprintf(`{"summary":{"questions":1,"answerable":1,"recallAt5":%g,"ndcgAt10":%g,"latencyP50Ms":3,"scope":"retrieval"},`+
		`"misses":{"questions":1,"cut":0,"results":[{"id":"a1","question":"How do I prune?","answerable":true,"miss":true,"hitRank":0,"topSources":[],"notFound":false}]}}`, recall5, ndcg)
}

// calibratedReport is a passing run's termination message as eval-route
// writes it (live.EncodeTermination), with the answerability check's
// calibration: recall@5 0.9, nDCG@10 0.8, miss a1.
func calibratedReport(t *testing.T) string {
	t.Helper()
	report := live.Report{
		Summary: live.Summary{Questions: 1, Answerable: 1, RecallAt5: ptr.To(0.9), NDCGAt10: ptr.To(0.8), LatencyP50Ms: 3, Scope: live.ScopeBoth,
			Answerability: &eval.Calibration{Check: "coverage", Threshold: 0.5, Alpha: 0.1, AnswerableScored: 40, UnanswerableScored: 12, Unchecked: 1,
				Recommended: ptr.To(0.4), ExpectedAnswerableRefused: ptr.To(0.075), UnanswerableRefused: ptr.To(0.5)}},
		Results: []live.Result{{ID: "a1", Question: "How do I prune?", Answerable: true, Miss: true, TopSources: []string{}}},
	}
	data, err := live.EncodeTermination(report, live.TerminationMessageMax)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func (s *suite) waitPassing(t *testing.T, ns, name string, status metav1.ConditionStatus, reason, job string) *v1alpha1.RouteEvaluation {
	t.Helper()
	return s.waitEvaluation(t, ns, name, fmt.Sprintf("Passing=%s/%s after %s", status, reason, job), func(e *v1alpha1.RouteEvaluation) error {
		c := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionPassing)
		if e.Status.LastRun == nil || e.Status.LastRun.Job != job || c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("lastRun %+v, conditions %+v", e.Status.LastRun, e.Status.Conditions)
		}
		return nil
	})
}

// changeRoute changes the route's effective config and waits for its new hash.
func (s *suite) changeRoute(t *testing.T, ns string, maxTokens int32) string {
	t.Helper()
	route := s.getRoute(t, ns, "support")
	before := route.Status.ConfigHash
	route.Spec.Model.MaxTokens = maxTokens
	if err := s.client.Update(context.Background(), route); err != nil {
		t.Fatal(err)
	}
	var hash string
	eventually(t, waitFor, "a new config hash", func() error {
		hash = s.getRoute(t, ns, "support").Status.ConfigHash
		if hash == before {
			return fmt.Errorf("still %s", hash)
		}
		return nil
	})
	// The new config rolls out; the evaluation waits for it to serve.
	eventually(t, waitFor, "the Deployment's new template", func() error {
		d := s.deployment(t, ns, "support")
		if d.Status.ObservedGeneration == d.Generation {
			return fmt.Errorf("generation %d already observed", d.Generation)
		}
		return nil
	})
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	return hash
}

// checkHealth: kstatus (Flux, kubectl wait) and Argo CD's health check
// (config/argocd) read the evaluation as want.
func (s *suite) checkHealth(t *testing.T, e *v1alpha1.RouteEvaluation, wantKstatus status.Status, wantArgo string) {
	t.Helper()
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(e)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := status.Compute(&unstructured.Unstructured{Object: fields}); err != nil || res.Status != wantKstatus {
		t.Errorf("kstatus %v (%v), want %s", res, err, wantKstatus)
	}
	if got, message := argoHealth(t, argoHealthScripts(t)["RouteEvaluation"], fields); got != wantArgo || message == "" {
		t.Errorf("Argo CD health %s %q, want %s", got, message, wantArgo)
	}
}

// TestRouteEvaluationRuns: the first run starts at once as a Job; its
// pod's report lands in status (pass), a config change starts the next
// (onChange) which misses a threshold, and a third regresses with an
// event; a change that leaves the config hash starts nothing.
func TestRouteEvaluationRuns(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.evaluationWorld(t, ns, true)
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonNoReadyReplicas)
	s.waitEvaluation(t, ns, "support-eval", "Ready=False/QueryRouteNotReady before the route serves", func(e *v1alpha1.RouteEvaluation) error {
		if c := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionReady); c == nil || c.Reason != v1alpha1.ReasonQueryRouteNotReady || e.Status.Active != nil {
			return fmt.Errorf("status %+v", e.Status)
		}
		return nil
	})
	s.checkHealth(t, s.getEvaluation(t, ns, "support-eval"), status.InProgressStatus, "Progressing")
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	route := s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)

	first, job := s.activeRun(t, ns, "support-eval", "")
	if first.Trigger != triggerInitial || first.RouteConfigHash != route.Status.ConfigHash || first.QuestionsHash != questionsHash(evalQuestions) {
		t.Errorf("first run: %+v (route hash %s)", first, route.Status.ConfigHash)
	}
	args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--route=http://support."+ns+".svc:8080") || !strings.Contains(args, "--token-file=") ||
		!strings.Contains(args, "--scope=both") || !strings.Contains(args, "--calibration-alpha=0.1") ||
		job.Spec.Template.Spec.Containers[0].Image != testRouteImage || len(job.Spec.Template.Spec.ImagePullSecrets) != 1 {
		t.Errorf("job: %s %+v", args, job.Spec.Template.Spec)
	}

	s.finishPod(t, job, 0, calibratedReport(t))
	e := s.waitPassing(t, ns, "support-eval", metav1.ConditionTrue, v1alpha1.ReasonThresholdsMet, job.Name)
	if e.Status.LastRun.Result != runSucceeded || *e.Status.LastRun.Figures.RecallAt5 != 0.9 || e.Status.ResultsConfigMap != "support-eval-results" {
		t.Errorf("status after the first run: %+v", e.Status)
	}
	// The calibration lands in status as eval-route wrote it.
	wantCalibration := v1alpha1.EvaluationAnswerability{Check: "coverage", Threshold: 0.5, Alpha: 0.1, AnswerableScored: 40, UnanswerableScored: 12,
		Unchecked: 1, Recommended: ptr.To(0.4), ExpectedAnswerableRefused: ptr.To(0.075), UnanswerableRefused: ptr.To(0.5)}
	if got := e.Status.LastRun.Figures.Answerability; got == nil || !equality.Semantic.DeepEqual(*got, wantCalibration) {
		t.Errorf("status.lastRun.figures.answerability = %+v, want %+v", got, wantCalibration)
	}
	s.checkHealth(t, e, status.CurrentStatus, "Healthy")
	stale := e.DeepCopy()
	stale.Generation++ // not yet seen by the operator: in progress, whatever it says
	s.checkHealth(t, stale, status.InProgressStatus, "Progressing")
	results := &corev1.ConfigMap{}
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "support-eval-results"}, results); err != nil ||
		!strings.Contains(results.Data["misses.json"], `"id":"a1"`) {
		t.Errorf("results ConfigMap: %v %v", results.Data, err)
	}

	// Nothing the run measured changed: no run.
	route = s.getRoute(t, ns, "support")
	route.Labels = map[string]string{"touched": "yes"}
	if err := s.client.Update(context.Background(), route); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if e := s.getEvaluation(t, ns, "support-eval"); e.Status.Active != nil {
		t.Fatalf("a run started without a change: %+v", e.Status.Active)
	}

	hash := s.changeRoute(t, ns, 700)
	second, job2 := s.activeRun(t, ns, "support-eval", job.Name)
	if second.Trigger != triggerOnChange || second.RouteConfigHash != hash {
		t.Errorf("second run: %+v, want hash %s", second, hash)
	}
	s.finishPod(t, job2, 0, report(0.7, 0.8))
	e = s.waitPassing(t, ns, "support-eval", metav1.ConditionFalse, v1alpha1.ReasonBelowThreshold, job2.Name)
	if e.Status.PreviousRun == nil || e.Status.PreviousRun.Job != job.Name || !meta.IsStatusConditionTrue(e.Status.Conditions, v1alpha1.ConditionStalled) {
		t.Errorf("after the second run: %+v", e.Status)
	}
	s.checkHealth(t, e, status.FailedStatus, "Degraded")

	s.changeRoute(t, ns, 600)
	_, job3 := s.activeRun(t, ns, "support-eval", job2.Name)
	s.finishPod(t, job3, 0, report(0.85, 0.6))
	e = s.waitPassing(t, ns, "support-eval", metav1.ConditionFalse, v1alpha1.ReasonRegressed, job3.Name)
	if c := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionPassing); !strings.Contains(c.Message, "ndcgAt10 dropped from 0.800 to 0.600") {
		t.Errorf("Regressed says %q", c.Message)
	}
	eventually(t, waitFor, "a Regressed event", func() error {
		list := &eventsv1.EventList{}
		if err := s.client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Reason == v1alpha1.ReasonRegressed && ev.Regarding.Name == "support-eval" && ev.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("%d events, none Regressed", len(list.Items))
	})

	// A run that fails is reported as such.
	s.changeRoute(t, ns, 500)
	_, job4 := s.activeRun(t, ns, "support-eval", job3.Name)
	s.finishPod(t, job4, 1, "the route refused the identity (401 Unauthorized)")
	e = s.waitPassing(t, ns, "support-eval", metav1.ConditionFalse, v1alpha1.ReasonEvaluationFailed, job4.Name)
	if !strings.Contains(e.Status.LastRun.Message, "401") {
		t.Errorf("failed run: %+v", e.Status.LastRun)
	}
}

// TestRouteEvaluationIgnoresForgedPods: pods carrying a run's label whose
// controller is not the run's Job (none, or another object of the Job's
// name) are not read: their "report" never becomes the run's result, the
// real pod's does.
func TestRouteEvaluationIgnoresForgedPods(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.evaluationWorld(t, ns, true)
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	s.waitCondition(t, ns, "support", v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	_, job := s.activeRun(t, ns, "support-eval", "")

	s.endPod(t, job, "forged-unowned", nil, 0, report(1, 1))
	impostor := metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))
	impostor.UID = "00000000-0000-0000-0000-000000000000"
	s.endPod(t, job, "forged-other-uid", impostor, 0, report(1, 1))
	time.Sleep(2 * time.Second)
	if e := s.getEvaluation(t, ns, "support-eval"); e.Status.Active == nil || e.Status.LastRun != nil {
		t.Fatalf("a forged pod ended the run: active %+v, lastRun %+v", e.Status.Active, e.Status.LastRun)
	}

	s.finishPod(t, job, 0, report(0.9, 0.8))
	e := s.waitPassing(t, ns, "support-eval", metav1.ConditionTrue, v1alpha1.ReasonThresholdsMet, job.Name)
	if got := *e.Status.LastRun.Figures.RecallAt5; got != 0.9 {
		t.Errorf("recallAt5 %g, want the Job's pod's 0.9", got)
	}
}

// TestRouteEvaluationReadsOnlyLabelledSecrets: an unlabelled identity
// Secret blocks the evaluation (no Job), naming the label; adding the label
// starts the first run.
func TestRouteEvaluationReadsOnlyLabelledSecrets(t *testing.T) {
	s := startSuite(t)
	ns := s.namespace(t)
	s.evaluationWorld(t, ns, false)
	s.markRolledOut(t, s.deployment(t, ns, "support"))
	s.waitEvaluation(t, ns, "support-eval", "Ready=False/SecretNotLabeled", func(e *v1alpha1.RouteEvaluation) error {
		c := meta.FindStatusCondition(e.Status.Conditions, v1alpha1.ConditionReady)
		if c == nil || c.Reason != v1alpha1.ReasonSecretNotLabeled || !strings.Contains(c.Message, secretUseLabel) {
			return fmt.Errorf("conditions %+v", e.Status.Conditions)
		}
		return nil
	})
	jobs := &batchv1.JobList{}
	if err := s.client.List(context.Background(), jobs, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "ragroute-eval"}); err != nil || len(jobs.Items) != 0 {
		t.Fatalf("jobs before the label: %d %v", len(jobs.Items), err)
	}
	token := &corev1.Secret{}
	if err := s.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "eval-jwt"}, token); err != nil {
		t.Fatal(err)
	}
	token.Labels = map[string]string{secretUseLabel: secretUseValue}
	if err := s.client.Update(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	s.activeRun(t, ns, "support-eval", "")
}
