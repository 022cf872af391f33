package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// Triggers of a run (EvaluationRun.Trigger).
const (
	triggerInitial  = "Initial"
	triggerOnChange = "OnChange"
	triggerSchedule = "Schedule"
)

// measured is what a run measures besides the route's answers: the route's
// effective config, its store's generation, and the question set.
type measured struct {
	configHash      string
	storeGeneration int64
	questionsHash   string
}

// runDecision is whether a run is due now, why, for which scheduled
// time, and when to look again when none is.
type runDecision struct {
	trigger     string
	scheduledAt time.Time
	// after is when to look again: when the schedule next fires, and at
	// most activeRunRecheck while a run is active (0: nothing to wait on).
	after time.Duration
}

// activeRunRecheck bounds how long an active run goes unlooked-at. Its end
// is heard from its Job's and pod's events; a run marked active from a
// view that lagged its Job's end sends none, and would otherwise stay
// active until the schedule's next time.
const activeRunRecheck = 30 * time.Second

// parseSchedule parses a five-field cron schedule, as a CronJob does.
func parseSchedule(schedule string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(schedule)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", schedule, err)
	}
	return s, nil
}

// nextRun decides whether a run starts now. None while one is active,
// which is looked at again within activeRunRecheck.
// The first run starts at once (the evaluation then has figures); then
// onChange starts one when the route's config hash or its store's
// generation differs from what the last run measured, and the schedule
// one when its time since the last scheduled run (or the evaluation's
// creation) has come. A schedule missed several times runs once.
func nextRun(status *v1alpha1.RouteEvaluationStatus, onChange bool, schedule cron.Schedule,
	m measured, created, now time.Time) runDecision {
	var d runDecision
	if schedule != nil {
		since := created
		if status.LastScheduleTime != nil {
			since = status.LastScheduleTime.Time
		}
		next := schedule.Next(since)
		for !next.After(now) {
			d.scheduledAt = next
			next = schedule.Next(next)
		}
		d.after = next.Sub(now)
	}
	switch {
	case status.Active != nil:
		d.trigger, d.scheduledAt = "", time.Time{}
		if d.after == 0 || d.after > activeRunRecheck {
			d.after = activeRunRecheck
		}
	case status.LastRun == nil:
		d.trigger = triggerInitial
	case !d.scheduledAt.IsZero():
		d.trigger = triggerSchedule
	case onChange && (status.LastRun.RouteConfigHash != m.configHash || status.LastRun.StoreGeneration != m.storeGeneration ||
		status.LastRun.QuestionsHash != m.questionsHash):
		d.trigger = triggerOnChange
	}
	if d.trigger != triggerSchedule {
		d.scheduledAt = time.Time{}
	}
	return d
}

// runHash names a run after everything that makes it: the evaluation, the
// run before it (status.lastRun), what it measures and its scheduled time.
// The same decision in two reconciles gives the same Job, so a status that
// lags a reconcile never starts a run twice.
func runHash(uid types.UID, status *v1alpha1.RouteEvaluationStatus, d runDecision, m measured) string {
	last := ""
	if status.LastRun != nil {
		last = status.LastRun.Job
	}
	h := sha256.New()
	for _, part := range []string{string(uid), last, d.trigger, m.configHash,
		strconv.FormatInt(m.storeGeneration, 10), m.questionsHash, strconv.FormatInt(d.scheduledAt.Unix(), 10)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// questionsHash identifies a question set: 16 hex digits of its sha256.
func questionsHash(data string) string {
	sum := sha256.Sum256([]byte(data))
	return hex.EncodeToString(sum[:8])
}

// termination is the run's report in its pod's termination message
// (`eval-route --termination-log`): the figures and the shortened misses,
// kept as written for the results ConfigMap.
type termination struct {
	Summary v1alpha1.EvaluationFigures `json:"summary"`
	Misses  json.RawMessage            `json:"misses"`
}

// messageMax bounds what of a failed run's message lands in status.
const messageMax = 1024

// finishRun is the active run once its Job and pod tell how it ended, with
// the misses for the results ConfigMap; done is false while it runs. job
// nil: the Job is gone. pod nil: no pod reported yet.
func finishRun(active v1alpha1.EvaluationRun, job *batchv1.Job, pod *corev1.Pod, now time.Time) (run v1alpha1.EvaluationRun, misses []byte, done bool) {
	run = active
	finished := metav1.NewTime(now)
	run.CompletionTime = &finished
	if state := evalTerminated(pod); state != nil {
		if !state.FinishedAt.IsZero() {
			run.CompletionTime = &state.FinishedAt
		}
		if state.ExitCode != 0 {
			run.Result, run.Message = runFailed, cutString(fmt.Sprintf("eval-route exited %d: %s", state.ExitCode, state.Message), messageMax)
			return run, nil, true
		}
		var report termination
		if err := json.Unmarshal([]byte(state.Message), &report); err != nil {
			run.Result, run.Message = runFailed, "the run's termination message is not eval-route's report: "+cutString(err.Error(), 200)
			return run, nil, true
		}
		run.Result, run.Message, run.Figures = runSucceeded, "", &report.Summary
		return run, report.Misses, true
	}
	switch {
	case job == nil:
		run.Result, run.Message = runFailed, "the run's Job "+active.Job+" is gone"
		return run, nil, true
	case jobFailed(job) != "":
		run.Result, run.Message = runFailed, cutString(jobFailed(job), messageMax)
		return run, nil, true
	}
	return active, nil, false
}

// podOfRun is the pod whose report the run's result is: among the pods
// carrying the run's label, one the run's Job controls (by UID), a
// finished one first. The label alone is no proof: anyone who may create
// pods in the namespace can label one with a fake report. nil while none
// is reported, or when the Job is gone.
func podOfRun(pods []corev1.Pod, job *batchv1.Job) *corev1.Pod {
	if job == nil {
		return nil
	}
	var pod *corev1.Pod
	for i := range pods {
		owner := metav1.GetControllerOf(&pods[i])
		if owner == nil || owner.UID != job.UID || owner.Kind != "Job" || owner.APIVersion != batchv1.SchemeGroupVersion.String() {
			continue
		}
		if pod == nil || evalTerminated(&pods[i]) != nil {
			pod = &pods[i]
		}
	}
	return pod
}

// evalTerminated is the eval container's terminated state, nil while it runs.
func evalTerminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	if pod == nil {
		return nil
	}
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == "eval" && s.State.Terminated != nil {
			return s.State.Terminated
		}
	}
	return nil
}

// jobFailed is why Kubernetes failed the Job (its deadline), "" if it did not.
func jobFailed(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("the Job failed (%s): %s", c.Reason, c.Message)
		}
	}
	return ""
}
