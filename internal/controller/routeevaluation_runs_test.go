package controller

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

func TestNextRun(t *testing.T) {
	created := time.Date(2026, 12, 1, 5, 30, 0, 0, time.UTC)
	daily, err := parseSchedule("0 6 * * *")
	if err != nil {
		t.Fatal(err)
	}
	m := measured{configHash: "h1", storeGeneration: 3, questionsHash: "q"}
	last := &v1alpha1.EvaluationRun{Job: "r1", RouteConfigHash: "h1", StoreGeneration: 3, QuestionsHash: "q"}
	at := func(h, m int) time.Time { return time.Date(2026, 12, 1, h, m, 0, 0, time.UTC) }
	cases := []struct {
		name     string
		status   v1alpha1.RouteEvaluationStatus
		onChange bool
		m        measured
		now      time.Time
		trigger  string
		after    time.Duration
	}{
		{"first run at once", v1alpha1.RouteEvaluationStatus{}, false, m, at(5, 31), triggerInitial, 29 * time.Minute},
		{"none while one runs, which is looked at again soon", v1alpha1.RouteEvaluationStatus{Active: last}, true, measured{configHash: "h2"}, at(7, 0), "", activeRunRecheck},
		{"the schedule sooner than the recheck", v1alpha1.RouteEvaluationStatus{Active: last}, false, m, at(5, 59).Add(50 * time.Second), "", 10 * time.Second},
		{"unchanged: nothing", v1alpha1.RouteEvaluationStatus{LastRun: last}, true, m, at(5, 40), "", 20 * time.Minute},
		{"config hash changed", v1alpha1.RouteEvaluationStatus{LastRun: last}, true, measured{configHash: "h2", storeGeneration: 3, questionsHash: "q"}, at(5, 40), triggerOnChange, 20 * time.Minute},
		{"store generation changed", v1alpha1.RouteEvaluationStatus{LastRun: last}, true, measured{configHash: "h1", storeGeneration: 4, questionsHash: "q"}, at(5, 40), triggerOnChange, 20 * time.Minute},
		{"questions changed", v1alpha1.RouteEvaluationStatus{LastRun: last}, true, measured{configHash: "h1", storeGeneration: 3, questionsHash: "q2"}, at(5, 40), triggerOnChange, 20 * time.Minute},
		{"a change without onChange", v1alpha1.RouteEvaluationStatus{LastRun: last}, false, measured{configHash: "h2"}, at(5, 40), "", 20 * time.Minute},
		{"the schedule's time", v1alpha1.RouteEvaluationStatus{LastRun: last}, false, m, at(6, 0), triggerSchedule, 24 * time.Hour},
		{"already ran at 06:00", v1alpha1.RouteEvaluationStatus{LastRun: last, LastScheduleTime: &metav1.Time{Time: at(6, 0)}}, false, m, at(6, 5), "", 24*time.Hour - 5*time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := nextRun(&tc.status, tc.onChange, daily, tc.m, created, tc.now)
			if d.trigger != tc.trigger || d.after != tc.after {
				t.Errorf("got %q after %s, want %q after %s", d.trigger, d.after, tc.trigger, tc.after)
			}
			if (d.trigger == triggerSchedule) != !d.scheduledAt.IsZero() {
				t.Errorf("scheduledAt %s with trigger %q", d.scheduledAt, d.trigger)
			}
		})
	}
	// Without a schedule only an active run is looked at again.
	if d := nextRun(&v1alpha1.RouteEvaluationStatus{Active: last}, true, nil, m, created, at(7, 0)); d.after != activeRunRecheck {
		t.Errorf("an active run without a schedule: looked at again after %s", d.after)
	}
	if d := nextRun(&v1alpha1.RouteEvaluationStatus{LastRun: last}, true, nil, m, created, at(7, 0)); d.after != 0 {
		t.Errorf("no run and no schedule: looked at again after %s", d.after)
	}
	// Missed three days: one run, for the latest time.
	d := nextRun(&v1alpha1.RouteEvaluationStatus{LastRun: last, LastScheduleTime: &metav1.Time{Time: at(6, 0)}}, false, daily, m, created, at(6, 0).Add(72*time.Hour+time.Minute))
	if d.trigger != triggerSchedule || !d.scheduledAt.Equal(at(6, 0).Add(72*time.Hour)) {
		t.Errorf("missed runs: %+v", d)
	}
}

func TestRunHashIsStableAndMovesWithTheRun(t *testing.T) {
	status := &v1alpha1.RouteEvaluationStatus{}
	m := measured{configHash: "h1", storeGeneration: 1, questionsHash: "q"}
	d := runDecision{trigger: triggerOnChange}
	if first, again := runHash("u", status, d, m), runHash("u", status.DeepCopy(), d, m); first != again {
		t.Fatal("the same run hashes differently")
	}
	after := &v1alpha1.RouteEvaluationStatus{LastRun: &v1alpha1.EvaluationRun{Job: "r1"}}
	if runHash("u", status, d, m) == runHash("u", after, d, m) {
		t.Error("a config measured before (A, B, A) names the old Job again")
	}
}

func TestFinishRun(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	active := v1alpha1.EvaluationRun{Job: "r1", Result: runRunning}
	pod := func(code int32, message string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "eval",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: message}}}}}}
	}
	job := &batchv1.Job{}
	if _, _, done := finishRun(active, job, nil, now); done {
		t.Error("a Job without a pod is done")
	}
	run, misses, done := finishRun(active, job, pod(0, `{"summary":{"questions":7,"answerable":5,"recallAt5":0.8,"scope":"retrieval"},"misses":{"questions":1,"cut":0,"results":[{"id":"a4"}]}}`), now)
	if !done || run.Result != runSucceeded || run.Figures == nil || *run.Figures.RecallAt5 != 0.8 || run.Figures.Questions != 7 ||
		string(misses) != `{"questions":1,"cut":0,"results":[{"id":"a4"}]}` {
		t.Errorf("succeeded: %+v %s", run, misses)
	}
	run, _, done = finishRun(active, job, pod(1, "the route refused the identity (401)"), now)
	if !done || run.Result != runFailed || run.Message != "eval-route exited 1: the route refused the identity (401)" {
		t.Errorf("failed: %+v", run)
	}
	run, _, done = finishRun(active, job, pod(0, "not json"), now)
	if !done || run.Result != runFailed {
		t.Errorf("garbage: %+v", run)
	}
	deadline := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue,
		Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline"}}}}
	run, _, done = finishRun(active, deadline, nil, now)
	if !done || run.Result != runFailed || run.Message != "the Job failed (DeadlineExceeded): Job was active longer than specified deadline" {
		t.Errorf("deadline: %+v", run)
	}
	if run, _, done = finishRun(active, nil, nil, now); !done || run.Result != runFailed {
		t.Errorf("gone: %+v", run)
	}
}

func TestPodOfRunNeedsTheJobAsController(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "r1", UID: "job-uid"}}
	ended := corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "eval",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}}}
	owned := func(name string, uid types.UID, status corev1.PodStatus) corev1.Pod {
		ref := metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))
		ref.UID = uid
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{*ref}}, Status: status}
	}
	unowned := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "forged"}, Status: ended}
	otherJob := owned("other-job", "other-uid", ended)
	running, finished := owned("running", job.UID, corev1.PodStatus{}), owned("finished", job.UID, ended)
	cases := []struct {
		name string
		pods []corev1.Pod
		job  *batchv1.Job
		want string
	}{
		{"no controller: ignored", []corev1.Pod{unowned}, job, ""},
		{"another Job's UID: ignored", []corev1.Pod{otherJob}, job, ""},
		{"the Job's running pod", []corev1.Pod{unowned, running}, job, "running"},
		{"the Job's finished pod first", []corev1.Pod{finished, running, otherJob}, job, "finished"},
		{"the Job gone: none", []corev1.Pod{finished}, nil, ""},
	}
	for _, tc := range cases {
		got := ""
		if pod := podOfRun(tc.pods, tc.job); pod != nil {
			got = pod.Name
		}
		if got != tc.want {
			t.Errorf("%s: got pod %q, want %q", tc.name, got, tc.want)
		}
	}
}
