package v1alpha1_test

import (
	"encoding/json"
	"fmt"

	cartov1alpha1 "github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// A template's object survives decoding untouched, tags and all; only the namespace is surfaced.
func ExampleTemplateObject() {
	var spec cartov1alpha1.TemplateSpec
	_ = json.Unmarshal([]byte(`{"template":{"kind":"ConfigMap","data":{"url":"$(source.url)$"}}}`), &spec)
	fmt.Println(string(spec.Template.Raw))
	// Output: {"kind":"ConfigMap","data":{"url":"$(source.url)$"}}
}

// Cartographer's healthRule and Surveyor's healthyConditionRule are read through one accessor.
func ExampleTemplateSpec_EffectiveHealthRule() {
	var spec cartov1alpha1.TemplateSpec
	_ = json.Unmarshal([]byte(`{"template":{},"healthRule":{"singleConditionType":"Ready"}}`), &spec)
	fmt.Println(spec.EffectiveHealthRule().SingleConditionType)
	// Output: Ready
}

// A WellKnownCompletions rule without a condition sets Complete.
func ExampleConditionRule_ConditionType() {
	rule := cartov1alpha1.ConditionRule{Type: cartov1alpha1.ConditionRuleTypeWellKnownCompletions}
	fmt.Println(rule.ConditionType())
	// Output: Complete
}
