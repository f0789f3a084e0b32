package security

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/expr"

	"github.com/surveyor-dev/surveyor/internal/harness"
)

const (
	// reasonEvaluationFailed is Healthy's reason when a valid rule could not be evaluated
	// (pkg/health: v1alpha1 has no constant for it yet).
	reasonEvaluationFailed = "HealthRuleEvaluationFailed"
	// celVerdictWithin bounds how long an expensive expression may take to become a
	// condition, from the Workload's creation: a reconcile or two, with a wide margin for
	// a shared machine. Without a limit these expressions run for minutes.
	celVerdictWithin = 30 * time.Second
	// celEvalWithin bounds one evaluation of an expensive expression in this process. At
	// the per-call limit an evaluation has spent 1,000,000 cost units; cel-go's cost
	// tracker takes 0.3 to 3 µs per unit on this shared 2-core machine (measured: 0.3 s for
	// the nested comprehension, 1.3 to 2.9 s for the object-driven one under load), so 10 s
	// is a generous bound. Without the limit these expressions run for minutes.
	celEvalWithin = 10 * time.Second
)

// stoppedMessage is how a message says one evaluation was stopped: by the per-call cost
// limit or by the per-call time limit, whichever came first on this machine.
var stoppedMessage = regexp.MustCompile(`: (cost limit of 1000000 exceeded by one evaluation|evaluation stopped after [0-9.]+m?s)$`)

// intList is the CEL list literal [0, 1, ..., n-1].
func intList(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// Expensive expressions: 100^4 and 500^3 steps, which would run for minutes; the
// per-call cost limit (1,000,000) stops them long before.
var (
	// nestedExpression costs 100 million iterations over lists it builds itself.
	nestedExpression = fmt.Sprintf("%[1]s.all(a, %[1]s.all(b, %[1]s.all(c, %[1]s.all(d, a + b + c + d >= 0))))", intList(100))
	// cubicExpression is cheap for a small object and costs 125 million iterations over
	// the 500 keys of the stamped ConfigMap.
	cubicExpression = "object.data.all(a, object.data.all(b, object.data.all(c, a != '')))"
	// objectKeys is how many data keys the stamped ConfigMap has.
	objectKeys = 500
)

// CEL cost limits are always on. A health rule or condition rule whose expression is too
// expensive, by itself or because of the size of the object it reads, becomes an error
// condition within seconds instead of hanging the reconcile, and the controller goes on
// to realize other Workloads.
func TestExpensiveCELIsCutOff(t *testing.T) {
	// The library the controller evaluates with stops both expressions quickly.
	bigData := map[string]any{}
	for i := range objectKeys {
		bigData[fmt.Sprintf("key-%04d", i)] = "v"
	}
	for _, text := range []string{nestedExpression, cubicExpression} {
		p, err := expr.CompileCEL(text, expr.ResultBool)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = p.EvalBool(expr.NewScope(map[string]any{"data": bigData}))
		took := time.Since(start)
		if !errors.Is(err, expr.ErrCostLimitExceeded) {
			t.Errorf("evaluating %.60s...: %v, want %v", text, err, expr.ErrCostLimitExceeded)
		}
		if took > celEvalWithin {
			t.Errorf("evaluating %.60s... took %s, want at most %s", text, took, celEvalWithin)
		}
		t.Logf("one evaluation of %.60s... stopped after %s", text, took.Round(time.Millisecond))
	}

	ns := newNamespace(t, "sec-cel")
	const name = "sec-cel"
	serviceAccount(t, ns, "stamper", "configmaps")
	data, err := json.Marshal(bigData)
	if err != nil {
		t.Fatal(err)
	}
	healthRule := func(expr string) *v1alpha1.HealthRule {
		return &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
			Healthy: v1alpha1.MatchRule{MatchCEL: []v1alpha1.CELMatch{{Expression: expr}}},
			Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
				FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.broken", Operator: v1alpha1.FieldSelectorOpExists},
			}}},
		}}
	}
	tpl := func(name string, rule *v1alpha1.HealthRule, rules []v1alpha1.ConditionRule) *v1alpha1.ClusterTemplate {
		return &v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.TemplateSpec{
				HealthyConditionRule: rule,
				ConditionRules:       rules,
				Params:               []v1alpha1.TemplateParam{{Name: "data", Default: apiextensionsv1.JSON{Raw: data}}},
				Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-cm"}, "data": "$(params.data)$"}`),
			},
		}
	}
	cases := []struct {
		name, resource, condition, reason, field string
		template                                 *v1alpha1.ClusterTemplate
	}{
		{"health rule, nested comprehension", "nested", v1alpha1.ConditionHealthy, reasonEvaluationFailed,
			"healthyConditionRule.multiMatch.healthy.matchCEL[0].expression", tpl(name+"-nested", healthRule(nestedExpression), nil)},
		{"health rule, cubic in the object", "cubic", v1alpha1.ConditionHealthy, reasonEvaluationFailed,
			"healthyConditionRule.multiMatch.healthy.matchCEL[0].expression", tpl(name+"-cubic", healthRule(cubicExpression), nil)},
		{"condition rule", "rule", "Checked", v1alpha1.ReasonConditionRulesFailed, "failed to evaluate",
			tpl(name+"-rule", nil, []v1alpha1.ConditionRule{{Condition: "Checked", Type: v1alpha1.ConditionRuleTypeCEL,
				CELExpressions: []v1alpha1.CELConditionExpression{{Expression: cubicExpression}}}})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env.CreateAll(ctx, t, tc.template)
			chain(t, tc.template.Name, nil, resource(tc.resource, v1alpha1.KindClusterTemplate, tc.template.Name))
			start := time.Now()
			wl := workload(t, ns, tc.resource, tc.template.Name, "stamper")
			var got *metav1.Condition
			waitCondition(t, wl, tc.resource, tc.condition, celVerdictWithin, func(c *metav1.Condition) bool {
				got = c
				return c.Reason == tc.reason && stoppedMessage.MatchString(c.Message)
			})
			t.Logf("%s %s %s after the workload was created: %q", tc.condition, got.Status, time.Since(start).Round(time.Millisecond), got.Message)
			if got.Status == metav1.ConditionTrue {
				t.Errorf("%s is True for an expression that could not be evaluated", tc.condition)
			}
			if !strings.Contains(got.Message, tc.field) {
				t.Errorf("message %q does not say where (%s)", got.Message, tc.field)
			}
		})
	}

	// The controller is not stuck behind them: a plain Workload is realized as usual.
	env.CreateAll(ctx, t, tpl(name+"-plain", nil, nil))
	chain(t, name+"-plain", nil, resource("plain", v1alpha1.KindClusterTemplate, name+"-plain"))
	start := time.Now()
	wl := workload(t, ns, "plain", name+"-plain", "stamper")
	waitCondition(t, wl, "", v1alpha1.ConditionReady, celVerdictWithin, is(metav1.ConditionTrue, v1alpha1.ReasonReady))
	t.Logf("a plain workload was Ready %s after its creation", time.Since(start).Round(time.Millisecond))
}
