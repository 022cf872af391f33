package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlatformPromptSpec is the platform layer every route puts on top of its
// prompt: security and organisation rules, the honest "not found" wording,
// and optional answer styles per question intent.
// +kubebuilder:validation:XValidation:rule="has(self.text) != has(self.textFrom)",message="exactly one of text or textFrom must be set",reason=FieldValueInvalid
type PlatformPromptSpec struct {
	// Text of the platform layer (security and organisation rules).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Text string `json:"text,omitempty"`

	// TextFrom reads the platform layer from a ConfigMap key instead of text,
	// for prompts kept as files in Git.
	// +optional
	TextFrom *PromptSource `json:"textFrom,omitempty"`

	// NotFound is what a route answers when the knowledge holds nothing that
	// answers the question. Routes never invent an answer instead.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	NotFound string `json:"notFound"`

	// NotFoundByLanguage is the not-found wording for questions in a given
	// language, by ISO 639-1 code: en or ru, the languages a route tells
	// apart (a question at least a quarter of whose words are Cyrillic is
	// Russian). A question in a language with no wording here gets
	// notFound. The route tells the model to answer in the question's
	// language, and recognizes every wording as not found.
	// +optional
	// +kubebuilder:validation:MaxProperties=2
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['en', 'ru'])",message="notFoundByLanguage keys are the languages a route tells apart: en, ru",reason=FieldValueInvalid
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(self[k].trim()) > 0 && size(self[k]) <= 2048)",message="each notFoundByLanguage wording is 1 to 2048 characters, not blank",reason=FieldValueInvalid
	NotFoundByLanguage map[string]string `json:"notFoundByLanguage,omitempty"`

	// Styles are answer-style instructions chosen by the question's intent.
	// +optional
	Styles *AnswerStyles `json:"styles,omitempty"`
}

// PromptSource says where prompt text is read from.
type PromptSource struct {
	// ConfigMapKeyRef selects the ConfigMap key holding the text.
	// +required
	ConfigMapKeyRef ConfigMapKeyRef `json:"configMapKeyRef"`
}

// AnswerStyles holds one answer-style instruction per intent.
type AnswerStyles struct {
	// Concept is used for how/why questions.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Concept string `json:"concept,omitempty"`

	// Screen is used for where-is-the-field/button/menu questions.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Screen string `json:"screen,omitempty"`
}

// PlatformPromptStatus is what the operator observed of a PlatformPrompt.
type PlatformPromptStatus struct {
	// ObservedGeneration is the spec generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Hash of the effective prompt content (text, not-found wording, styles).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Hash string `json:"hash,omitempty"`

	// Routes is how many QueryRoutes reference this prompt.
	// +optional
	Routes int32 `json:"routes,omitempty"`
}

// PlatformPrompt is the admin's platform layer of a route's prompt.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pp,categories=ragroute
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Hash",type=string,JSONPath=`.status.hash`
// +kubebuilder:printcolumn:name="Routes",type=integer,JSONPath=`.status.routes`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PlatformPrompt struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec PlatformPromptSpec `json:"spec"`
	// +optional
	Status PlatformPromptStatus `json:"status,omitempty"`
}

// PlatformPromptList is a list of PlatformPrompts.
// +kubebuilder:object:root=true
type PlatformPromptList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlatformPrompt `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PlatformPrompt{}, &PlatformPromptList{})
}
