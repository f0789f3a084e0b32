package security

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/realizer"

	"github.com/surveyor-dev/surveyor/internal/digestkey"
	"github.com/surveyor-dev/surveyor/internal/harness"
)

// secretValue is what the stamped Secrets hold; neither it nor its base64 form may appear
// in a Workload's status or events.
const secretValue = "hunter2-do-not-print"

// redactedMessage is the message of every condition judged on a stamped Secret.
const redactedMessage = "message redacted: the stamped object is a Secret"

// A template stamps a Secret and reads an output from it. The output carries its digest
// but its preview is "<redacted>"; the health and condition-rule messages that would
// quote the Secret's data (a matchFields messagePath, a messageExpression, a CEL error
// about the value) are redacted, and so are the owner conditions derived from them.
// Nothing in the status or in the Workload's events holds the value.
func TestSecretDataNeverReachesStatus(t *testing.T) {
	ns := newNamespace(t, "sec-secret")
	const name = "sec-secret"
	serviceAccount(t, ns, "stamper", "secrets", "configmaps")
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	// Both rules quote the data on purpose: messagePath and messageExpression read it,
	// and int() fails with an error about it.
	rule := &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
		Healthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
			FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.token", Operator: v1alpha1.FieldSelectorOpExists},
			MessagePath:              ".data.token",
		}}},
		Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
			FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.revoked", Operator: v1alpha1.FieldSelectorOpExists},
			MessagePath:              ".data.token",
		}}},
	}}
	rules := []v1alpha1.ConditionRule{
		{Condition: "TokenPresent", Type: v1alpha1.ConditionRuleTypeCEL,
			CELExpressions:    []v1alpha1.CELConditionExpression{{Expression: "has(object.data.token)"}},
			MessageExpression: "'token is ' + object.data.token"},
		{Condition: "TokenNumeric", Type: v1alpha1.ConditionRuleTypeCEL,
			CELExpressions: []v1alpha1.CELConditionExpression{{Expression: "int(object.data.token) > 0"}}},
	}
	secretTemplate := func(name, data string) *v1alpha1.ClusterConfigTemplate {
		return &v1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterConfigTemplateSpec{
				ConfigPath: ".data.token",
				TemplateSpec: v1alpha1.TemplateSpec{
					HealthyConditionRule: rule,
					ConditionRules:       rules,
					Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
						"metadata": {"name": "$(workload.metadata.name)$-`+name+`"}, "data": `+data+`}`),
				},
			},
		}
	}
	env.CreateAll(ctx, t,
		secretTemplate(name+"-ok", `{"token": "`+encoded+`"}`),
		secretTemplate(name+"-revoked", `{"token": "`+encoded+`", "revoked": "eWVz"}`),
	)
	chain(t, name, nil,
		resource("creds", v1alpha1.KindClusterConfigTemplate, name+"-ok"),
		resource("revoked", v1alpha1.KindClusterConfigTemplate, name+"-revoked"))
	wl := workload(t, ns, "app", name, "stamper")
	got := waitCondition(t, wl, "revoked", v1alpha1.ConditionHealthy, time.Minute, is(metav1.ConditionFalse, v1alpha1.ReasonMatchedField))
	got = waitCondition(t, got, "creds", v1alpha1.ConditionHealthy, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonMatchedField))

	// The digest is keyed (DESIGN §12): not the plain SHA-256 a reader could match guesses
	// against, but the HMAC under the key the controller keeps in its own namespace.
	plainDigest := yamlDigest(t, encoded)
	wantDigest := keyedDigest(t, encoded)
	if wantDigest == plainDigest {
		t.Fatal("the keyed digest is the plain one")
	}
	for _, res := range []string{"creds", "revoked"} {
		var rs *v1alpha1.ResourceStatus
		for i := range got.Status.Resources {
			if got.Status.Resources[i].Name == res {
				rs = &got.Status.Resources[i]
			}
		}
		if rs == nil || len(rs.Outputs) != 1 {
			t.Fatalf("resource %s: status %+v, want one output", res, rs)
		}
		out := rs.Outputs[0]
		if out.Name != "config" || out.Preview != "<redacted>" || out.Digest != wantDigest {
			t.Errorf("resource %s output = {name %q, preview %q, digest %q}, want {config, <redacted>, %s}", res, out.Name, out.Preview, out.Digest, wantDigest)
		}
		if out.Digest == plainDigest {
			t.Errorf("resource %s output digest %s is the plain SHA-256 of the Secret's value", res, out.Digest)
		}
		for _, ct := range []string{v1alpha1.ConditionHealthy, "TokenPresent", "TokenNumeric"} {
			c := findCondition(got, res, ct)
			if c == nil || c.Message != redactedMessage {
				t.Errorf("resource %s condition %s = %+v, want the message %q", res, ct, c, redactedMessage)
			}
		}
	}
	// The owner conditions derived from the unhealthy Secret quote its (redacted) message.
	for _, ct := range []string{v1alpha1.ConditionResourcesHealthy, v1alpha1.ConditionReady} {
		c := findCondition(got, "", ct)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, redactedMessage) {
			t.Errorf("owner condition %s = %+v, want False quoting %q", ct, c, redactedMessage)
		}
	}
	assertNoSecret(t, got)
	for _, leak := range []string{plainDigest, strings.TrimPrefix(plainDigest, "sha256:")} {
		if strings.Contains(env.Log.String(), leak) {
			t.Errorf("the controller's log holds the plain digest %s", leak)
		}
	}

	// A restart: a second controller, started as a restarted one would be (it reads the key
	// at start), reconciles every Workload from scratch and writes nothing to this one: its
	// digests are the same.
	before := got.ResourceVersion
	reconciled := env.ReconcilesOf("workload", client.ObjectKeyFromObject(wl)).Total()
	restartController(t)
	env.Eventually(ctx, t, time.Minute, func() (bool, string) {
		n := env.ReconcilesOf("workload", client.ObjectKeyFromObject(wl)).Total()
		return n > reconciled, "the restarted controller has not reconciled the workload yet"
	})
	env.Consistently(ctx, t, 3*time.Second, 500*time.Millisecond, func() (bool, string) {
		now := &v1alpha1.Workload{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(wl), now); err != nil {
			return false, err.Error()
		}
		return now.ResourceVersion == before, fmt.Sprintf("the restarted controller wrote the workload: %+v", now.Status.Resources)
	})
}

// keyedDigest is the digest of a Secret-derived output value: "hmac-sha256:" and the
// HMAC-SHA256 of its YAML under the key in the controller's Secret surveyor-digest-key.
func keyedDigest(t *testing.T, v any) string {
	t.Helper()
	secret := &corev1.Secret{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: harness.ControllerNamespace, Name: digestkey.Secret}, secret); err != nil {
		t.Fatalf("the controller's digest key: %v", err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(4)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, secret.Data["key"])
	mac.Write(buf.Bytes())
	return "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil))
}

// restartController starts a second in-process controller for the rest of the test, as
// the controller's ServiceAccount, as a restarted one starts: reading the digest key and
// listing every owner. It reconciles alongside the suite's; its reconciles are counted
// with the suite's (Env.ReconcilesOf).
func restartController(t *testing.T) {
	t.Helper()
	cfg := controllerConfig(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: env.Scheme, Cache: realizer.CacheOptions(nil),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// The suite's controller has the same controllers' names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	if err := realizer.Setup(run, mgr, realizer.Options{DigestKeyNamespace: harness.ControllerNamespace}); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		_ = mgr.Start(run)
	}()
}

// A value read from a Secret and put into a field the API server validates (a label value:
// base64's "=" is not allowed there) makes the API server reject the object with a message
// quoting the value. The condition carries the rejection with the value redacted, and
// neither status, events nor the controller's log holds it.
func TestSecretInRejectionIsRedacted(t *testing.T) {
	ns := newNamespace(t, "sec-reject")
	const name = "sec-reject"
	serviceAccount(t, ns, "stamper", "secrets", "configmaps")
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	env.CreateAll(ctx, t,
		secretOutputTemplate(t, name+"-secret", encoded),
		&v1alpha1.ClusterTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-label"},
			Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": {"name": "$(workload.metadata.name)$-label", "labels": {"token": "$(config)$"}}}`)},
		},
	)
	consumer := resource("label", v1alpha1.KindClusterTemplate, name+"-label")
	consumer.Configs = []v1alpha1.ResourceReference{{Name: "creds", Resource: "creds"}}
	chain(t, name, nil, resource("creds", v1alpha1.KindClusterConfigTemplate, name+"-secret"), consumer)
	wl := workload(t, ns, "app", name, "stamper")
	got := waitCondition(t, wl, "label", v1alpha1.ConditionResourceSubmitted, time.Minute,
		is(metav1.ConditionFalse, v1alpha1.ReasonTemplateRejectedByAPIServer))
	c := findCondition(got, "label", v1alpha1.ConditionResourceSubmitted)
	t.Logf("ResourceSubmitted: %s", c.Message)
	// The API server did quote the label's value: the redaction took it out.
	if !strings.Contains(c.Message, "Invalid value") || !strings.Contains(c.Message, "<redacted>") {
		t.Errorf("message %q, want the API server's rejection with the value redacted", c.Message)
	}
	assertNoSecret(t, got)
	for _, leak := range []string{secretValue, encoded} {
		if strings.Contains(env.Log.String(), leak) {
			t.Errorf("the controller's log holds %q", leak)
		}
	}
}

// assertNoSecret fails if the Workload's status or any event in its namespace holds
// secretValue, plainly or base64-encoded.
func assertNoSecret(t *testing.T, wl *v1alpha1.Workload) {
	t.Helper()
	status, err := json.Marshal(wl.Status)
	if err != nil {
		t.Fatal(err)
	}
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(wl.Namespace)); err != nil {
		t.Fatal(err)
	}
	var messages []string
	for _, e := range events.Items {
		messages = append(messages, e.Reason+": "+e.Message)
	}
	for _, leak := range []string{secretValue, base64.StdEncoding.EncodeToString([]byte(secretValue))} {
		if bytes.Contains(status, []byte(leak)) {
			t.Errorf("the workload's status holds %q:\n%s", leak, status)
		}
		for _, m := range messages {
			if strings.Contains(m, leak) {
				t.Errorf("an event holds %q: %s", leak, m)
			}
		}
	}
}

// yamlDigest is DESIGN §2's digest of an output value: sha256 of its YAML.
func yamlDigest(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(4)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The same rules on a ConfigMap holding the same data do quote it: the redaction above
// is what keeps the Secret's data out, not the rules.
func TestSecretRedactionControl(t *testing.T) {
	ns := newNamespace(t, "sec-secret-control")
	const name = "sec-secret-control"
	serviceAccount(t, ns, "stamper", "configmaps")
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	env.CreateAll(ctx, t, &v1alpha1.ClusterConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterConfigTemplateSpec{
			ConfigPath: ".data.token",
			TemplateSpec: v1alpha1.TemplateSpec{
				HealthyConditionRule: &v1alpha1.HealthRule{MultiMatch: &v1alpha1.MultiMatchRule{
					Healthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
						FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.token", Operator: v1alpha1.FieldSelectorOpExists},
						MessagePath:              ".data.token",
					}}},
					Unhealthy: v1alpha1.MatchRule{MatchFields: []v1alpha1.HealthMatchFieldSelectorRequirement{{
						FieldSelectorRequirement: v1alpha1.FieldSelectorRequirement{Key: ".data.revoked", Operator: v1alpha1.FieldSelectorOpExists},
					}}},
				}},
				Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-cm"}, "data": {"token": "`+encoded+`"}}`),
			},
		},
	})
	chain(t, name, nil, resource("plain", v1alpha1.KindClusterConfigTemplate, name))
	wl := workload(t, ns, "app", name, "stamper")
	got := waitCondition(t, wl, "plain", v1alpha1.ConditionHealthy, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonMatchedField))
	if c := findCondition(got, "plain", v1alpha1.ConditionHealthy); !strings.Contains(c.Message, encoded) {
		t.Errorf("Healthy message of a ConfigMap %q does not quote its data; the Secret test proves nothing", c.Message)
	}
	if out := got.Status.Resources[0].Outputs; len(out) != 1 || !strings.Contains(out[0].Preview, encoded) {
		t.Errorf("outputs of a ConfigMap %+v do not preview its data", out)
	}
}

// A value read from a Secret stays secret when a later resource consumes it: here a
// ConfigMap template copies the Secret's output ($(config)$) and declares it as its own
// output, so its preview would show the Secret's data. Pass-through resources already
// carry the Secret's redaction forward; a stamped consumer must too.
func TestSecretDerivedOutputsAreRedacted(t *testing.T) {
	ns := newNamespace(t, "sec-derived")
	const name = "sec-derived"
	serviceAccount(t, ns, "stamper", "secrets", "configmaps")
	encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
	env.CreateAll(ctx, t,
		secretOutputTemplate(t, name+"-secret", encoded),
		&v1alpha1.ClusterConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-copy"},
			Spec: v1alpha1.ClusterConfigTemplateSpec{ConfigPath: ".data.copied", TemplateSpec: v1alpha1.TemplateSpec{
				Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": {"name": "$(workload.metadata.name)$-copy"}, "data": {"copied": "$(config)$"}}`)}},
		},
	)
	consumer := resource("copy", v1alpha1.KindClusterConfigTemplate, name+"-copy")
	consumer.Configs = []v1alpha1.ResourceReference{{Name: "creds", Resource: "creds"}}
	chain(t, name, nil, resource("creds", v1alpha1.KindClusterConfigTemplate, name+"-secret"), consumer)
	wl := workload(t, ns, "app", name, "stamper")
	got := waitCondition(t, wl, "", v1alpha1.ConditionReady, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonReady))
	for _, r := range got.Status.Resources {
		for _, o := range r.Outputs {
			t.Logf("resource %s output %s: preview %q digest %s", r.Name, o.Name, o.Preview, o.Digest)
		}
	}
	assertNoSecret(t, got)
}

// A Secret stamped with stringData (write-only: the API server folds it into data) is
// applied once; reconciles forced afterwards write nothing (DESIGN §3.5: no write when
// the live object already holds what the stamp sets).
func TestSecretFromStringDataIsNotReapplied(t *testing.T) {
	ns := newNamespace(t, "sec-stringdata")
	const name = "sec-stringdata"
	serviceAccount(t, ns, "stamper", "secrets")
	env.CreateAll(ctx, t, &v1alpha1.ClusterTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.TemplateSpec{Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "Secret",
			"metadata": {"name": "$(workload.metadata.name)$-secret"}, "stringData": {"token": "`+secretValue+`"}}`)},
	})
	chain(t, name, nil, resource("creds", v1alpha1.KindClusterTemplate, name))
	wl := workload(t, ns, "app", name, "stamper")
	waitCondition(t, wl, "", v1alpha1.ConditionReady, time.Minute, is(metav1.ConditionTrue, v1alpha1.ReasonReady))

	before := applyCount(t, "secrets")
	forced := env.ForceReconciles(ctx, t, name, client.ObjectKeyFromObject(wl), 5)
	if n := applyCount(t, "secrets") - before; n != 0 {
		t.Errorf("%.0f applies of the stringData Secret during %d forced reconciles of a converged workload, want 0", n, forced)
	}
}

// applyCount is the API server's count of server-side applies to resource.
func applyCount(t *testing.T, resource string) float64 {
	t.Helper()
	return env.APIServerMetrics(t).Sum("apiserver_request_total", map[string]string{"verb": "APPLY", "resource": resource})
}

// secretOutputTemplate is a ClusterConfigTemplate named name that stamps a Secret whose
// token is encoded (base64) and outputs that token as its config.
func secretOutputTemplate(t *testing.T, name, encoded string) *v1alpha1.ClusterConfigTemplate {
	t.Helper()
	return &v1alpha1.ClusterConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterConfigTemplateSpec{ConfigPath: ".data.token", TemplateSpec: v1alpha1.TemplateSpec{
			Template: harness.RawTemplate(t, `{"apiVersion": "v1", "kind": "Secret",
				"metadata": {"name": "$(workload.metadata.name)$-secret"}, "data": {"token": "`+encoded+`"}}`)}},
	}
}

// controllerConfig is a client config with the controller's own ServiceAccount, so that
// what it may do is what its generated role grants.
func controllerConfig(t *testing.T) *rest.Config {
	t.Helper()
	kubeconfig, err := env.Cluster.ServiceAccountKubeconfig(ctx, harness.ControllerNamespace, harness.ControllerAccount)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
