package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// maxPromptBytes bounds prompt text read from a ConfigMap, as the CRD
// schema bounds inline text.
const maxPromptBytes = 64 * 1024

// promptContent is the effective content of a PlatformPrompt.
type promptContent struct {
	Platform string `json:"platform"`
	NotFound string `json:"notFound"`
	// NotFoundByLanguage is left out of the hash's JSON when empty, so
	// prompts without it keep the hash (and their routes' pods) they had.
	NotFoundByLanguage map[string]string `json:"notFoundByLanguage,omitempty"`
	Styles             map[string]string `json:"styles,omitempty"`
}

// Hash identifies the content; it changes whenever a route's prompt would.
func (p promptContent) Hash() string {
	data, _ := json.Marshal(p) // a struct of strings always marshals
	return shortHash(data)
}

// resolvePrompt reads the effective content of a prompt, following textFrom.
func resolvePrompt(ctx context.Context, c client.Reader, prompt *v1alpha1.PlatformPrompt) (promptContent, error) {
	content := inlinePrompt(prompt)
	if from := prompt.Spec.TextFrom; from != nil {
		text, err := getConfigMapKey(ctx, c, prompt.Namespace, "spec.textFrom.configMapKeyRef", from.ConfigMapKeyRef)
		if err != nil {
			return promptContent{}, err
		}
		content.Platform = text
	}
	if err := validatePromptText(content.Platform); err != nil {
		return promptContent{}, err
	}
	return content, nil
}

// inlinePrompt is the content a prompt's spec holds itself: the text
// (unless it comes from a ConfigMap), the not-found wordings, the styles.
func inlinePrompt(prompt *v1alpha1.PlatformPrompt) promptContent {
	content := promptContent{Platform: prompt.Spec.Text, NotFound: prompt.Spec.NotFound, NotFoundByLanguage: prompt.Spec.NotFoundByLanguage}
	if s := prompt.Spec.Styles; s != nil {
		content.Styles = map[string]string{}
		if s.Concept != "" {
			content.Styles["concept"] = s.Concept
		}
		if s.Screen != "" {
			content.Styles["screen"] = s.Screen
		}
	}
	return content
}

// validatePromptText applies to ConfigMap text the rules the CRD schema
// applies to inline text.
func validatePromptText(text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return &referenceError{Reason: v1alpha1.ReasonInvalidPrompt, Message: "platform prompt text is empty"}
	case len(text) > maxPromptBytes:
		return &referenceError{Reason: v1alpha1.ReasonInvalidPrompt,
			Message: fmt.Sprintf("platform prompt text is %d bytes; the limit is %d", len(text), maxPromptBytes)}
	}
	return nil
}
