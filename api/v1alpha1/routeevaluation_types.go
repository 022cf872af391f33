package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Evaluation scopes: what one run asks the route (`ragroute eval-route
// --scope`).
const (
	EvaluationScopeRetrieval = "retrieval"
	EvaluationScopeAnswers   = "answers"
	EvaluationScopeBoth      = "both"
)

// RouteEvaluationSpec is a question set scored against a QueryRoute, on a
// schedule and/or whenever what the route serves changes.
// +kubebuilder:validation:XValidation:rule="has(self.schedule) || (has(self.onChange) && self.onChange)",message="set schedule, onChange: true or both: an evaluation that never runs measures nothing",reason=FieldValueRequired
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || !has(self.thresholds.minGroundedRatio) || !has(self.scope) || self.scope != 'retrieval'",message="thresholds.minGroundedRatio needs scope answers or both: scope retrieval runs no turns",fieldPath=".thresholds.minGroundedRatio",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.thresholds) || (!has(self.thresholds.minRecallAt5) && !has(self.thresholds.minNDCG10)) || !has(self.scope) || self.scope != 'answers'",message="thresholds.minRecallAt5 and minNDCG10 need scope retrieval or both: scope answers runs no searches",fieldPath=".thresholds",reason=FieldValueForbidden
// +kubebuilder:validation:XValidation:rule="!has(self.calibration) || !has(self.scope) || self.scope != 'retrieval'",message="calibration needs scope answers or both: scope retrieval runs no turns, so no answerability check is scored",fieldPath=".calibration",reason=FieldValueForbidden
type RouteEvaluationSpec struct {
	// RouteRef names the QueryRoute (same namespace) the evaluation asks,
	// at its Service, http://<route>.<namespace>.svc:8080.
	// +required
	RouteRef LocalObjectRef `json:"routeRef"`

	// Questions is the ConfigMap key holding the question set, JSON lines
	// in test/eval/README.md's format (gold file and heading path per
	// question, null gold for unanswerable ones). It is mounted into the
	// run's pod; a change to it counts as a new question set, which resets
	// the regression baseline.
	// +required
	Questions ConfigMapKeyRef `json:"questions"`

	// Source is the route's source name (a KnowledgeStore ingestion
	// source) that the questions' gold files are relative to: the route
	// names fragments <source>/<path>.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Source string `json:"source"`

	// Identity is who the evaluation asks as. The route filters every
	// search by that identity's ACL: pick one whose groups see what the
	// question set's users see. What it is shown (the titles and heading
	// paths of the sources it got) lands in the results ConfigMap, which
	// anyone with the namespace's view role can read: pick one that sees
	// nothing the namespace's viewers may not.
	// +required
	Identity EvaluationIdentity `json:"identity"`

	// Scope is what a run asks: retrieval (POST /v1/search per question),
	// answers (a whole turn per question) or both.
	// +optional
	// +kubebuilder:default=retrieval
	// +kubebuilder:validation:Enum=retrieval;answers;both
	Scope string `json:"scope,omitempty"`

	// Schedule runs the evaluation on a cron schedule (five fields, e.g.
	// "0 6 * * *", in the operator's time zone: UTC in its image).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule,omitempty"`

	// OnChange runs the evaluation whenever the route's effective config
	// hash, its KnowledgeStore's index generation or the questions differ
	// from what the last run measured (a new prompt, model, floor, a
	// re-ingestion, an edited question set).
	// +optional
	OnChange bool `json:"onChange,omitempty"`

	// Thresholds are the figures' minimums; a run below one is
	// Passing=False, reason BelowThreshold.
	// +optional
	Thresholds *EvaluationThresholds `json:"thresholds,omitempty"`

	// RegressionTolerance is how far (absolute, 0 to 1) a figure may drop
	// from the previous run on the same question set before the run is
	// Passing=False, reason Regressed, with a Warning event.
	// +optional
	// +kubebuilder:default=0.02
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	RegressionTolerance *float64 `json:"regressionTolerance,omitempty"`

	// MaxConcurrent is how many questions a run keeps in flight at once.
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	MaxConcurrent int32 `json:"maxConcurrent,omitempty"`

	// Timeout bounds one run (the Job's activeDeadlineSeconds and the
	// command's --deadline). Between 1m and 6h.
	// +optional
	// +kubebuilder:default="15m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('6h')",message="timeout must be between 1m and 6h",reason=FieldValueInvalid
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Calibration sets how the route's answerability threshold is
	// calibrated from the answerable questions' scores
	// (status.lastRun.figures.answerability; scope answers or both).
	// +optional
	Calibration *EvaluationCalibration `json:"calibration,omitempty"`
}

// EvaluationCalibration is the refusal rate the answerability threshold
// is calibrated for. A new corpus has answerable questions but rarely
// unanswerable ones, so the threshold is read off the answerable ones'
// scores: the highest that refuses at most alpha of them
// (split-conformal; docs/routeevaluation-status.md).
type EvaluationCalibration struct {
	// Alpha is the share of answerable questions the recommended
	// threshold may refuse: more than 0, less than 0.5 (default 0.05).
	// The fewer questions, the lower a threshold it can promise: at
	// least ⌈1/alpha⌉ − 1 answerable questions are needed (19 at 0.05).
	// +optional
	// +kubebuilder:default=0.05
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Maximum=0.5
	// +kubebuilder:validation:ExclusiveMaximum=true
	Alpha *float64 `json:"alpha,omitempty"`
}

// EvaluationIdentity is one of: trusted-proxy headers with the proxy's
// shared secret, or a bearer token. Secrets are read only when labelled
// ragroute.io/use=true and reach the run's pod as mounted files.
// +kubebuilder:validation:XValidation:rule="has(self.trustedProxy) != has(self.tokenSecretRef)",message="set exactly one of trustedProxy or tokenSecretRef",reason=FieldValueInvalid
type EvaluationIdentity struct {
	// TrustedProxy asks as a trusted proxy would: the route's user and
	// groups headers (the names the route's spec.auth.trustedProxy sets)
	// with its shared secret.
	// +optional
	TrustedProxy *EvaluationProxyIdentity `json:"trustedProxy,omitempty"`

	// TokenSecretRef holds a bearer token the route's JWT issuer signed.
	// +optional
	TokenSecretRef *SecretKeyRef `json:"tokenSecretRef,omitempty"`
}

// EvaluationProxyIdentity is the user and groups a trusted proxy would
// assert, and the Secret key of the proxy's shared secret.
type EvaluationProxyIdentity struct {
	// User the evaluation asks as.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[^\s,]+$`
	User string `json:"user"`

	// Groups of that user.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[^\s,]+$`
	Groups []string `json:"groups,omitempty"`

	// SecretRef holds the proxy's shared secret (the route's
	// spec.auth.trustedProxy.secretRef, or a copy of it).
	// +required
	SecretRef SecretKeyRef `json:"secretRef"`
}

// EvaluationThresholds are the least each figure may be (0 to 1). A figure
// the run could not measure (no unanswerable question) misses its
// threshold: a gate that cannot be checked does not pass.
type EvaluationThresholds struct {
	// MinRecallAt5 gates recall@5 (scope retrieval or both).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinRecallAt5 *float64 `json:"minRecallAt5,omitempty"`

	// MinNDCG10 gates nDCG@10 (scope retrieval or both).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinNDCG10 *float64 `json:"minNDCG10,omitempty"`

	// MinGroundedRatio gates the answers' mean grounded ratio (scope
	// answers or both).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinGroundedRatio *float64 `json:"minGroundedRatio,omitempty"`

	// MinNotFound gates the not-found rate on unanswerable questions.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	MinNotFound *float64 `json:"minNotFound,omitempty"`
}

// EvaluationFigures are one run's figures, as `ragroute eval-route --json`
// writes them; a figure the scope does not measure is absent.
type EvaluationFigures struct {
	Questions  int32 `json:"questions"`
	Answerable int32 `json:"answerable"`
	// Errors counts questions the route failed (each scored a miss).
	// +optional
	Errors int32 `json:"errors,omitempty"`

	// +optional
	RecallAt1 *float64 `json:"recallAt1,omitempty"`
	// +optional
	RecallAt5 *float64 `json:"recallAt5,omitempty"`
	// +optional
	RecallAt10 *float64 `json:"recallAt10,omitempty"`
	// +optional
	MRR *float64 `json:"mrr,omitempty"`
	// +optional
	NDCGAt10 *float64 `json:"ndcgAt10,omitempty"`
	// +optional
	FileRecallAt5 *float64 `json:"fileRecallAt5,omitempty"`
	// +optional
	NotFoundOnUnanswerable *float64 `json:"notFoundOnUnanswerable,omitempty"`
	// +optional
	GroundedRatio *float64 `json:"groundedRatio,omitempty"`
	// +optional
	CitationPrecision *float64 `json:"citationPrecision,omitempty"`
	// +optional
	CitationRecall *float64 `json:"citationRecall,omitempty"`
	// +optional
	LatencyP50Ms float64 `json:"latencyP50Ms,omitempty"`
	// +optional
	LatencyP95Ms float64 `json:"latencyP95Ms,omitempty"`

	// Answerability is the route's answerability threshold calibrated on
	// the run's answerable questions (scope answers or both, a route
	// whose spec.answer.answerability runs a check).
	// +optional
	Answerability *EvaluationAnswerability `json:"answerability,omitempty"`
}

// EvaluationAnswerability is the answerability check's threshold as the
// run found it and as calibrated from its scores: the highest threshold
// under which at most alpha of answerable questions score (the
// ⌊alpha(n+1)⌋-th smallest of the n answerable scores), which refuses a
// new answerable question with probability at most alpha.
type EvaluationAnswerability struct {
	// Check is the route's check: coverage or model.
	Check string `json:"check"`

	// Threshold is the route's threshold now (minCoverage or
	// minProbability), as its turns reported it.
	Threshold float64 `json:"threshold"`

	// Alpha is the share of answerable questions the recommended value
	// may refuse (spec.calibration.alpha).
	Alpha float64 `json:"alpha"`

	// AnswerableScored counts the answerable questions whose turn ran
	// the check: the calibration's scores.
	AnswerableScored int32 `json:"answerableScored"`

	// UnanswerableScored counts the unanswerable questions (null gold)
	// whose turn ran the check.
	// +optional
	UnanswerableScored int32 `json:"unanswerableScored,omitempty"`

	// Unchecked counts the questions whose turn did not run the check
	// (nothing packed, a failed turn), left out.
	// +optional
	Unchecked int32 `json:"unchecked,omitempty"`

	// Recommended is the calibrated threshold; absent when too few
	// answerable questions were scored to promise alpha (Message).
	// +optional
	Recommended *float64 `json:"recommended,omitempty"`

	// ExpectedAnswerableRefused is the share of the scored answerable
	// questions below Recommended (at most alpha).
	// +optional
	ExpectedAnswerableRefused *float64 `json:"expectedAnswerableRefused,omitempty"`

	// UnanswerableRefused is the share of the scored unanswerable
	// questions below Recommended: those it would turn away.
	// +optional
	UnanswerableRefused *float64 `json:"unanswerableRefused,omitempty"`

	// Message says why nothing is recommended.
	// +optional
	Message string `json:"message,omitempty"`
}

// EvaluationRun records one run: what it measured and what it found.
type EvaluationRun struct {
	// Job is the run's Job.
	// +kubebuilder:validation:MaxLength=63
	Job string `json:"job"`

	// Trigger is what started the run.
	// +kubebuilder:validation:Enum=Schedule;OnChange;Initial
	Trigger string `json:"trigger"`

	// StartTime is when the operator created the Job.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when its pod finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// RouteConfigHash is the route's effective config hash the run asked.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	RouteConfigHash string `json:"routeConfigHash,omitempty"`

	// StoreGeneration is the index generation the route's KnowledgeStore
	// served.
	// +optional
	StoreGeneration int64 `json:"storeGeneration,omitempty"`

	// QuestionsHash identifies the question set (sha256 of the ConfigMap
	// key, 16 hex digits); runs compare for regression only on equal ones.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	QuestionsHash string `json:"questionsHash,omitempty"`

	// Result: Running, Succeeded (figures read; thresholds apart) or
	// Failed (the run could not be made, or timed out).
	// +kubebuilder:validation:Enum=Running;Succeeded;Failed
	Result string `json:"result"`

	// Message gives details: the failure, or the thresholds missed.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	Message string `json:"message,omitempty"`

	// Figures are the run's summary.
	// +optional
	Figures *EvaluationFigures `json:"figures,omitempty"`
}

// RouteEvaluationStatus is what the runs found.
type RouteEvaluationStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (the evaluation can run: route, questions and
	// identity resolve), Passing (the last finished run met its
	// thresholds and did not regress), Reconciling, Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Active is the run in progress, if any.
	// +optional
	Active *EvaluationRun `json:"active,omitempty"`

	// LastRun is the last finished run.
	// +optional
	LastRun *EvaluationRun `json:"lastRun,omitempty"`

	// PreviousRun is the finished run before LastRun: the regression
	// baseline when its question set is the same.
	// +optional
	PreviousRun *EvaluationRun `json:"previousRun,omitempty"`

	// LastScheduleTime is the last time the schedule started a run.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// ResultsConfigMap names the ConfigMap holding the last run's
	// per-question results, misses first (bounded in size): the
	// questions and the sources the identity was shown, readable with the
	// namespace's view role.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ResultsConfigMap string `json:"resultsConfigMap,omitempty"`
}

// RouteEvaluation scores a QueryRoute with a question set, on a schedule
// or when the route changes, and reports the figures and whether they pass.
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 48",message="metadata.name must be at most 48 characters: it prefixes the run's Job names"
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=re,categories=ragroute
// +kubebuilder:printcolumn:name="Route",type=string,JSONPath=`.spec.routeRef.name`
// +kubebuilder:printcolumn:name="R@5",type=number,JSONPath=`.status.lastRun.figures.recallAt5`
// +kubebuilder:printcolumn:name="nDCG",type=number,JSONPath=`.status.lastRun.figures.ndcgAt10`
// +kubebuilder:printcolumn:name="Grounded",type=number,JSONPath=`.status.lastRun.figures.groundedRatio`
// +kubebuilder:printcolumn:name="Passing",type=string,JSONPath=`.status.conditions[?(@.type=="Passing")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Passing")].reason`,priority=1
// +kubebuilder:printcolumn:name="Last run",type=date,JSONPath=`.status.lastRun.completionTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RouteEvaluation struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec RouteEvaluationSpec `json:"spec"`
	// +optional
	Status RouteEvaluationStatus `json:"status,omitempty"`
}

// RouteEvaluationList is a list of RouteEvaluations.
// +kubebuilder:object:root=true
type RouteEvaluationList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RouteEvaluation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&RouteEvaluation{}, &RouteEvaluationList{})
}
